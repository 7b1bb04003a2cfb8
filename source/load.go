package source

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sase-cep/sase/event"
)

// Load reads the stream at path. format is "csv" or "jsonl" ("ndjson" and
// "json" are synonyms of jsonl), case-insensitive; "" picks it from the
// extension (.csv; .jsonl, .ndjson, .json). path "-" reads standard input,
// as CSV unless format says otherwise. The stream's Source is path; its
// Name is left empty for the caller (see DefaultName).
func Load(path, format string, opts Options) (*event.Stream, error) {
	format, err := formatOf(path, format)
	if err != nil {
		return nil, err
	}
	load := LoadCSV
	if format == "jsonl" {
		load = LoadJSONL
	}

	var s *event.Stream
	if path == "-" {
		s, err = load(os.Stdin, "stdin", opts)
	} else {
		f, oerr := os.Open(path)
		if oerr != nil {
			return nil, oerr // already names the path
		}
		s, err = load(f, path, opts)
		f.Close() // read-only: a close error cannot lose data
	}
	if err != nil {
		return nil, err
	}
	s.Source = path
	return s, nil
}

// formatOf resolves a LOAD's format to "csv" or "jsonl" (see Load).
func formatOf(path, format string) (string, error) {
	fromExt := false
	if format == "" {
		fromExt = path != "-"
		if path == "-" {
			format = "csv"
		} else {
			format = strings.TrimPrefix(filepath.Ext(path), ".")
		}
	}
	switch strings.ToLower(format) {
	case "csv":
		return "csv", nil
	case "jsonl", "ndjson", "json":
		return "jsonl", nil
	}
	if fromExt {
		return "", fmt.Errorf("%s: cannot tell the format from the extension: write FORMAT csv or FORMAT jsonl", path)
	}
	return "", fmt.Errorf("unknown format %q (valid: csv, jsonl)", format)
}
