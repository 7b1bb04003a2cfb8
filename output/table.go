package output

import (
	"strconv"
	"unicode/utf8"

	"github.com/sase-cep/sase/query"
)

// Table is aligned columns, for people.
const Table Format = "table"

func init() {
	register(Table, formatSpec{rank: 0, chunks: OneByOne, new: func(out sink, sc Schema, ev *eventFormat, c config) Writer {
		return newTable(out, sc.Columns, ev, c)
	}})
}

// tablePage is how many rows the table collects before it prints. The
// column widths come from the first page and then stay, so that the
// columns line up over the whole result however long it is: a later cell
// wider than its column is cut, ending in "…" (the table is for reading;
// csv and jsonl keep every value whole).
const tablePage = 1000

// minColumn is the narrowest a column is made to fit a terminal.
const minColumn = 6

// tableWriter prints aligned columns like psql, or with expanded set one
// field per line (psql's \x). Cells are rendered into one byte arena per
// page, and the page into one buffer written at once.
type tableWriter struct {
	out      sink
	cols     []Column
	ev       *eventFormat
	header   func(string) string
	names    [][]byte // the column names, escaped
	styled   [][]byte // expanded: the names dressed by header
	width    int      // the terminal's width to fit; 0: none
	expanded bool

	widths []int // per column; fixed by the first page
	fixed  bool
	arena  []byte
	ends   []int  // per cell of the page: its end offset in arena
	cellW  []int  // per cell: its width in terminal columns
	right  []bool // per cell: right-aligned (a number)
	whole  []bool // per cell: a number or timestamp, never cut
	rows   int
	record int // expanded: the rows printed so far
	page   []byte
	// started is set once the header has been printed (or, expanded,
	// once there is nothing left to print before the first row).
	started bool
}

func newTable(out sink, cols []Column, ev *eventFormat, c config) *tableWriter {
	t := &tableWriter{out: out, cols: cols, ev: ev, header: c.header, width: c.width, expanded: c.expanded,
		widths: make([]int, len(cols)), names: make([][]byte, len(cols))}
	for i, col := range cols {
		t.names[i] = escapeControls([]byte(col.Name), 0)
		if t.expanded {
			t.styled = append(t.styled, []byte(t.header(string(t.names[i]))))
		}
	}
	return t
}

func (t *tableWriter) Row(cells []query.Cell) error {
	for i, c := range cells {
		start := len(t.arena)
		right, whole := false, false
		switch t.cols[i].Kind {
		case Value:
			if t.cols[i].Time && t.ev.unit != 0 && c.Value.IsInt() {
				t.arena = t.ev.appendTS(t.arena, c.Value.Int())
				whole = true
				break
			}
			right = c.Value.IsNumber()
			whole = right
			t.arena = c.Value.AppendText(t.arena)
		case Event:
			if c.Event != nil { // else unbound: an empty cell (LANGUAGE.md §9.3)
				t.arena = t.ev.appendText(t.arena, c.Event)
			}
		case List:
			if c.List == nil {
				break // unbound
			}
			t.arena = append(t.arena, '[')
			for k, e := range c.List {
				if k > 0 {
					t.arena = append(t.arena, ", "...)
				}
				t.arena = t.ev.appendText(t.arena, e)
			}
			t.arena = append(t.arena, ']')
		}
		t.arena = escapeControls(t.arena, start)
		t.ends = append(t.ends, len(t.arena))
		t.cellW = append(t.cellW, textWidth(t.arena[start:]))
		t.right = append(t.right, right)
		t.whole = append(t.whole, whole)
	}
	t.rows++
	if t.rows == tablePage {
		return t.flush()
	}
	return t.out.err
}

func (t *tableWriter) Sync() error {
	if t.rows > 0 {
		return t.flush()
	}
	return t.out.err
}

func (t *tableWriter) Finish() error {
	if t.rows > 0 || !t.started && !t.expanded {
		return t.flush()
	}
	return t.out.err
}

// flush prints the collected page, and the header before the first one.
func (t *tableWriter) flush() error {
	if !t.fixed {
		t.fixWidths()
	}
	b := t.page[:0]
	if t.expanded {
		b = t.appendRecords(b)
	} else {
		if !t.started {
			b = t.appendHeader(b)
		}
		b = t.appendRows(b)
	}
	t.started = true
	t.page = b
	t.arena, t.ends, t.cellW, t.right, t.whole, t.rows = t.arena[:0], t.ends[:0], t.cellW[:0], t.right[:0], t.whole[:0], 0
	return t.out.write(b)
}

// fixWidths sets the column widths from the header and the first page,
// narrowed to the terminal's width when there is one. Expanded, widths[0]
// is the names' column and widths[1] the values'.
func (t *tableWriter) fixWidths() {
	t.fixed = true
	n := len(t.cols)
	natural := make([]int, n)
	for i, name := range t.names {
		natural[i] = textWidth(name)
	}
	if t.expanded {
		names := 0
		for _, w := range natural {
			names = max(names, w)
		}
		values := 0
		for _, w := range t.cellW {
			values = max(values, w)
		}
		if t.width > 0 {
			values = min(values, max(t.width-names-3, minColumn))
		}
		t.widths = []int{names, values}
		return
	}
	for k, w := range t.cellW {
		natural[k%n] = max(natural[k%n], w)
	}
	copy(t.widths, natural)
	if t.width > 0 {
		// The rule under the header is the widest line: each column's
		// width and 2, and a '+' between columns.
		fitColumns(t.widths, t.width-3*n+1)
		// A number or timestamp cut to a prefix reads as another value:
		// its column stays wide enough, past the terminal's width if need be.
		for k, w := range t.cellW {
			if t.whole[k] {
				t.widths[k%n] = max(t.widths[k%n], w)
			}
		}
	}
}

// fitColumns narrows the widest columns until their sum is at most room,
// none below minColumn (or its natural width if that is less).
func fitColumns(widths []int, room int) {
	sum, widest := 0, 0
	for _, w := range widths {
		sum += w
		widest = max(widest, w)
	}
	if sum <= room {
		return
	}
	// The largest cap c with the capped widths' sum within room; what is
	// left over widens the capped columns by one each, left to right.
	used := func(c int) int {
		s := 0
		for _, w := range widths {
			s += min(w, c)
		}
		return s
	}
	c := widest
	for c > minColumn && used(c) > room {
		c--
	}
	spare := room - used(c)
	for i, w := range widths {
		if w > c {
			widths[i] = c
			if spare > 0 {
				widths[i]++
				spare--
			}
		}
	}
}

func (t *tableWriter) cell(k int) ([]byte, int) {
	start := 0
	if k > 0 {
		start = t.ends[k-1]
	}
	return t.arena[start:t.ends[k]], t.cellW[k]
}

// appendFitted appends text, w columns wide, cut to room columns with an
// ellipsis if it is wider; it returns the width appended.
func appendFitted(b, text []byte, w, room int) ([]byte, int) {
	text, w, cut := fit(text, w, room)
	b = append(b, text...)
	if cut {
		b = append(b, ellipsis...)
		w++
	}
	return b, w
}

func (t *tableWriter) appendHeader(b []byte) []byte {
	for i, name := range t.names {
		b = t.sep(b, i)
		cut, w, _ := fit(name, textWidth(name), t.widths[i])
		b = append(b, t.header(string(cut))...)
		if len(cut) < len(name) {
			b = append(b, ellipsis...)
			w++
		}
		b = t.pad(b, i, w)
	}
	b = append(b, '\n')
	for i, w := range t.widths {
		if i > 0 {
			b = append(b, '+')
		}
		b = repeat(b, '-', w+2)
	}
	return append(b, '\n')
}

func (t *tableWriter) appendRows(b []byte) []byte {
	n := len(t.cols)
	for k := range t.ends {
		i := k % n
		text, w := t.cell(k)
		b = t.sep(b, i)
		switch {
		case t.right[k] && w < t.widths[i]:
			b = repeat(b, ' ', t.widths[i]-w)
			b = append(b, text...)
		case t.whole[k] || t.width == 0:
			// Never cut: a number, a timestamp, or anything off a
			// terminal (a file keeps every value whole). A later page's
			// wider cell overflows its column.
			b = append(b, text...)
			b = t.pad(b, i, w)
		default:
			b, w = appendFitted(b, text, w, t.widths[i])
			b = t.pad(b, i, w)
		}
		if i == n-1 {
			b = append(b, '\n')
		}
	}
	return b
}

// appendRecords prints the page expanded, psql's layout:
//
//	-[ RECORD 1 ]+------
//	a     | stock1@17 {...}
//	price | 5
func (t *tableWriter) appendRecords(b []byte) []byte {
	names, values := t.widths[0], t.widths[1]
	room := 1 << 30 // without a terminal, values are never cut
	if t.width > 0 {
		room = max(t.width-names-3, minColumn)
	}
	n := len(t.cols)
	for k := range t.ends {
		i := k % n
		if i == 0 {
			t.record++
			start := len(b)
			b = append(b, "-[ RECORD "...)
			b = strconv.AppendInt(b, int64(t.record), 10)
			b = append(b, " ]"...)
			if label := len(b) - start; label < names+1 {
				b = repeat(b, '-', names+1-label)
				b = append(b, '+')
				b = repeat(b, '-', values+1)
			} else {
				b = repeat(b, '-', max(names+3+values-label, 1))
			}
			b = append(b, '\n')
		}
		b = append(b, t.styled[i]...)
		b = repeat(b, ' ', names-textWidth(t.names[i]))
		b = append(b, " | "...)
		text, _ := t.cell(k)
		b = appendWrapped(b, text, room, names+3)
		b = append(b, '\n')
	}
	return b
}

// appendWrapped appends text in lines at most room columns wide, each line
// after the first indented by indent spaces: an expanded value (a closure's
// list) reads whole on a terminal.
func appendWrapped(b, text []byte, room, indent int) []byte {
	for {
		line, _, cut := fit(text, textWidth(text), room+1)
		if !cut {
			return append(b, text...)
		}
		if len(line) == 0 { // a rune wider than room
			_, size := utf8.DecodeRune(text)
			line = text[:size]
		}
		b = append(b, line...)
		b = append(b, '\n')
		b = repeat(b, ' ', indent)
		text = text[len(line):]
	}
}

// sep appends what comes before column i's text.
func (t *tableWriter) sep(b []byte, i int) []byte {
	if i > 0 {
		return append(b, " | "...)
	}
	return append(b, ' ')
}

// pad fills column i after text of width w; the last column is not padded,
// so lines carry no trailing blanks.
func (t *tableWriter) pad(b []byte, i, w int) []byte {
	if i < len(t.cols)-1 {
		return repeat(b, ' ', t.widths[i]-w)
	}
	return b
}

func repeat(b []byte, c byte, n int) []byte {
	for range n {
		b = append(b, c)
	}
	return b
}
