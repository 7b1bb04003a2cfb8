package source

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sase-cep/sase/event"
)

// Load reads the stream at path to its end. format is "csv" or "jsonl"
// ("ndjson" and "json" are synonyms of jsonl), case-insensitive; "" picks
// it from the extension (.csv; .jsonl, .ndjson, .json). path "-" reads
// standard input whole, as CSV unless format says otherwise (Open makes
// it a live source); a file:// URL is its path. The stream's Source is
// path; its Name is left empty for the caller (see DefaultName).
func Load(path, format string, opts Options) (*event.Stream, error) {
	s, _, err := LoadReportContext(context.Background(), path, format, opts, io.Discard)
	return s, err
}

// LoadReportContext is Load, stopped with ctx's error once ctx is done,
// that reports skipped (on_error = 'skip') and late lines on errs and
// returns the counts for the stream's report line.
func LoadReportContext(ctx context.Context, path, format string, opts Options, errs io.Writer) (*event.Stream, Stats, error) {
	file, err := localPath(path)
	if err != nil {
		return nil, Stats{}, err
	}
	if opts.Table != "" || opts.RowTS {
		s, st, err := loadTable(file, opts)
		if s != nil {
			s.Source = path
		}
		return s, st, err
	}
	c := newConfig(WithFormat(format), WithOptions(opts), WithErrors(errs))
	src, err := timedOpen(openFinite(file, c))(c)
	if err != nil {
		return nil, Stats{}, err
	}
	s, err := Collect(ctx, src)
	if err != nil {
		return nil, Stats{}, err
	}
	s.Source = path
	return s, src.Stats(), nil
}

// openPath opens a path: "-" is standard input, live; a file is finite
// unless followed.
func openPath(path string, c Config) (Source, error) {
	switch {
	case path == "-" && c.Follow:
		return nil, fmt.Errorf("FOLLOW reads a file; standard input ('-') is live already")
	case path == "-":
		return openStdin(c)
	case c.Follow:
		return openFollow(path, c)
	}
	return openFinite(path, c)
}

// openFinite opens a file (or standard input, for "-") to be read whole.
func openFinite(path string, c Config) (Source, error) {
	format, err := formatOf(path, c.Format)
	if err != nil {
		return nil, err
	}
	name, r, release := "stdin", c.Stdin, func() {}
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err // already names the path
		}
		name, r, release = path, f, func() { f.Close() } // read-only: a close error cannot lose data
	}
	if format == "jsonl" {
		return newJSONLFile(r, name, c.Options, release), nil
	}
	return newCSVFile(r, name, c.Options, release), nil
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
