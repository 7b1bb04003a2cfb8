package repl

import (
	"bufio"
	"strconv"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// resultWriter writes the rows of one result (a query's matches or a SHOW
// listing) to the session's buffered stdout. The match path appends bytes
// with strconv and event.Value's Append methods into a reused buffer: no
// reflection, no fmt, no allocation per match.
type resultWriter interface {
	row(cells []sase.Cell)
	// sync writes the rows collected so far (a live query waits for input).
	sync()
	// finish writes what is still buffered (the table's last page, or a
	// header for an empty result).
	finish()
}

// newResultWriter returns the writer for format. schema names the types
// and attributes of event cells; it may be nil when there are none. A live
// stream's schema grows: update then reads the names that appear later.
func newResultWriter(format Format, w *bufio.Writer, cols []planner.Column, schema *event.Schema, update func(func(*event.Schema)), header *color.Color) resultWriter {
	f := &eventFormat{update: update}
	if schema != nil {
		f.extend(schema)
	}
	switch format {
	case FormatJSONL:
		return newJSONLWriter(w, cols, f)
	case FormatCSV:
		return newCSVWriter(w, cols)
	}
	return newTableWriter(w, cols, f, header)
}

// eventFormat holds the text of a schema's names, encoded once per query
// (and once per name a live stream adds).
type eventFormat struct {
	jsonHead [][]byte // per type: {"type":"<name>","ts":
	jsonKey  [][]byte // per attribute slot: ,"<name>":  (nil: hidden)
	textKey  [][]byte // per attribute slot:  <name>=
	types    []string
	update   func(func(*event.Schema)) // a live stream's schema, read under its lock; nil if fixed
}

// extend encodes the names of schema that f does not have yet.
func (f *eventFormat) extend(schema *event.Schema) {
	for _, t := range schema.Types[len(f.types):] {
		head := append([]byte(`{"type":`), event.AppendJSONString(nil, t.Name)...)
		f.jsonHead = append(f.jsonHead, append(head, `,"ts":`...))
		f.types = append(f.types, t.Name)
	}
	for _, name := range schema.Attrs[len(f.jsonKey):] {
		var key []byte
		// An attribute named like a built-in key (a CSV column "seq") would
		// make a duplicate JSON key; the built-in wins, as in queries.
		if name != "type" && name != "ts" && name != "seq" {
			key = append(event.AppendJSONString([]byte{','}, name), ':')
		}
		f.jsonKey = append(f.jsonKey, key)
		f.textKey = append(f.textKey, []byte(" "+name+"="))
	}
}

// cover makes sure f can name e's type and attributes.
func (f *eventFormat) cover(e *event.Event) {
	if (e.Type >= len(f.types) || len(e.Attrs) > len(f.jsonKey)) && f.update != nil {
		f.update(f.extend)
	}
}

// appendJSON appends e as {"type":..,"ts":..,"seq":.., attributes...},
// attributes in schema slot order, absent ones left out.
func (f *eventFormat) appendJSON(b []byte, e *event.Event) []byte {
	f.cover(e)
	b = append(b, f.jsonHead[e.Type]...)
	b = strconv.AppendInt(b, e.TS, 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	for slot, v := range e.Attrs {
		if v.IsAbsent() || f.jsonKey[slot] == nil {
			continue
		}
		b = append(b, f.jsonKey[slot]...)
		b = v.AppendJSON(b)
	}
	return append(b, '}')
}

// appendText appends e compactly for people: stock1@12 {price=5 volume=3}.
func (f *eventFormat) appendText(b []byte, e *event.Event) []byte {
	f.cover(e)
	b = append(b, f.types[e.Type]...)
	b = append(b, '@')
	b = strconv.AppendInt(b, e.TS, 10)
	open := false
	for slot, v := range e.Attrs {
		if v.IsAbsent() {
			continue
		}
		key := f.textKey[slot]
		if !open {
			b = append(b, " {"...)
			key = key[1:]
			open = true
		}
		b = append(b, key...)
		b = v.AppendText(b)
	}
	if open {
		b = append(b, '}')
	}
	return b
}

// ---- jsonl ----

type jsonlWriter struct {
	w     *bufio.Writer
	cols  []planner.Column
	keys  [][]byte // per column: "name":
	ev    *eventFormat
	buf   []byte
	cache jsonCache
}

// jsonCacheSize is a power of two larger than the events a window usually
// holds, so that an event stays cached while matches still bind it.
const jsonCacheSize = 4096

// jsonCache remembers the JSON text of recent events, direct-mapped by
// seq: an event is in many matches (in W1 about 20), and copying its text
// is several times cheaper than encoding it again. The key is the event
// and its seq, so a recycled event never reads another's text.
type jsonCache struct {
	ev   [jsonCacheSize]*event.Event
	seq  [jsonCacheSize]int64
	text [jsonCacheSize][]byte
}

func (c *jsonCache) appendJSON(b []byte, f *eventFormat, e *event.Event) []byte {
	i := e.Seq & (jsonCacheSize - 1)
	if c.ev[i] != e || c.seq[i] != e.Seq {
		c.text[i] = f.appendJSON(c.text[i][:0], e)
		c.ev[i], c.seq[i] = e, e.Seq
	}
	return append(b, c.text[i]...)
}

func newJSONLWriter(w *bufio.Writer, cols []planner.Column, ev *eventFormat) *jsonlWriter {
	j := &jsonlWriter{w: w, cols: cols, ev: ev}
	for _, c := range cols {
		j.keys = append(j.keys, append(event.AppendJSONString(nil, c.Name), ':'))
	}
	return j
}

func (j *jsonlWriter) row(cells []sase.Cell) {
	b := append(j.buf[:0], '{')
	for i, c := range cells {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, j.keys[i]...)
		switch j.cols[i].Kind {
		case planner.ColValue:
			b = c.Value.AppendJSON(b)
		case planner.ColEvent:
			b = j.cache.appendJSON(b, j.ev, c.Event)
		case planner.ColList:
			b = append(b, '[')
			for k, e := range c.List {
				if k > 0 {
					b = append(b, ',')
				}
				b = j.cache.appendJSON(b, j.ev, e)
			}
			b = append(b, ']')
		}
	}
	b = append(b, '}', '\n')
	j.w.Write(b) // a write error sticks in the bufio.Writer; Flush reports it
	j.buf = b
}

func (j *jsonlWriter) sync()   {}
func (j *jsonlWriter) finish() {}

// ---- csv ----

// csvWriter writes RFC 4180 CSV. An event cell is the event's seq (its
// position in the stream, as in the conformance cases); a closure list is
// its elements' seqs as [3;5;8]. RETURN a.price etc. gives attributes.
type csvWriter struct {
	w    *bufio.Writer
	cols []planner.Column
	buf  []byte
}

func newCSVWriter(w *bufio.Writer, cols []planner.Column) *csvWriter {
	c := &csvWriter{w: w, cols: cols}
	b := c.buf
	for i, col := range cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCSVString(b, col.Name)
	}
	w.Write(append(b, '\n'))
	c.buf = b
	return c
}

func (c *csvWriter) row(cells []sase.Cell) {
	b := c.buf[:0]
	for i, cell := range cells {
		if i > 0 {
			b = append(b, ',')
		}
		switch c.cols[i].Kind {
		case planner.ColValue:
			if cell.Value.Kind() == event.String {
				b = appendCSVString(b, cell.Value.Str())
			} else {
				b = cell.Value.AppendText(b)
			}
		case planner.ColEvent:
			b = strconv.AppendInt(b, cell.Event.Seq, 10)
		case planner.ColList:
			b = append(b, '[')
			for k, e := range cell.List {
				if k > 0 {
					b = append(b, ';')
				}
				b = strconv.AppendInt(b, e.Seq, 10)
			}
			b = append(b, ']')
		}
	}
	b = append(b, '\n')
	c.w.Write(b)
	c.buf = b
}

func (c *csvWriter) sync()   {}
func (c *csvWriter) finish() {}

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

// ---- table ----

// tablePage is how many rows the table collects before it prints: widths
// come from the rows at hand, so a huge result streams out page by page.
// Widths only grow, so a later page may be wider than the header.
const tablePage = 1000

// tableWriter prints aligned columns like psql. Cells are rendered into one
// byte arena per page.
type tableWriter struct {
	w       *bufio.Writer
	cols    []planner.Column
	ev      *eventFormat
	header  *color.Color
	widths  []int
	arena   []byte
	ends    []int  // per cell of the page: its end offset in arena
	right   []bool // per cell: right-aligned (a number)
	rows    int
	started bool // header printed
}

func newTableWriter(w *bufio.Writer, cols []planner.Column, ev *eventFormat, header *color.Color) *tableWriter {
	t := &tableWriter{w: w, cols: cols, ev: ev, header: header, widths: make([]int, len(cols))}
	for i, c := range cols {
		t.widths[i] = utf8.RuneCountInString(c.Name)
	}
	return t
}

func (t *tableWriter) row(cells []sase.Cell) {
	for i, c := range cells {
		right := false
		switch t.cols[i].Kind {
		case planner.ColValue:
			right = c.Value.IsNumber()
			t.arena = c.Value.AppendText(t.arena)
		case planner.ColEvent:
			t.arena = t.ev.appendText(t.arena, c.Event)
		case planner.ColList:
			t.arena = append(t.arena, '[')
			for k, e := range c.List {
				if k > 0 {
					t.arena = append(t.arena, ", "...)
				}
				t.arena = t.ev.appendText(t.arena, e)
			}
			t.arena = append(t.arena, ']')
		}
		t.ends = append(t.ends, len(t.arena))
		t.right = append(t.right, right)
	}
	t.rows++
	if t.rows == tablePage {
		t.flush()
	}
}

func (t *tableWriter) sync() {
	if t.rows > 0 {
		t.flush()
	}
}

func (t *tableWriter) finish() {
	if t.rows > 0 || !t.started {
		t.flush()
	}
}

// flush prints the collected page, and the header before the first one.
func (t *tableWriter) flush() {
	n := len(t.cols)
	for k, end := range t.ends {
		if w := utf8.RuneCount(t.arena[t.start(k):end]); w > t.widths[k%n] {
			t.widths[k%n] = w
		}
	}
	if !t.started {
		t.started = true
		for i, c := range t.cols {
			t.sep(i)
			t.w.WriteString(t.header.Sprint(c.Name))
			t.pad(i, utf8.RuneCountInString(c.Name))
		}
		t.w.WriteByte('\n')
		for i, w := range t.widths {
			if i > 0 {
				t.w.WriteByte('+')
			}
			for range w + 2 {
				t.w.WriteByte('-')
			}
		}
		t.w.WriteByte('\n')
	}
	for k, end := range t.ends {
		i := k % n
		text := t.arena[t.start(k):end]
		t.sep(i)
		if t.right[k] {
			t.spaces(t.widths[i] - utf8.RuneCount(text))
			t.w.Write(text)
		} else {
			t.w.Write(text)
			t.pad(i, utf8.RuneCount(text))
		}
		if i == n-1 {
			t.w.WriteByte('\n')
		}
	}
	t.arena, t.ends, t.right, t.rows = t.arena[:0], t.ends[:0], t.right[:0], 0
}

func (t *tableWriter) start(k int) int {
	if k == 0 {
		return 0
	}
	return t.ends[k-1]
}

// sep writes what comes before column i's text.
func (t *tableWriter) sep(i int) {
	if i > 0 {
		t.w.WriteString(" | ")
	} else {
		t.w.WriteByte(' ')
	}
}

// pad fills column i after text of width w; the last column is not padded,
// so lines carry no trailing blanks.
func (t *tableWriter) pad(i, w int) {
	if i < len(t.cols)-1 {
		t.spaces(t.widths[i] - w)
	}
}

func (t *tableWriter) spaces(n int) {
	for range n {
		t.w.WriteByte(' ')
	}
}
