package derive

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/internal/teststream"
)

// record is an Output that notes each released event with the input time
// at which it was released.
type record struct {
	now    *int64
	got    []string
	closed bool
}

func (r *record) Event(p *Producer, e *event.Event) {
	r.got = append(r.got, fmt.Sprintf("p%d:%s@%d (at %d)", p.index, e.Attrs[0], e.TS, *r.now))
}
func (r *record) Flush() {}
func (r *record) Close() { r.closed = true }

// row is a match whose attribute is k and whose ts-fixing cells are an
// event at ts and, if list is set, a closure ending at list.
func row(k string, ts int64, list ...int64) []sase.Cell {
	cells := []sase.Cell{{Value: event.StringValue(k)}, {Event: &event.Event{TS: ts}}}
	if len(list) > 0 {
		var l []*event.Event
		for _, t := range list {
			l = append(l, &event.Event{TS: t})
		}
		cells = append(cells, sase.Cell{List: l})
	}
	return cells
}

// input yields events at ts, setting *now to each one's ts first.
func input(now *int64, ts ...int64) iter.Seq[*event.Event] {
	return func(yield func(*event.Event) bool) {
		for _, t := range ts {
			*now = t
			if !yield(&event.Event{TS: t}) {
				return
			}
		}
	}
}

// A producer whose matches complete on their last event releases an event
// as soon as its input passes its ts; a late one W later. Matches emitted
// out of ts order come out in ts order, equal ts in emission order.
func TestRelease(t *testing.T) {
	tests := []struct {
		name   string
		late   bool
		w      int64
		emit   map[int64][][]sase.Cell // input ts -> the matches the query emits on that event
		inputs []int64
		want   []string
	}{
		{
			name:   "on time",
			inputs: []int64{1, 2, 2, 4, 7},
			emit: map[int64][][]sase.Cell{
				2: {row("a", 2), row("b", 2)},
				4: {row("c", 4)},
			},
			want: []string{"p0:a@2 (at 4)", "p0:b@2 (at 4)", "p0:c@4 (at 7)"},
		},
		{
			// A match of SEQ(A a, !B n) WITHIN 3 with a at 1 completes
			// once the input passes 4; one with a trailing closure ends at
			// its last element.
			name: "late", late: true, w: 3,
			inputs: []int64{1, 2, 3, 5, 6, 9, 20},
			emit: map[int64][][]sase.Cell{
				5:  {row("a", 1), row("b", 2)},
				6:  {row("c", 3)},
				9:  {row("d", 5), row("e", 3, 4, 6)},
				20: {row("f", 9)},
			},
			want: []string{"p0:a@1 (at 6)", "p0:b@2 (at 9)", "p0:c@3 (at 20)", "p0:d@5 (at 20)", "p0:e@6 (end)", "p0:f@9 (end)"},
		},
		{
			name: "late without a window", late: true, w: math.MaxInt64,
			inputs: []int64{1, 5, 9},
			emit:   map[int64][][]sase.Cell{5: {row("b", 5), row("a", 1)}},
			want:   []string{"p0:a@1 (end)", "p0:b@5 (end)"},
		},
		{
			name: "late with a zero window", late: true, w: 0,
			inputs: []int64{1, 2, 3},
			emit:   map[int64][][]sase.Cell{2: {row("a", 1)}, 3: {row("b", 2)}},
			want:   []string{"p0:a@1 (at 3)", "p0:b@2 (end)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var now int64
			out := &record{now: &now}
			p, err := New(out).Add([]string{"k"}, tt.late, tt.w)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int64]bool{}
			for e := range p.Follow(input(&now, tt.inputs...)) {
				if !seen[e.TS] {
					seen[e.TS] = true
					for _, r := range tt.emit[e.TS] {
						p.Row(r)
					}
				}
			}
			now = -1
			p.Finish()
			got := strings.ReplaceAll(strings.Join(out.got, "\n"), "(at -1)", "(end)")
			if want := strings.Join(tt.want, "\n"); got != want {
				t.Errorf("released\n%s\nwant\n%s", got, want)
			}
			if !out.closed {
				t.Error("the output was not closed")
			}
		})
	}
}

// Two producers into one stream: an event is released once both have
// passed it; equal ts put the first producer's first.
func TestProducersMerge(t *testing.T) {
	var now int64
	out := &record{now: &now}
	s := New(out)
	p0, _ := s.Add([]string{"k"}, false, 0)
	p1, _ := s.Add([]string{"k"}, true, 2)
	next0, stop0 := iter.Pull(p0.Follow(input(&now, 1, 3, 6, 8)))
	defer stop0()
	next1, stop1 := iter.Pull(p1.Follow(input(&now, 1, 3, 6, 8)))
	defer stop1()
	// step hands both producers their input's event at ts, then the
	// matches their queries emit on it.
	step := func(e0, e1 []sase.Cell) {
		next0()
		next1()
		if e1 != nil {
			p1.Row(e1)
		}
		if e0 != nil {
			p0.Row(e0)
		}
	}
	step(nil, nil)
	step(row("a", 3), row("b", 3)) // p1's b is emitted first, released after a
	step(row("c", 6), row("d", 1))
	step(nil, nil)
	if _, err := s.Add([]string{"k"}, false, 0); err != ErrStarted {
		t.Errorf("Add after a release: %v, want ErrStarted", err)
	}
	now = -1
	p0.Finish()
	if out.closed {
		t.Error("closed while a producer is open")
	}
	p1.Finish()
	want := "p1:d@1 (at 8)\np0:a@3 (at 8)\np1:b@3 (at 8)\np0:c@6 (end)"
	if got := strings.ReplaceAll(strings.Join(out.got, "\n"), "(at -1)", "(end)"); got != want {
		t.Errorf("released\n%s\nwant\n%s", got, want)
	}
	if !out.closed {
		t.Error("not closed after the last producer")
	}
	if _, err := s.Add([]string{"k"}, false, 0); err != ErrStarted {
		t.Errorf("Add after the end: %v, want ErrStarted", err)
	}
}

// The heap holds what a producer may still reorder, not the stream: a
// producer over a long input keeps at most the matches of its window.
func TestHeldEventsFollowTheWindow(t *testing.T) {
	var now int64
	s := New(&record{now: &now})
	p, _ := s.Add([]string{"k"}, true, 10)
	most := 0
	for e := range p.Follow(input(&now, seqTS(10000)...)) {
		p.Row(row("x", e.TS-5))
		most = max(most, s.heap.Len())
	}
	if most > 20 {
		t.Errorf("held up to %d events with a window of 10", most)
	}
}

func seqTS(n int) []int64 {
	ts := make([]int64, n)
	for i := range ts {
		ts[i] = int64(i)
	}
	return ts
}

// TestQueryAndLate: the producer's query, and whether it may complete a
// match after its last event on auto and on basic (a v3 pattern runs as
// a union, a join or the Algebra source's products as the plan says).
func TestQueryAndLate(t *testing.T) {
	stream := teststream.CSV(t, "s", "type,ts,x\nA,1,1\nB,2,2\nC,3,3\n")
	tests := []struct {
		query, producer string
		late            [2]bool // auto, basic
	}{
		{"PATTERN SEQ(A a, B b) RETURN a.x", "PATTERN SEQ(A a, B b) RETURN a.x, b AS `\x00last`", [2]bool{false, false}},
		{"PATTERN SEQ(A a, B b, !C c) WITHIN 3 RETURN a.x AS y", "PATTERN SEQ(A a, B b, !C c) WITHIN 3 RETURN a.x AS y, b AS `\x00last`", [2]bool{true, true}},
		{"PATTERN SEQ(A a, B b, C+ c[]) WITHIN 3 RETURN b.x", "PATTERN SEQ(A a, B b, C+ c[]) WITHIN 3 RETURN b.x, b AS `\x00last`, c AS `\x00closure`", [2]bool{true, true}},
		{"PATTERN SEQ(!A a, B) RETURN B.x", "PATTERN SEQ(!A a, B) RETURN B.x, B AS `\x00last`", [2]bool{false, false}},
		// A flat AND runs as a join on auto: each match at its last event.
		{"PATTERN AND(A a, B b) WITHIN 3 RETURN a.x", "PATTERN AND(A a, B b) WITHIN 3 RETURN a.x, a AS `\x00last0`, b AS `\x00last1`", [2]bool{false, true}},
		// A union is late when a branch is.
		{"PATTERN OR(SEQ(A a, B b), SEQ(C c, B d)) WITHIN 3 RETURN a.x", "", [2]bool{false, true}},
		{"PATTERN SEQ(OR(A a, C c), B b, !A n) WITHIN 3 RETURN b.x", "", [2]bool{true, true}},
		// A nested AND runs as the Algebra source's products.
		{"PATTERN SEQ(A a, AND(B b, C c)) WITHIN 3 RETURN a.x", "", [2]bool{true, true}},
	}
	for _, tt := range tests {
		q, err := grammar.ParseQuery(&ast.Source{Text: tt.query})
		if err != nil {
			t.Fatal(err)
		}
		if got := Query(q).String(); tt.producer != "" && got != tt.producer {
			t.Errorf("Query(%s) = %q, want %q", tt.query, got, tt.producer)
		}
		if got := q.String(); got != tt.query {
			t.Errorf("Query changed its argument to %s", got)
		}
		for i, name := range []string{"auto", "basic"} {
			e, err := sase.LookupEngine(name)
			if err != nil {
				t.Fatal(err)
			}
			pq, err := sase.CompileAST(Query(q), &ast.Source{Text: tt.query}, stream, sase.WithEngine(e))
			if err != nil {
				t.Fatalf("%s: %v", tt.query, err)
			}
			if got := pq.Late(); got != tt.late[i] {
				t.Errorf("on %s, Late(%s) = %v", name, tt.query, got)
			}
		}
	}
}

// Build merges the producers' parts stably by ts, the earlier producer's
// first at equal ts, with the union of their columns.
func TestBuild(t *testing.T) {
	ev := func(ts int64, vals ...event.Value) *event.Event { return &event.Event{TS: ts, Attrs: vals} }
	i := event.IntValue
	parts := []Part{
		{Cols: []string{"x", "y"}, Events: []*event.Event{ev(1, i(1), i(2)), ev(3, i(3), i(4)), ev(3, i(5), i(6))}},
		{Cols: []string{"z", "x"}, Events: []*event.Event{ev(0, i(7), i(8)), ev(3, i(9), event.Value{})}},
	}
	st := Build("d", 0, parts)
	var got []string
	for _, e := range st.Events {
		var attrs []string
		for slot, v := range e.Attrs {
			if !v.IsAbsent() {
				attrs = append(attrs, st.Schema.Attrs[slot]+"="+v.String())
			}
		}
		got = append(got, fmt.Sprintf("%d %s@%d %v", e.Seq, st.Schema.Types[e.Type].Name, e.TS, attrs))
	}
	want := []string{"0 d@0 [x=8 z=7]", "1 d@1 [x=1 y=2]", "2 d@3 [x=3 y=4]", "3 d@3 [x=5 y=6]", "4 d@3 [z=9]"}
	if !slices.Equal(got, want) {
		t.Errorf("built\n%q\nwant\n%q", got, want)
	}
	if typ := st.Schema.Types[0]; typ.Count != 5 || !slices.Equal(st.Schema.AttrsOf(0), []string{"x", "y", "z"}) {
		t.Errorf("schema: %d events, attributes %q", typ.Count, st.Schema.AttrsOf(0))
	}
	if parts[1].Events[0].Seq != 0 || parts[0].Events[1].Seq != 0 {
		t.Error("Build changed its parts")
	}
}

type discard struct{}

func (discard) Event(*Producer, *event.Event) {}
func (discard) Flush()                        {}
func (discard) Close()                        {}

// BenchmarkProducer is the cost of one match through a late producer with
// a window of 16: the event built from its row, held, and released in ts
// order.
func BenchmarkProducer(b *testing.B) {
	p, _ := New(discard{}).Add([]string{"k", "v"}, true, 16)
	events := make([]event.Event, b.N)
	for i := range events {
		events[i].TS = int64(i)
	}
	seq := func(yield func(*event.Event) bool) {
		for i := range events {
			if !yield(&events[i]) {
				return
			}
		}
	}
	cells := []sase.Cell{{Value: event.IntValue(1)}, {Value: event.FloatValue(2.5)}, {}}
	b.ReportAllocs()
	b.ResetTimer()
	for e := range p.Follow(seq) {
		cells[2].Event = e
		p.Row(cells)
	}
	p.Finish()
}
