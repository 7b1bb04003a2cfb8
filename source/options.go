package source

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
	// Notes, when not nil, receives what a load changed in the data
	// without failing: timestamps cut to the millisecond.
	Notes *[]string
	// Delimiter separates CSV fields (delimiter = ';'); 0 means ','.
	Delimiter rune
	// MaxLine is the longest line (record) any loader or live source
	// reads, in bytes without the newline (max_line); 0 means
	// DefaultMaxLine.
	MaxLine int
	// MaxPending bounds the bytes a live source's producers (a LISTEN's
	// connections) hold together for unfinished lines longer than their
	// read buffers (max_pending); 0 means twice max_line.
	MaxPending int64
	// SkipBad is on_error = 'skip' given: a batch LOAD then reports and
	// skips a bad line (a decreasing ts among them) instead of failing.
	SkipBad bool

	// Event time (docs/LANGUAGE.md, Event time). Slack is how far back an
	// event's ts may go without being late: ticks, or Slack×SlackUnit
	// when the slack was written with a unit.
	Slack     int64
	SlackUnit time.Duration
	Late      string // late = 'path': late input lines are appended there
	Sort      bool   // sort = true: a batch LOAD sorts the file by ts
	Clock     string // clock = 'wall' on a live stream, or ""
	Lag       time.Duration

	// Table (type = 't') loads a plain table: every row is of that type.
	// RowTS (ts_column = '') makes a row's ts its 0-based row number
	// (docs/LANGUAGE.md §10).
	Table string
	RowTS bool
}

// DefaultMaxLine is the longest line read without a max_line option: a
// line that does not fit is most likely not text, and buffering it
// whole must not exhaust memory.
const DefaultMaxLine = 256 << 20

// maxMaxLine bounds max_line: a larger line is not an event, and the
// buffer for one must fit in memory.
const maxMaxLine = 1 << 30

func (o Options) maxLine() int {
	if o.MaxLine == 0 {
		return DefaultMaxLine
	}
	return o.MaxLine
}

// maxPending is Options.MaxPending with its default.
func (o Options) maxPending() int64 {
	if o.MaxPending == 0 {
		return 2 * int64(o.maxLine())
	}
	return o.MaxPending
}

// maxMaxPending bounds max_pending: sixteen lines at max_line's bound.
const maxMaxPending = 16 << 30

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

var optionKeys = []string{"clock", "delimiter", "lag", "late", "max_line", "max_pending", "on_error", "slack", "sort", "time_unit", "ts_column", "type", "type_column"}

// ParseOptions reads LOAD's WITH (type_column = 'symbol', ts_column = 'time',
// time_unit = 'ms', on_error = 'stop', max_line = '1MB'). Keys and units
// are case-insensitive, column names are not.
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
				opts.RowTS = true // a table's rows, numbered
				continue
			}
			opts.TSColumn = v
		case "type":
			if v == "" {
				return Options{}, fmt.Errorf("LOAD option type (the type of every row of a table) must not be empty")
			}
			opts.Table = v
		case "on_error":
			switch strings.ToLower(v) {
			case "skip":
				opts.SkipBad = true
			case "stop":
				opts.StopOnError = true
			default:
				return Options{}, fmt.Errorf("on_error must be 'skip' or 'stop', got %q", v)
			}
		case "max_line":
			n, err := parseSize("max_line", v, maxMaxLine)
			if err != nil {
				return Options{}, err
			}
			opts.MaxLine = int(n)
		case "max_pending":
			n, err := parseSize("max_pending", v, maxMaxPending)
			if err != nil {
				return Options{}, err
			}
			opts.MaxPending = n
		case "delimiter":
			d, err := parseDelimiter(v)
			if err != nil {
				return Options{}, err
			}
			opts.Delimiter = d
		case "time_unit":
			u, err := parseTimeUnit(v)
			if err != nil {
				return Options{}, err
			}
			opts.TimeUnit = u
		case "slack":
			n, unit, err := parseDuration(v)
			if err != nil {
				return Options{}, fmt.Errorf("slack: %w", err)
			}
			opts.Slack, opts.SlackUnit = n, unit
		case "lag":
			n, unit, err := parseDuration(v)
			if err != nil || unit == 0 && n != 0 {
				return Options{}, fmt.Errorf("lag must be a duration such as '2 s', got %q", v)
			}
			opts.Lag = time.Duration(n) * unit
		case "late":
			if v == "" {
				return Options{}, fmt.Errorf("late must name a file")
			}
			opts.Late = v
		case "sort":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return Options{}, fmt.Errorf("sort must be true or false, got %q", v)
			}
			opts.Sort = b
		case "clock":
			if !strings.EqualFold(v, "wall") {
				return Options{}, fmt.Errorf("clock must be 'wall' (the machine's clock), got %q", v)
			}
			opts.Clock = "wall"
		default:
			return Options{}, fmt.Errorf("unknown LOAD option %q (valid: %s)", k, strings.Join(optionKeys, ", "))
		}
	}
	if opts.Table != "" && hasKey(kv, "type_column") {
		return Options{}, fmt.Errorf("LOAD options type and type_column exclude each other: type gives every row its type")
	}
	if opts.TypeColumn == opts.TSColumn {
		return Options{}, fmt.Errorf("LOAD options type_column and ts_column both name %q", opts.TypeColumn)
	}
	return opts, nil
}

// parseDuration reads a slack or lag as WITHIN writes a duration: a
// number of ticks (10), or a number and a unit ('5 s', '5s', '2
// minutes'). It is never negative.
func parseDuration(s string) (int64, time.Duration, error) {
	text := strings.TrimSpace(s)
	i := 0
	for i < len(text) && '0' <= text[i] && text[i] <= '9' {
		i++
	}
	bad := fmt.Errorf("want a duration as WITHIN takes it (10 ticks, or '5 s', '2 minutes'), not negative; got %q", s)
	if i == 0 {
		return 0, 0, bad
	}
	n, err := strconv.ParseInt(text[:i], 10, 64)
	if err != nil {
		return 0, 0, bad
	}
	word := strings.TrimSpace(text[i:])
	if word == "" {
		return n, 0, nil
	}
	u, ok := event.LookupTimeUnit(word)
	if !ok {
		return 0, 0, bad
	}
	return n, u.Duration, nil
}

// parseDelimiter reads delimiter: one character, or 'tab' ('\t' in SQL's
// quotes is two characters, so a word names it).
func parseDelimiter(v string) (rune, error) {
	if strings.EqualFold(v, "tab") || v == `\t` {
		return '\t', nil
	}
	r := []rune(v)
	if len(r) != 1 || r[0] == '"' || r[0] == '\r' || r[0] == '\n' || r[0] == utf8.RuneError {
		return 0, fmt.Errorf("delimiter must be one character other than a quote or a line break (or 'tab'), got %q", v)
	}
	return r[0], nil
}

func (o Options) delimiter() rune {
	if o.Delimiter == 0 {
		return ','
	}
	return o.Delimiter
}

// parseSize reads max_line: a number of bytes, or one with a unit (KB, MB,
// GB: binary, case-insensitive, a space allowed): 65536, '64KB', '1 MB'.
func parseSize(key, s string, limit int64) (int64, error) {
	text := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(text, u.suffix) {
			text, mult = strings.TrimSpace(strings.TrimSuffix(text, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n <= 0 || n > limit/mult {
		return 0, fmt.Errorf("%s must be a size from 1 byte to %s, such as 65536 or '1MB'; got %q", key, FormatBytes(limit), s)
	}
	return n * mult, nil
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

// hasKey reports whether kv has key, in any case.
func hasKey(kv map[string]string, key string) bool {
	for k := range kv {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}
