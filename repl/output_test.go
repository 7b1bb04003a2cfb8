package repl

import (
	"bufio"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/fatih/color"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
	"github.com/sase-cep/sase/source"
)

// outputRow is a match of SEQ(stock1 a, stock2+ b[]) RETURN a, b, a.price.
func outputRow() ([]planner.Column, []sase.Cell, *event.Schema) {
	st := source.GenerateStocks("s", source.DefaultStockConfig())
	cols := []planner.Column{{Name: "a", Kind: planner.ColEvent}, {Name: "b", Kind: planner.ColList}, {Name: "a.price", Kind: planner.ColValue}}
	row := []sase.Cell{{Event: st.Events[0]}, {List: st.Events[1:4]}, {Value: event.IntValue(12)}}
	return cols, row, st.Schema
}

// TestOutputAllocs checks that writing a match allocates nothing once the
// writer's buffers have grown (the table's page arena included).
func TestOutputAllocs(t *testing.T) {
	cols, row, schema := outputRow()
	for _, f := range formats {
		w := newResultWriter(f, bufio.NewWriter(io.Discard), cols, schema, nil, color.New())
		for range tablePage + 1 { // grow every buffer, and print one page
			w.row(row)
		}
		if n := testing.AllocsPerRun(100, func() { w.row(row) }); n != 0 {
			t.Errorf("%s: %v allocations per match", f, n)
		}
	}
}

func BenchmarkOutput(b *testing.B) {
	cols, row, schema := outputRow()
	for _, f := range formats {
		b.Run(string(f), func(b *testing.B) {
			w := newResultWriter(f, bufio.NewWriter(io.Discard), cols, schema, nil, color.New())
			b.ReportAllocs()
			for b.Loop() {
				w.row(row)
			}
			w.finish()
		})
	}
}

// TestLineSink checks that a background query's output reaches the
// terminal in whole lines, each prefixed, however its writes are cut.
func TestLineSink(t *testing.T) {
	for _, prefix := range []string{"", "[2] "} {
		var out strings.Builder
		s := &lineSink{t: &terminal{out: &out}, prefix: []byte(prefix)}
		var seen []string
		for _, w := range []string{"ab", "c\nde", "f\ng\nh", "", "\n", "tail"} {
			s.Write([]byte(w))
			seen = append(seen, out.String())
		}
		s.close()
		p := prefix
		want := []string{"", p + "abc\n", p + "abc\n" + p + "def\n" + p + "g\n", p + "abc\n" + p + "def\n" + p + "g\n",
			p + "abc\n" + p + "def\n" + p + "g\n" + p + "h\n", p + "abc\n" + p + "def\n" + p + "g\n" + p + "h\n"}
		if !slices.Equal(seen, want) {
			t.Errorf("prefix %q: after each write\n%q\nwant\n%q", prefix, seen, want)
		}
		if got := out.String(); got != want[len(want)-1]+p+"tail\n" {
			t.Errorf("prefix %q: after close %q", prefix, got)
		}
	}
}

// TestJSONCache checks the encoded-event cache: events that share a cache
// slot (seq 4096 apart), and a recycled event (same pointer, new seq),
// are each written with their own text.
func TestJSONCache(t *testing.T) {
	cfg := source.DefaultStockConfig()
	cfg.Events = jsonCacheSize + 2
	st := source.GenerateStocks("s", cfg)
	cols := []planner.Column{{Name: "a", Kind: planner.ColEvent}}
	var out strings.Builder
	bw := bufio.NewWriter(&out)
	w := newResultWriter(FormatJSONL, bw, cols, st.Schema, nil, color.New())
	uncached := &eventFormat{}
	uncached.extend(st.Schema)
	var want strings.Builder
	write := func(e *event.Event) {
		w.row([]sase.Cell{{Event: e}})
		want.WriteString(`{"a":` + string(uncached.appendJSON(nil, e)) + "}\n")
	}
	first, far := st.Events[1], st.Events[jsonCacheSize+1] // the same slot
	write(first)
	write(far)
	write(first)
	recycled := *first
	recycled.Seq, recycled.TS = first.Seq+jsonCacheSize, first.TS+jsonCacheSize
	*first = recycled // same pointer, another event
	write(first)
	bw.Flush()
	if out.String() != want.String() {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want.String())
	}
}
