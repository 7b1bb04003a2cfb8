package repl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sase-cep/sase"
)

// Format is how query results are written to stdout.
type Format string

const (
	FormatTable Format = "table" // aligned columns, for people
	FormatCSV   Format = "csv"   // a header row, then one row per match
	FormatJSONL Format = "jsonl" // one JSON object per match
)

var formats = []Format{FormatTable, FormatCSV, FormatJSONL}

// settings are the values SET changes.
type settings struct {
	engine *sase.Engine
	format Format
	limit  int64 // 0: no limit
	timing bool
}

func defaultSettings() settings {
	return settings{engine: sase.Auto, format: FormatTable, timing: true}
}

// settingKeys are the keys SET accepts, sorted for the error message.
var settingKeys = []string{"engine", "format", "limit", "timing"}

// set validates and applies one setting; key and value are as the user
// wrote them (keys and words are case-insensitive).
func (st *settings) set(key, value string) error {
	v := strings.ToLower(strings.TrimSpace(value))
	switch strings.ToLower(key) {
	case "engine":
		e, err := sase.LookupEngine(v)
		if err != nil {
			return err
		}
		st.engine = e
	case "format":
		if !slices.Contains(formats, Format(v)) {
			return fmt.Errorf("unknown format %q (formats: table, csv, jsonl)", value)
		}
		st.format = Format(v)
	case "limit":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("limit must be a whole number of matches, 0 for no limit; got %q", value)
		}
		st.limit = n
	case "timing":
		switch v {
		case "on", "true", "1":
			st.timing = true
		case "off", "false", "0":
			st.timing = false
		default:
			return fmt.Errorf("timing must be on or off, got %q", value)
		}
	default:
		return fmt.Errorf("unknown setting %q (settings: %s)", key, strings.Join(settingKeys, ", "))
	}
	return nil
}

// get returns a setting's value as SET would take it.
func (st *settings) get(key string) string {
	switch key {
	case "engine":
		return st.engine.Name
	case "format":
		return string(st.format)
	case "limit":
		return strconv.FormatInt(st.limit, 10)
	case "timing":
		return onOff(st.timing)
	}
	return ""
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
