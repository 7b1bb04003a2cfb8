package output

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/source"
)

// putRows are rows of a random walk's events (an event, a list of one to
// five, a value), and the schema to write them.
func putRows() (Schema, [][]sase.Cell) {
	cfg := source.DefaultStockConfig()
	cfg.Events, cfg.IncreaseProbability = 30000, 55
	st := source.GenerateStocks("s", cfg)
	cols := []Column{{Name: "a", Kind: Event}, {Name: "b", Kind: List}, {Name: "a.price", Kind: Value}}
	rnd := rand.New(rand.NewPCG(1, 2))
	var rows [][]sase.Cell
	for i := range len(st.Events) - 5 {
		rows = append(rows, []sase.Cell{{Event: st.Events[i]}, {List: st.Events[i+1 : i+2+rnd.IntN(4)]}, {Value: event.IntValue(int64(i))}})
	}
	return Schema{Columns: cols, Events: st.Schema}, rows
}

// putAll writes rows through w's Put as a split run's merge hands them
// on: encoded by three encoders in chunks of 1 to 3000 rows (a few bytes
// to more than a spill), several chunks a Put; the first error.
func putAll(w Writer, rows [][]sase.Cell) error {
	c := w.(Chunked)
	encs := []sase.Encode{c.NewEncoder(), c.NewEncoder(), c.NewEncoder()}
	rnd := rand.New(rand.NewPCG(3, 4))
	sizes := []int{1, 2, 10, 100, 3000}
	for len(rows) > 0 {
		var bufs [][]byte
		n := 0
		for range 1 + rnd.IntN(40) {
			k := min(len(rows)-n, sizes[rnd.IntN(len(sizes))])
			var b []byte
			for _, row := range rows[n : n+k] {
				b = encs[rnd.IntN(len(encs))](b, row)
			}
			bufs, n = append(bufs, b), n+k
		}
		if err := c.Put(bufs, n); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return w.Finish()
}

// vecWriter takes vectored writes (and plain ones), all into buf; short,
// if above 0, is how many bytes it takes before it fails.
type vecWriter struct {
	buf         bytes.Buffer
	short       int
	writes, vec int
}

var errShort = errors.New("short")

func (v *vecWriter) Write(p []byte) (int, error) {
	v.writes++
	return v.take(p)
}

func (v *vecWriter) take(p []byte) (int, error) {
	if v.short > 0 && v.buf.Len()+len(p) > v.short {
		n := v.short - v.buf.Len()
		v.buf.Write(p[:n])
		return n, errShort
	}
	return v.buf.Write(p)
}

func (v *vecWriter) WriteBuffers(bufs [][]byte) (int64, error) {
	v.vec++
	var n int64
	for _, b := range bufs {
		m, err := v.take(b)
		if n += int64(m); err != nil {
			return n, err
		}
	}
	return n, nil
}

// plainWriter has only Write.
type plainWriter struct{ v vecWriter }

func (p *plainWriter) Write(b []byte) (int, error) { return p.v.Write(b) }

// TestPutBytes: JSON Lines and CSV writers write the chunks Put takes as
// Row writes their rows, to the byte: over a plain io.Writer (copied into
// the spill), one with vectored writes, and a real file (writev on
// Linux); a writer that fails after some bytes stops Put with its error,
// which sticks, after a prefix of the rows.
func TestPutBytes(t *testing.T) {
	sc, rows := putRows()
	for _, f := range []Format{JSONL, CSV} {
		var want bytes.Buffer
		w := New(f, &want, sc)
		for _, row := range rows {
			w.Row(row)
		}
		if err := w.Finish(); err != nil || want.Len() < 3*spillSize+100 {
			t.Fatalf("%s: %d bytes, %v", f, want.Len(), err)
		}
		file, err := os.Create(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		vec, plain := &vecWriter{}, &plainWriter{}
		for _, tc := range []struct {
			name  string
			w     io.Writer
			bytes func() []byte
		}{
			{"plain", plain, plain.v.buf.Bytes},
			{"vectored", vec, vec.buf.Bytes},
			{"file", file, func() []byte {
				b, err := os.ReadFile(file.Name())
				if err != nil {
					t.Fatal(err)
				}
				return b
			}},
		} {
			if err := putAll(New(f, tc.w, sc), rows); err != nil {
				t.Fatalf("%s, %s: %v", f, tc.name, err)
			}
			if got := tc.bytes(); !bytes.Equal(got, want.Bytes()) {
				t.Errorf("%s, %s: %d bytes, not Row's %d", f, tc.name, len(got), want.Len())
			}
		}
		file.Close()
		if vec.vec == 0 || plain.v.vec != 0 {
			t.Errorf("%s: %d vectored writes to a vectored writer", f, vec.vec)
		}
		for _, short := range []int{1, spillSize - 1, 3*spillSize + 17} {
			vec, plain := &vecWriter{short: short}, &plainWriter{vecWriter{short: short}}
			for _, tc := range []struct {
				name string
				w    io.Writer
				v    *vecWriter
			}{{"plain", plain, &plain.v}, {"vectored", vec, vec}} {
				w := New(f, tc.w, sc)
				err := putAll(w, rows)
				if err != errShort || w.(Chunked).Put([][]byte{[]byte("x")}, 1) != errShort || w.Row(rows[0]) != errShort || w.Finish() != errShort {
					t.Errorf("%s, %s, short after %d: %v", f, tc.name, short, err)
				}
				if got := tc.v.buf.Bytes(); len(got) != short || !bytes.HasPrefix(want.Bytes(), got) {
					t.Errorf("%s, %s, short after %d: %d bytes written, not the first", f, tc.name, short, len(got))
				}
			}
		}
	}
}
