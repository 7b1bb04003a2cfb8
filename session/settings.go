package session

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/query"
)

// Settings are the values SET changes.
type Settings struct {
	Engine   string // an engine's name (query.Compiler.Engines)
	Format   output.Format
	Limit    int64 // stop each query after Limit matches; 0: no limit
	Timing   bool  // summaries with times (off: reproducible output)
	Expanded bool  // tables one field per line (\x)
	// Workers is how many goroutines run a query that splits (a
	// partitioned query); 1 runs every query on one, 0 (auto) as many as
	// the CPUs where the workers write the output (workers).
	Workers int
	// AnyOrder lets a split query over a loaded stream emit its matches
	// in the order the workers find them (SET order = 'any'), not in one
	// worker's ('stream').
	AnyOrder bool
	// Output is where live queries' matches go: "" for standard output,
	// or a sink URL (nats://host:port/STREAM).
	Output string
}

// DefaultSettings are a new session's: engine auto, format table, no
// limit, timing on, expanded off, workers auto.
func DefaultSettings() Settings {
	return Settings{Engine: "auto", Format: output.Table, Timing: true}
}

// workers is how many workers run q (nil: a MATCH_RECOGNIZE query, which
// has no plan's estimate) whose matches go to a writer in format f (none:
// EXPLAIN ANALYZE, INTO, a live query), on a loaded stream of events
// events (< 0: a live stream); why says why auto runs one worker where
// the query could split (EXPLAIN shows it). Auto splits only where the
// format takes the workers' matches in chunks (output.Format.AutoSink),
// encoded (jsonl, csv) or counted in bulk (count without a limit):
// elsewhere each match goes through the merge, which costs the engines'
// work several times over; and only where the split record's estimate
// says it pays (docs/LANGUAGE.md, Why the default).
func (st *Settings) workers(q query.Query, f output.Format, events int) (n int, why string) {
	if st.Workers > 0 {
		return st.Workers, ""
	}
	sink := f.AutoSink(st.Limit)
	if q == nil {
		c, err := query.Registered()
		if err != nil {
			return 1, err.Error()
		}
		return c.AutoWorkers(events, sink)
	}
	return q.AutoWorkers(events, sink)
}

// engineNames are the compiler's engines' names (none when no compiler
// is linked in).
func engineNames() []string {
	if c, err := query.Registered(); err == nil {
		return c.Engines()
	}
	return nil
}

// settingKeys are the keys SET accepts, in the order \set lists them.
var settingKeys = []string{"engine", "format", "limit", "timing", "expanded", "workers", "output", "order"}

// SettingKeys lists the keys SET accepts.
func SettingKeys() []string { return slices.Clone(settingKeys) }

// SettingValues lists the words a setting takes (for completion); nil for
// limit, which takes a number.
func SettingValues(key string) []string {
	switch strings.ToLower(key) {
	case "engine":
		return engineNames()
	case "format":
		var fs []string
		for _, f := range output.Formats {
			fs = append(fs, string(f))
		}
		return fs
	case "timing", "expanded":
		return []string{"on", "off"}
	case "order":
		return []string{"stream", "any"}
	case "workers":
		return []string{"auto"}
	}
	return nil
}

// Set validates and applies one setting; key and value are as the user
// wrote them (keys and words are case-insensitive).
func (st *Settings) Set(key, value string) error {
	v := strings.ToLower(strings.TrimSpace(value))
	switch strings.ToLower(key) {
	case "engine":
		c, err := query.Registered()
		if err != nil {
			return err
		}
		e, err := c.LookupEngine(v)
		if err != nil {
			return fmt.Errorf("%w%s", err, ast.DidYouMean(v, SettingValues("engine")))
		}
		st.Engine = e
	case "format":
		f, err := output.ParseFormat(value)
		if err != nil {
			return fmt.Errorf("%w%s", err, ast.DidYouMean(v, SettingValues("format")))
		}
		st.Format = f
	case "limit":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("limit must be a whole number of matches, 0 for no limit; got %q", value)
		}
		st.Limit = n
	case "output":
		if v == "" || v == "-" || v == "stdout" {
			st.Output = ""
			return nil
		}
		if _, _, err := output.CheckSink(strings.TrimSpace(value)); err != nil {
			return err
		}
		st.Output = strings.TrimSpace(value)
	case "timing", "expanded":
		on := v == "on" || v == "true" || v == "1"
		if !on && v != "off" && v != "false" && v != "0" {
			return fmt.Errorf("%s must be on or off, got %q", strings.ToLower(key), value)
		}
		if strings.ToLower(key) == "timing" {
			st.Timing = on
		} else {
			st.Expanded = on
		}
	case "order":
		if v != "stream" && v != "any" {
			return fmt.Errorf("order must be stream (the matches in stream order, for any number of workers) or any (as the workers find them), got %q%s", value, ast.DidYouMean(v, SettingValues("order")))
		}
		st.AnyOrder = v == "any"
	case "workers":
		if v == "auto" {
			st.Workers = 0
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxWorkers {
			return fmt.Errorf("workers must be auto or a whole number from 1 to %d, got %q", maxWorkers, value)
		}
		st.Workers = n
	default:
		return fmt.Errorf("unknown setting %q (settings: %s)%s", key, strings.Join(settingKeys, ", "), ast.DidYouMean(key, settingKeys))
	}
	return nil
}

// maxWorkers bounds SET workers: each worker holds its partitions' state
// and a copy of the window's events.
const maxWorkers = 1024

// isKey reports whether SET knows key (case-insensitively).
func isKey(key string) bool { return slices.Contains(settingKeys, strings.ToLower(key)) }

// get returns a setting's value as SET would take it.
func (st *Settings) get(key string) string {
	switch key {
	case "engine":
		return st.Engine
	case "format":
		return string(st.Format)
	case "limit":
		return strconv.FormatInt(st.Limit, 10)
	case "output":
		if st.Output == "" {
			return "stdout"
		}
		return st.Output
	case "timing":
		return onOff(st.Timing)
	case "expanded":
		return onOff(st.Expanded)
	case "workers":
		if st.Workers == 0 {
			return fmt.Sprintf("auto (%d CPUs)", runtime.NumCPU())
		}
		return strconv.Itoa(st.Workers)
	case "order":
		if st.AnyOrder {
			return "any"
		}
		return "stream"
	}
	return ""
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
