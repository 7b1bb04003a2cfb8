package output

import (
	"strconv"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/query"
)

// CSV is a header row, then one row per match.
const CSV Format = "csv"

func init() {
	register(CSV, formatSpec{rank: 1, chunks: Encoded, new: func(out sink, sc Schema, _ *eventFormat, _ config) Writer {
		return newCSV(out, sc.Columns)
	}})
}

// csvWriter writes RFC 4180 CSV. An event cell is the event's seq (its
// position in the stream, as in the conformance cases); a closure list is
// its elements' seqs as [3;5;8]. RETURN a.price etc. gives attributes.
type csvWriter struct {
	out sink
	buf []byte // rows not written yet, the header first
	csvEncoder
}

// csvEncoder encodes rows as CSV; each has its own cache.
type csvEncoder struct {
	cols  []Column
	cache textCache
}

func newCSV(out sink, cols []Column) *csvWriter {
	c := &csvWriter{out: out}
	c.cols = cols
	b := make([]byte, 0, spillSize+4<<10)
	for i, col := range cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCSVString(b, col.Name)
	}
	c.buf = append(b, '\n')
	return c
}

func (c *csvWriter) Row(cells []query.Cell) error {
	var err error
	c.buf, err = c.out.spill(c.encode(c.buf, cells))
	return err
}

// NewEncoder is a copy of the writer's encoder with a cache of its own.
func (c *csvWriter) NewEncoder() query.Encode {
	e := &csvEncoder{cols: c.cols}
	return e.encode
}

func (c *csvWriter) Put(bufs [][]byte, _ int) (err error) {
	c.buf, err = c.out.put(c.buf, bufs)
	return err
}

func (c *csvEncoder) encode(b []byte, cells []query.Cell) []byte {
	for i, cell := range cells {
		if i > 0 {
			b = append(b, ',')
		}
		if unbound(c.cols[i].Kind, cell) {
			continue // an empty cell (LANGUAGE.md §9.3)
		}
		switch c.cols[i].Kind {
		case Value:
			if cell.Value.IsString() {
				b = appendCSVString(b, cell.Value.Str())
			} else {
				b = cell.Value.AppendText(b)
			}
		case Event:
			b = c.cache.append(b, cell.Event, appendSeq)
		case List:
			b = append(b, '[')
			for k, e := range cell.List {
				if k > 0 {
					b = append(b, ';')
				}
				b = c.cache.append(b, e, appendSeq)
			}
			b = append(b, ']')
		}
	}
	return append(b, '\n')
}

func (c *csvWriter) Sync() (err error) {
	c.buf, err = c.out.drain(c.buf)
	return err
}

func (c *csvWriter) Finish() error { return c.Sync() }

// appendSeq is an event's CSV text: its seq.
func appendSeq(b []byte, e *event.Event) []byte { return strconv.AppendInt(b, e.Seq, 10) }

// appendCSVString appends s, quoted when it holds a comma, a quote, a line
// break or leading space (as encoding/csv does), or when it is empty, so
// that an empty string differs from an absent value.
func appendCSVString(b []byte, s string) []byte {
	quote := s == "" || s[0] == ' ' || s[0] == '\t'
	for i := 0; i < len(s) && !quote; i++ {
		switch s[i] {
		case ',', '"', '\n', '\r':
			quote = true
		}
	}
	if !quote {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
