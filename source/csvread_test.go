package source

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// chunky reads its input in pieces of random size, as a pipe would.
type chunky struct {
	r   *rand.Rand
	buf []byte
}

func (c *chunky) Read(p []byte) (int, error) {
	if len(c.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+c.r.IntN(100_000))], c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

// randomCSV is lines of random fields over several read buffers: blank
// lines, \r\n and lone \r, and, from quoteFrom on (a fraction of the
// lines), quoted fields with commas, quotes and line breaks.
func randomCSV(r *rand.Rand, lines int, quoteFrom float64) []byte {
	var b []byte
	cells := []string{"", "1", "-20", "2.5", "abc", " x", "true", "\x00\xff", "a\rb", "é"}
	quoted := []string{`"a,b"`, `"say ""hi"""`, "\"two\nlines\"", `""`}
	for i := range lines {
		switch r.IntN(40) {
		case 0:
			b = append(b, '\n')
			continue
		case 1:
			b = append(b, "\r\n"...)
			continue
		}
		for k := range 1 + r.IntN(6) {
			if k > 0 {
				b = append(b, ',')
			}
			if float64(i) >= quoteFrom*float64(lines) && r.IntN(20) == 0 {
				b = append(b, quoted[r.IntN(len(quoted))]...)
			} else {
				b = append(b, cells[r.IntN(len(cells))]...)
			}
		}
		if r.IntN(10) == 0 {
			b = append(b, '\r')
		}
		if i < lines-1 || r.IntN(2) == 0 {
			b = append(b, '\n')
		}
	}
	return b
}

// TestCSVRecords checks the CSV file reader against encoding/csv: the
// same records starting on the same lines, over read buffers and from
// the switch to encoding/csv at the first quote on.
func TestCSVRecords(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, quoteFrom := range []float64{2, 0.7, 0} { // never, late, at once
		data := randomCSV(r, 300_000, quoteFrom)
		if len(data) < 2*csvReadSize {
			t.Fatalf("%d bytes: the input should span read buffers", len(data))
		}
		want := csv.NewReader(bytes.NewReader(data))
		want.FieldsPerRecord = -1
		got := newCSVRecords(&chunky{r: r, buf: data}, "t.csv", DefaultMaxLine, ',')
		for n := 0; ; n++ {
			wrec, werr := want.Read()
			grec, gline, gerr := got.next()
			if werr != nil || gerr != nil {
				if !errors.Is(werr, io.EOF) || !errors.Is(gerr, io.EOF) {
					t.Fatalf("quotes from %v, record %d: error %v, want %v", quoteFrom, n, gerr, werr)
				}
				break
			}
			wline, _ := want.FieldPos(0)
			var g []string
			for _, f := range grec {
				g = append(g, string(f))
			}
			if gline != wline || strings.Join(g, "|") != strings.Join(wrec, "|") || len(g) != len(wrec) {
				t.Fatalf("quotes from %v, record %d: line %d %q, want line %d %q", quoteFrom, n, gline, g, wline, wrec)
			}
		}
	}
}
