package source

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sase-cep/sase/exec/event"
)

// Load reads the stream at path. format is "csv" or "jsonl" ("ndjson" and
// "json" are synonyms of jsonl), case-insensitive; "" picks it from the
// extension (.csv; .jsonl, .ndjson, .json). path "-" reads standard input,
// as CSV unless format says otherwise. The stream's Source is path; its
// Name is left empty for the caller (see DefaultName).
func Load(path, format string, opts Options) (*event.Stream, error) {
	fromExt := false
	if format == "" {
		fromExt = path != "-"
		if path == "-" {
			format = "csv"
		} else {
			format = strings.TrimPrefix(filepath.Ext(path), ".")
		}
	}
	var load func(io.Reader, string, Options) (*event.Stream, error)
	switch strings.ToLower(format) {
	case "csv":
		load = LoadCSV
	case "jsonl", "ndjson", "json":
		load = LoadJSONL
	default:
		if fromExt {
			return nil, fmt.Errorf("%s: cannot tell the format from the extension: write FORMAT csv or FORMAT jsonl", path)
		}
		return nil, fmt.Errorf("unknown format %q (valid: csv, jsonl)", format)
	}

	var s *event.Stream
	var err error
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
