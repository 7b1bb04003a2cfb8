package source

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sase-cep/sase/event"
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
	t.Parallel()
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

// TestSmallInputSmallBuffer: a small input whose length the reader knows
// (a strings.Reader, a regular file) is read with a buffer of its size, not
// csvReadSize: a test's table loaded a thousand times allocated and cleared
// a megabyte each time.
func TestSmallInputSmallBuffer(t *testing.T) {
	const data = "type,ts,x\nA,1,1\nB,2,2\n"
	file := filepath.Join(t.TempDir(), "small.csv")
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		load func() (*event.Stream, error)
	}{
		{"csv from a string", func() (*event.Stream, error) {
			return LoadCSV(strings.NewReader(data), "small.csv", Options{})
		}},
		{"jsonl from a string", func() (*event.Stream, error) {
			return LoadJSONL(strings.NewReader(`{"type":"A","ts":1}`+"\n"), "small.jsonl", Options{})
		}},
		{"csv from a file", func() (*event.Stream, error) {
			f, err := os.Open(file)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return LoadCSV(f, "small.csv", Options{})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			st, err := tt.load()
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Events) == 0 {
				t.Fatal("no events")
			}
			// The event arena's first chunks (~0.7 MB, not cleared) are
			// there either way; a read buffer of csvReadSize on top of them
			// is not.
			if took := after.TotalAlloc - before.TotalAlloc; took >= csvReadSize {
				t.Errorf("loading a few bytes allocated %d bytes", took)
			}
		})
	}
}
