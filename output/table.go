package output

import (
	"unicode/utf8"

	"github.com/sase-cep/sase"
)

// tablePage is how many rows the table collects before it prints: widths
// come from the rows at hand, so a huge result streams out page by page.
// Widths only grow, so a later page may be wider than the header.
const tablePage = 1000

// tableWriter prints aligned columns like psql. Cells are rendered into one
// byte arena per page, and the page into one buffer written at once.
type tableWriter struct {
	out     sink
	cols    []Column
	ev      *eventFormat
	header  func(string) string
	widths  []int
	arena   []byte
	ends    []int  // per cell of the page: its end offset in arena
	right   []bool // per cell: right-aligned (a number)
	rows    int
	page    []byte
	started bool // header printed
}

func newTable(out sink, cols []Column, ev *eventFormat, header func(string) string) *tableWriter {
	t := &tableWriter{out: out, cols: cols, ev: ev, header: header, widths: make([]int, len(cols))}
	for i, c := range cols {
		t.widths[i] = utf8.RuneCountInString(c.Name)
	}
	return t
}

func (t *tableWriter) Row(cells []sase.Cell) error {
	for i, c := range cells {
		right := false
		switch t.cols[i].Kind {
		case Value:
			right = c.Value.IsNumber()
			t.arena = c.Value.AppendText(t.arena)
		case Event:
			t.arena = t.ev.appendText(t.arena, c.Event)
		case List:
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
	if t.rows > 0 || !t.started {
		return t.flush()
	}
	return t.out.err
}

// flush prints the collected page, and the header before the first one.
func (t *tableWriter) flush() error {
	n := len(t.cols)
	for k, end := range t.ends {
		if w := utf8.RuneCount(t.arena[t.start(k):end]); w > t.widths[k%n] {
			t.widths[k%n] = w
		}
	}
	b := t.page[:0]
	if !t.started {
		t.started = true
		for i, c := range t.cols {
			b = t.sep(b, i)
			b = append(b, t.header(c.Name)...)
			b = t.pad(b, i, utf8.RuneCountInString(c.Name))
		}
		b = append(b, '\n')
		for i, w := range t.widths {
			if i > 0 {
				b = append(b, '+')
			}
			for range w + 2 {
				b = append(b, '-')
			}
		}
		b = append(b, '\n')
	}
	for k, end := range t.ends {
		i := k % n
		text := t.arena[t.start(k):end]
		b = t.sep(b, i)
		if t.right[k] {
			b = spaces(b, t.widths[i]-utf8.RuneCount(text))
			b = append(b, text...)
		} else {
			b = append(b, text...)
			b = t.pad(b, i, utf8.RuneCount(text))
		}
		if i == n-1 {
			b = append(b, '\n')
		}
	}
	t.page = b
	t.arena, t.ends, t.right, t.rows = t.arena[:0], t.ends[:0], t.right[:0], 0
	return t.out.write(b)
}

func (t *tableWriter) start(k int) int {
	if k == 0 {
		return 0
	}
	return t.ends[k-1]
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
		return spaces(b, t.widths[i]-w)
	}
	return b
}

func spaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}
