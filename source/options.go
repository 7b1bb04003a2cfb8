// Package source loads event streams from CSV and JSON Lines files,
// reads live streams (standard input, a followed file, TCP producers) by
// the same typing and ordering rules, and generates SASE's stock streams
// (docs/LANGUAGE.md: Events and streams, Statements, Live streams).
package source

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sase-cep/sase/event"
)

// Options are a LOAD statement's WITH options.
type Options struct {
	TypeColumn string // column (CSV) or key (JSONL) holding the event type; "" means "type"
	TSColumn   string // column or key holding the timestamp; "" means "ts"
	// TimeUnit is the duration of one integer timestamp tick; 0 means the
	// timestamps are unit-less (RFC 3339 timestamps then count milliseconds).
	TimeUnit time.Duration
	// StopOnError ends a live stream at its first bad line (on_error =
	// 'stop'); by default a bad line is reported, counted and skipped. A
	// loaded stream always stops: nothing is partially loaded.
	StopOnError bool
}

func (o Options) typeColumn() string {
	if o.TypeColumn == "" {
		return "type"
	}
	return o.TypeColumn
}

func (o Options) tsColumn() string {
	if o.TSColumn == "" {
		return "ts"
	}
	return o.TSColumn
}

var optionKeys = []string{"on_error", "time_unit", "ts_column", "type_column"}

// ParseOptions reads LOAD's WITH (type_column = 'symbol', ts_column = 'time',
// time_unit = 'ms', on_error = 'stop'). Keys and units are case-insensitive, column names are
// not.
func ParseOptions(kv map[string]string) (Options, error) {
	opts := Options{TypeColumn: "type", TSColumn: "ts"}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic error for several bad keys
	for _, k := range keys {
		v := kv[k]
		switch strings.ToLower(k) {
		case "type_column":
			if v == "" {
				return Options{}, fmt.Errorf("LOAD option type_column must not be empty")
			}
			opts.TypeColumn = v
		case "ts_column":
			if v == "" {
				return Options{}, fmt.Errorf("LOAD option ts_column must not be empty")
			}
			opts.TSColumn = v
		case "on_error":
			switch strings.ToLower(v) {
			case "skip":
			case "stop":
				opts.StopOnError = true
			default:
				return Options{}, fmt.Errorf("on_error must be 'skip' or 'stop', got %q", v)
			}
		case "time_unit":
			u, err := parseTimeUnit(v)
			if err != nil {
				return Options{}, err
			}
			opts.TimeUnit = u
		default:
			return Options{}, fmt.Errorf("unknown LOAD option %q (valid: %s)", k, strings.Join(optionKeys, ", "))
		}
	}
	if opts.TypeColumn == opts.TSColumn {
		return Options{}, fmt.Errorf("LOAD options type_column and ts_column both name %q", opts.TypeColumn)
	}
	return opts, nil
}

// parseTimeUnit reads a time_unit value: a unit as WITHIN takes it (ms, s,
// m, h, d and their long forms), case-insensitively.
func parseTimeUnit(s string) (time.Duration, error) {
	if u, ok := event.LookupTimeUnit(s); ok {
		return u.Duration, nil
	}
	var names []string
	for _, u := range event.TimeUnits() {
		names = append(names, u.Name)
	}
	return 0, fmt.Errorf("unknown time_unit %q (valid: %s)", s, strings.Join(names, ", "))
}

// DefaultName is the stream name LOAD uses without AS: the file's base name
// without its extension, with every character that cannot appear in an
// identifier replaced by '_' ("my-data.v2.csv" is my_data_v2). Standard
// input ("-") is "stdin".
func DefaultName(path string) string {
	if path == "-" {
		return "stdin"
	}
	base := filepath.Base(path)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	var b strings.Builder
	for i, r := range base {
		switch {
		case r == '_', 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
			b.WriteRune(r)
		case '0' <= r && r <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "stream"
	}
	return b.String()
}
