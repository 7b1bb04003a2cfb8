package session

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/output"
)

// Settings are the values SET changes.
type Settings struct {
	Engine *sase.Engine
	Format output.Format
	Limit  int64 // stop each query after Limit matches; 0: no limit
	Timing bool  // summaries with times (off: reproducible output)
	// Output is where live queries' matches go: "" for standard output,
	// or a sink URL (nats://host:port/STREAM).
	Output string
}

// DefaultSettings are a new session's: engine auto, format table, no
// limit, timing on.
func DefaultSettings() Settings {
	return Settings{Engine: sase.Auto, Format: output.Table, Timing: true}
}

// settingKeys are the keys SET accepts, sorted for the error message.
var settingKeys = []string{"engine", "format", "limit", "output", "timing"}

// Set validates and applies one setting; key and value are as the user
// wrote them (keys and words are case-insensitive).
func (st *Settings) Set(key, value string) error {
	v := strings.ToLower(strings.TrimSpace(value))
	switch strings.ToLower(key) {
	case "engine":
		e, err := sase.LookupEngine(v)
		if err != nil {
			return err
		}
		st.Engine = e
	case "format":
		f, err := output.ParseFormat(value)
		if err != nil {
			return err
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
	case "timing":
		switch v {
		case "on", "true", "1":
			st.Timing = true
		case "off", "false", "0":
			st.Timing = false
		default:
			return fmt.Errorf("timing must be on or off, got %q", value)
		}
	default:
		return fmt.Errorf("unknown setting %q (settings: %s)", key, strings.Join(settingKeys, ", "))
	}
	return nil
}

// isKey reports whether SET knows key (case-insensitively).
func isKey(key string) bool { return slices.Contains(settingKeys, strings.ToLower(key)) }

// get returns a setting's value as SET would take it.
func (st *Settings) get(key string) string {
	switch key {
	case "engine":
		return st.Engine.Name
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
	}
	return ""
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
