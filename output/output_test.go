package output

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/source"
)

// outputRow is a match of SEQ(stock1 a, stock2+ b[]) RETURN a, b, a.price.
func outputRow() (Schema, []sase.Cell) {
	st := source.GenerateStocks("s", source.DefaultStockConfig())
	cols := []Column{{Name: "a", Kind: Event}, {Name: "b", Kind: List}, {Name: "a.price", Kind: Value}}
	row := []sase.Cell{{Event: st.Events[0]}, {List: st.Events[1:4]}, {Value: event.IntValue(12)}}
	return Schema{Columns: cols, Events: st.Schema}, row
}

// TestOutputAllocs checks that writing a match allocates nothing once the
// writer's buffers have grown (the table's page arena included).
func TestOutputAllocs(t *testing.T) {
	sc, row := outputRow()
	for _, f := range Formats {
		w := New(f, io.Discard, sc)
		for range tablePage + 1 { // grow every buffer, and print one page
			w.Row(row)
		}
		if n := testing.AllocsPerRun(100, func() { w.Row(row) }); n != 0 {
			t.Errorf("%s: %v allocations per match", f, n)
		}
	}
}

func BenchmarkOutput(b *testing.B) {
	sc, row := outputRow()
	for _, f := range Formats {
		b.Run(string(f), func(b *testing.B) {
			w := New(f, io.Discard, sc)
			b.ReportAllocs()
			for b.Loop() {
				w.Row(row)
			}
			w.Finish()
		})
	}
}

// TestJSONCache checks the encoded-event cache: events that share a cache
// slot (seq 4096 apart), and a recycled event (same pointer, new seq),
// are each written with their own text.
func TestJSONCache(t *testing.T) {
	cfg := source.DefaultStockConfig()
	cfg.Events = textCacheSize + 2
	st := source.GenerateStocks("s", cfg)
	var out strings.Builder
	w := New(JSONL, &out, Schema{Columns: []Column{{Name: "a", Kind: Event}}, Events: st.Schema})
	uncached := &eventFormat{}
	uncached.extend(st.Schema)
	var want strings.Builder
	write := func(e *event.Event) {
		w.Row([]sase.Cell{{Event: e}})
		want.WriteString(`{"a":` + string(uncached.appendJSON(nil, e)) + "}\n")
	}
	first, far := st.Events[1], st.Events[textCacheSize+1] // the same slot
	write(first)
	write(far)
	write(first)
	recycled := *first
	recycled.Seq, recycled.TS = first.Seq+textCacheSize, first.TS+textCacheSize
	*first = recycled // same pointer, another event
	write(first)
	w.Finish()
	if out.String() != want.String() {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want.String())
	}
}

// failing is a writer that always fails.
type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// TestWriteErrorSticks checks that a writer reports its io.Writer's error
// from then on, in every format: from Row once it has written rows (a
// table page, a spill of JSON Lines or CSV), from Sync and Finish.
func TestWriteErrorSticks(t *testing.T) {
	sc, row := outputRow()
	for _, f := range Formats {
		w := New(f, failing{}, sc)
		var err error
		for range spillSize { // more rows than a page or a spill holds
			if err = w.Row(row); err != nil {
				break
			}
		}
		if f == Count && err == nil {
			err = w.Finish() // it writes nothing before
		}
		if err != io.ErrClosedPipe || w.Sync() != io.ErrClosedPipe || w.Finish() != io.ErrClosedPipe || w.Row(row) != io.ErrClosedPipe {
			t.Errorf("%s: Row = %v", f, err)
		}
	}
}

// TestCount checks the count format: one line with the number of rows,
// written at Finish, also for none.
func TestCount(t *testing.T) {
	sc, row := outputRow()
	for _, n := range []int{0, 1, 2500} {
		var out strings.Builder
		w := New(Count, &out, sc)
		for range n {
			w.Row(row)
		}
		if w.Sync(); out.Len() != 0 {
			t.Errorf("Sync wrote %q", out.String())
		}
		if err := w.Finish(); err != nil || out.String() != strconv.Itoa(n)+"\n" {
			t.Errorf("%d rows: %q, %v", n, out.String(), err)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, name := range []string{"table", " CSV", "JsonL "} {
		if _, err := ParseFormat(name); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil || err.Error() != `unknown format "xml" (formats: table, csv, jsonl, count)` {
		t.Errorf("ParseFormat(xml) = %v", err)
	}
}

// TestWallClockTimes checks that a table prints the timestamps of a
// stream with wall-clock times in RFC 3339, events' and a.ts columns
// alike, while CSV and JSON Lines keep the numbers.
func TestWallClockTimes(t *testing.T) {
	sc := event.NewSchema()
	sc.AddType("A")
	cols := []Column{{Name: "a", Kind: Event}, {Name: "a.ts", Kind: Value, Time: true}, {Name: "n", Kind: Value}}
	for _, tt := range []struct {
		format Format
		unit   time.Duration
		ts     int64
		want   string
	}{
		{Table, time.Millisecond, 1767225600500, " a                        | a.ts                   | n\n" +
			"--------------------------+------------------------+---------------\n" +
			" A@2026-01-01T00:00:00.5Z | 2026-01-01T00:00:00.5Z | 1767225600500\n"},
		{Table, time.Second, 1767225600, " a                      | a.ts                 | n\n" +
			"------------------------+----------------------+------------\n" +
			" A@2026-01-01T00:00:00Z | 2026-01-01T00:00:00Z | 1767225600\n"},
		{Table, 0, 1767225600500, " a               | a.ts          | n\n" +
			"-----------------+---------------+---------------\n" +
			" A@1767225600500 | 1767225600500 | 1767225600500\n"},
		{CSV, time.Millisecond, 1767225600500, "a,a.ts,n\n0,1767225600500,1767225600500\n"},
		{JSONL, time.Millisecond, 1767225600500, `{"a":{"type":"A","ts":1767225600500,"seq":0},"a.ts":1767225600500,"n":1767225600500}` + "\n"},
	} {
		e := &event.Event{Type: 0, TS: tt.ts}
		row := []sase.Cell{{Event: e}, {Value: event.IntValue(e.TS)}, {Value: event.IntValue(e.TS)}}
		var b strings.Builder
		w := New(tt.format, &b, Schema{Columns: cols, Events: sc, Unit: tt.unit})
		w.Row(row)
		w.Finish()
		if b.String() != tt.want {
			t.Errorf("%v, unit %v:\n%s\nwant\n%s", tt.format, tt.unit, b.String(), tt.want)
		}
	}
}

// TestUnboundCells checks how each format writes a v3 pattern's unbound
// variables (LANGUAGE.md §9.3): jsonl leaves the key out, csv and table
// an empty cell; a bound empty closure is [].
func TestUnboundCells(t *testing.T) {
	st := source.GenerateStocks("s", source.DefaultStockConfig())
	e := st.Events[0]
	cols := []Column{{Name: "a", Kind: Event}, {Name: "b", Kind: List}, {Name: "c", Kind: Event}}
	rows := [][]sase.Cell{{{}, {List: []*event.Event{}}, {Event: e}}, {{Event: e}, {}, {}}}
	for _, tc := range []struct {
		format string
		want   []string
	}{
		{"jsonl", []string{`{"b":[],"c":{`, `{"a":{`}},
		{"csv", []string{"a,b,c\n,[],0\n0,,\n"}},
		{"table", []string{" | [] | stock", " |    | \n"}},
	} {
		f, err := ParseFormat(tc.format)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		w := New(f, &out, Schema{Columns: cols, Events: st.Schema})
		for _, r := range rows {
			w.Row(r)
		}
		w.Finish()
		for _, want := range tc.want {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: %q lacks %q", tc.format, out.String(), want)
			}
		}
		if lines := strings.Split(out.String(), "\n"); tc.format == "jsonl" && strings.Contains(lines[1], `"b"`) {
			t.Errorf("jsonl writes an unbound list: %q", lines[1])
		}
	}
}
