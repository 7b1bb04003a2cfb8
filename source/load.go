package source

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	return inputOf(format).file(r, name, c.Options, release), nil
}

// inputFormat is an input format as its file registers it
// (registerInput): its names, the first its own and the others synonyms,
// each also a file extension that tells it; how it reads a whole file; and
// the decoder of a live stream's lines.
type inputFormat struct {
	names []string
	file  func(r io.Reader, name string, opts Options, release func()) Source
	lines func() lineDecoder
}

// inputs are the input formats, by name.
var inputs []inputFormat

// registerInput adds an input format; its file calls it from its init.
func registerInput(f inputFormat) {
	inputs = append(inputs, f)
	slices.SortFunc(inputs, func(a, b inputFormat) int { return strings.Compare(a.names[0], b.names[0]) })
}

// InputFormats names the input formats (LOAD's FORMAT), sorted.
func InputFormats() []string {
	names := make([]string, len(inputs))
	for i, f := range inputs {
		names[i] = f.names[0]
	}
	return names
}

// inputOf is the input format formatOf resolved name to.
func inputOf(name string) *inputFormat {
	for i := range inputs {
		if inputs[i].names[0] == name {
			return &inputs[i]
		}
	}
	panic("source: no input format " + name)
}

// formatOf resolves a LOAD's format to an input format's own name (see
// Load).
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
	for _, f := range inputs {
		if slices.Contains(f.names, strings.ToLower(format)) {
			return f.names[0], nil
		}
	}
	names := InputFormats()
	if fromExt {
		return "", fmt.Errorf("%s: cannot tell the format from the extension: write FORMAT %s", path, strings.Join(names, " or FORMAT "))
	}
	return "", fmt.Errorf("unknown format %q (valid: %s)", format, strings.Join(names, ", "))
}
