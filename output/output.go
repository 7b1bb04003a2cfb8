// Package output writes query results: the rows a query hands its sink
// (see query.Sink), encoded as an aligned table, CSV or JSON Lines. It knows
// nothing of the shell or the session, so any front end or sink (a file, a
// message publisher) can use it.
//
// The encoders append bytes into reused buffers with strconv and
// event.Value's Append methods: no reflection, no fmt, no allocation per
// row. JSON Lines and CSV collect rows and hand them to the io.Writer
// in writes of spillSize (and at Sync and Finish), or the rows a split
// run's workers encoded as they are, in vectored writes (BuffersWriter);
// the table writes a page of rows at a time. The formats are the output
// contract of README.md ("Output contract") and docs/LANGUAGE.md, Output.
package output

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/query"
)

// Format is an encoding of results, by name: each is one file of this
// package that registers itself (register), and Formats lists them.
type Format string

// Chunks is how the workers of a split run hand a format its rows.
type Chunks uint8

const (
	// OneByOne: each row comes through the ordered merge (a table lays
	// its rows out by page).
	OneByOne Chunks = iota
	// Encoded: the workers encode the rows into chunks of bytes
	// themselves (Chunked), with or without a limit.
	Encoded
	// Counted: the workers count the rows in bulk, with no row made,
	// when there is no limit; under one, rows come one by one.
	Counted
)

// formatSpec is what a format's file registers: its place in Formats
// (listings, --help and errors name the formats in that order), how
// workers hand it rows, and its writer.
type formatSpec struct {
	rank   int
	chunks Chunks
	new    func(out sink, sc Schema, ev *eventFormat, c config) Writer
}

var formats = map[Format]formatSpec{}

// Formats lists the formats, in the order of their ranks.
var Formats []Format

// register adds format f; each format's file calls it from its init.
func register(f Format, spec formatSpec) {
	if _, dup := formats[f]; dup {
		panic("output: format " + string(f) + " registered twice")
	}
	formats[f] = spec
	Formats = append(Formats, f)
	slices.SortStableFunc(Formats, func(a, b Format) int { return formats[a].rank - formats[b].rank })
}

// ParseFormat finds a format by name, case-insensitively.
func ParseFormat(name string) (Format, error) {
	f := Format(strings.ToLower(strings.TrimSpace(name)))
	if _, ok := formats[f]; ok {
		return f, nil
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q (formats: %s)", name, strings.Join(names, ", "))
}

// FormatList names the formats for a usage line: "table, csv, jsonl or
// count".
func FormatList() string { return ListOf(Formats) }

// ListOf names formats for a usage line: "csv or jsonl".
func ListOf(fs []Format) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// FormatsWith lists the formats whose workers hand them rows as c says,
// in listing order.
func FormatsWith(c Chunks) []Format {
	var out []Format
	for _, f := range Formats {
		if formats[f].chunks == c {
			out = append(out, f)
		}
	}
	return out
}

// TakesChunks reports whether the workers of a split run, under limit (0:
// none), hand f's writer their rows in chunks rather than one by one
// through the merge: what makes a split pay (workers = auto).
func (f Format) TakesChunks(limit int64) bool {
	switch formats[f].chunks {
	case Encoded:
		return true
	case Counted:
		return limit <= 0
	}
	return false
}

// Kind is what a column's cells hold: the query's own (query.ColumnKind).
type Kind = query.ColumnKind

const (
	Value = query.ValueColumn // a value: Cell.Value (RETURN a.price)
	Event = query.EventColumn // one event: Cell.Event (a variable)
	List  = query.ListColumn  // a closure's events: Cell.List
)

// Column is one column of the rows, as a query describes it
// (query.Query.Columns): its name (the header), kind, and whether it holds
// timestamps (a.ts), which a table prints as times of day when
// Schema.Unit is set.
type Column = query.Column

// Schema describes the rows a writer receives.
type Schema struct {
	Columns []Column
	// Events names the types and attributes of the events in Event and
	// List cells; nil when there are none.
	Events *event.Schema
	// Update, for a stream whose schema grows (a live one), runs a
	// function on the current schema under the stream's lock; the writer
	// calls it when an event has a type or attribute it cannot name yet.
	// Nil when Events is fixed.
	Update func(func(*event.Schema))
	// Unit is a timestamp tick of a stream with wall-clock timestamps (RFC
	// 3339, or a time_unit); 0 for unit-less ones. Tables then print
	// timestamps in RFC 3339; CSV and JSON Lines keep the numbers.
	Unit time.Duration
}

// Writer writes the rows of one result. A write error stops it: every
// later call returns the same error.
type Writer interface {
	Row(cells []query.Cell) error
	// Sync writes the rows collected so far (the table's page); a live
	// query calls it before it waits for input.
	Sync() error
	// Finish writes what is still collected: the table's last page, or
	// its header for an empty result.
	Finish() error
}

// Chunked is a Writer whose rows the workers of a split run encode
// themselves (query.Chunks), as JSON Lines, CSV and count do; a table
// lays its rows out by page.
type Chunked interface {
	Writer
	// NewEncoder returns an encoder of rows as Row writes them, for one
	// worker; nil for a writer that only counts rows.
	NewEncoder() query.Encode
	// Put writes rows rows that encoders encoded into the bytes of bufs,
	// one after the other, as Row would; it keeps none of them.
	Put(bufs [][]byte, rows int) error
}

// ChunksOf is a sink for a split run (query.RunOptions.Chunks) that writes
// through w as a sink calling Row would, at most limit rows (0: all), and
// tells written how many rows each chunk had; nil when w is not Chunked.
func ChunksOf(w Writer, limit int64, written func(rows int)) *query.Chunks {
	c, ok := w.(Chunked)
	if !ok {
		return nil
	}
	return &query.Chunks{NewEncoder: c.NewEncoder, Limit: limit, Put: func(bufs [][]byte, rows int) bool {
		if c.Put(bufs, rows) != nil {
			return false // the output is gone, as at Row's error
		}
		written(rows)
		return true
	}}
}

// Option configures a Writer.
type Option func(*config)

type config struct {
	header   func(string) string
	width    int
	expanded bool
}

// WithHeaderStyle dresses the table's column names (a terminal's bold).
func WithHeaderStyle(style func(string) string) Option {
	return func(c *config) { c.header = style }
}

// WithWidth fits the table to a terminal n columns wide: the widest
// columns are narrowed and their long cells cut, ending in "…". 0 (the
// default) leaves the widths to the data.
func WithWidth(n int) Option {
	return func(c *config) { c.width = n }
}

// WithExpanded prints the table one field per line, each row under a
// "-[ RECORD n ]" line (psql's expanded display, \x), for rows too wide
// for the terminal.
func WithExpanded() Option {
	return func(c *config) { c.expanded = true }
}

// New returns a writer of format f over w. Nothing is written before the
// first row (CSV's header comes with the rows), count's line at Finish.
func New(f Format, w io.Writer, sc Schema, opts ...Option) Writer {
	c := config{header: func(s string) string { return s }}
	for _, o := range opts {
		o(&c)
	}
	ev := &eventFormat{update: sc.Update}
	if sc.Events != nil {
		ev.extend(sc.Events)
	}
	out := sink{w: w, vec: BuffersOf(w)}
	ev.unit = sc.Unit // only tables print text for events
	spec, ok := formats[f]
	if !ok {
		spec = formats[Table]
	}
	return spec.new(out, sc, ev, c)
}

// sink is a writer's io.Writer, its vectored writes if it has them, and
// the first error it returned.
type sink struct {
	w   io.Writer
	vec BuffersWriter // nil: none
	err error
	iov [][]byte // put's
}

func (s *sink) write(b []byte) error {
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
	return s.err
}

// spillSize is how many bytes of rows JSON Lines and CSV collect before
// they write them: one Write (so one syscall, as a bufio.Writer passes a
// write larger than its buffer straight through) per spillSize of output,
// in a buffer that stays in a core's cache.
const spillSize = 256 << 10

// spill writes the rows collected in b once there are spillSize bytes of
// them, and returns b to append to next (emptied when written).
func (s *sink) spill(b []byte) ([]byte, error) {
	if len(b) < spillSize {
		return b, s.err
	}
	s.write(b)
	return b[:0], s.err
}

// vectorSize is the fewest bytes (b's and the chunks') put writes with one
// vectored write rather than copy into b: a syscall costs about what
// copying a few KB does.
const vectorSize = 32 << 10

// put writes rows encoded elsewhere (Chunked.Put) after those collected
// in b: with one vectored write of b and the chunks, without copying
// them, when the io.Writer has them and there are vectorSize bytes; else
// appended to b and written as spill does, but for a chunk that fills the
// spill: that goes straight to the io.Writer, after b's rows, without a
// copy.
func (s *sink) put(b []byte, chunks [][]byte) ([]byte, error) {
	n := len(b)
	for _, c := range chunks {
		n += len(c)
	}
	if s.vec != nil && n >= vectorSize {
		if s.err == nil {
			if len(b) > 0 {
				s.iov = append(s.iov, b)
			}
			s.iov = append(s.iov, chunks...)
			_, s.err = s.vec.WriteBuffers(s.iov)
			clear(s.iov) // the chunks are the caller's
			s.iov = s.iov[:0]
		}
		return b[:0], s.err
	}
	for _, c := range chunks {
		if len(b)+len(c) < spillSize {
			b = append(b, c...)
			continue
		}
		b, _ = s.drain(b)
		s.write(c)
	}
	return b, s.err
}

// drain writes the rows collected in b, whatever their size.
func (s *sink) drain(b []byte) ([]byte, error) {
	if len(b) > 0 {
		s.write(b)
	}
	return b[:0], s.err
}

// unbound reports whether a variable's cell is unbound: an empty optional
// item or an OR branch not taken (LANGUAGE.md §9.3). A bound closure with
// no element is an empty list, not nil.
func unbound(k Kind, c query.Cell) bool {
	return k == Event && c.Event == nil || k == List && c.List == nil
}
