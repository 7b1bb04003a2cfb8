package exec_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/planner"
	"github.com/sase-cep/sase/source"
)

// TestAlgebraAgainstFlat compares nested patterns with the union of the
// flat queries they mean (LANGUAGE.md §9.2) on random streams: OR as the
// union of its branches, an optional item as the union of its presence and
// absence, AND (on streams without equal timestamps) as the union of its
// orders, a bounded closure as a v1 closure with a length test.
func TestAlgebraAgainstFlat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		nested string
		flat   []string
		ties   bool // the equivalence needs distinct timestamps
	}{
		{"SEQ(A a, OR(B b, C c), D d) WHERE a.price < d.price WITHIN 6",
			[]string{"SEQ(A a, B b, D d) WHERE a.price < d.price WITHIN 6", "SEQ(A a, C c, D d) WHERE a.price < d.price WITHIN 6"}, true},
		{"SEQ(A a, B? b, !C n, D d) WITHIN 5",
			[]string{"SEQ(A a, B b, !C n, D d) WITHIN 5", "SEQ(A a, !C n, D d) WITHIN 5"}, true},
		{"SEQ(A a, SEQ(B b, C c)?, D d) WHERE [sym] WITHIN 6",
			[]string{"SEQ(A a, B b, C c, D d) WHERE [sym] WITHIN 6", "SEQ(A a, D d) WHERE [sym] WITHIN 6"}, true},
		{"AND(A a, B b, C c) WHERE a.price > b.price WITHIN 4",
			[]string{
				"SEQ(A a, B b, C c) WHERE a.price > b.price WITHIN 4", "SEQ(A a, C c, B b) WHERE a.price > b.price WITHIN 4",
				"SEQ(B b, A a, C c) WHERE a.price > b.price WITHIN 4", "SEQ(B b, C c, A a) WHERE a.price > b.price WITHIN 4",
				"SEQ(C c, A a, B b) WHERE a.price > b.price WITHIN 4", "SEQ(C c, B b, A a) WHERE a.price > b.price WITHIN 4",
			}, false},
		{"SEQ(A a, OR(SEQ(B b, AND(C c, D d)), D e), A f) WITHIN 6",
			[]string{"SEQ(A a, B b, C c, D d, A f) WITHIN 6", "SEQ(A a, B b, D d, C c, A f) WITHIN 6", "SEQ(A a, D e, A f) WITHIN 6"}, false},
		{"SEQ(A a, B{2,3} b[], C c) WITHIN 8",
			[]string{"SEQ(A a, B^2 b[], C c) WHERE b.LEN <= 3 WITHIN 8"}, true},
	}
	r := rand.New(rand.NewPCG(27, 9))
	for round := range 12 {
		for ci, c := range cases {
			stream := randomStream(r, c.ties)
			want := []string{}
			for _, q := range c.flat {
				got, err := randquery.Case{Name: "flat", StreamCSV: stream, Query: "PATTERN " + q}.Matches(context.Background(), "auto")
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, got...)
			}
			slices.Sort(want)
			want = slices.Compact(want)
			for _, engine := range []string{"basic", "auto"} {
				got, err := randquery.Case{Name: "nested", StreamCSV: stream, Query: "PATTERN " + c.nested}.Matches(context.Background(), engine)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("round %d case %d on %s: %s\nstream:\n%s\ngot  %d: %v\nwant %d: %v", round, ci, engine, c.nested, stream, len(got), got, len(want), want)
				}
			}
		}
	}
}

// randomStream makes 20-40 events of types A-D; with ties, equal
// timestamps are common, else every timestamp is distinct.
func randomStream(r *rand.Rand, ties bool) string {
	var b strings.Builder
	b.WriteString("type,ts,price,sym\n")
	ts := 1
	for range 20 + r.IntN(20) {
		if ties {
			ts += r.IntN(2)
		} else {
			ts += 1 + r.IntN(2)
		}
		fmt.Fprintf(&b, "%c,%d,%d,%c\n", 'A'+r.IntN(4), ts, r.IntN(10), 'x'+r.IntN(2))
	}
	return b.String()
}

// TestAlgebraEmitsAsItGoes runs v3 patterns on a stream read event by
// event. On the basic engine (the Algebra source) a match with WITHIN is
// out once the stream has passed its first ts + W, before the stream ends
// (a live stream's matches), and without WITHIN at the end; on auto an OR
// or optional pattern runs as flat plans, and an AND of single events as
// a join, which emit each match at its last event.
func TestAlgebraEmitsAsItGoes(t *testing.T) {
	csv := "type,ts,price\nA,1,1\nB,2,1\nC,3,1\nA,10,1\nB,12,1\nC,20,1\nD,40,1\n"
	stream, err := source.LoadCSV(strings.NewReader(csv), "live.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		query string
		// basic, auto: the ts of the event at which each match is out
		// (0: at the end).
		basic, auto []int64
	}{
		{"PATTERN OR(SEQ(A a, B b), SEQ(B b, C c)) WITHIN 5", []int64{10, 10, 20}, []int64{2, 3, 12}},
		{"PATTERN AND(A a, C c) WITHIN 5", []int64{10}, []int64{3}},
		{"PATTERN SEQ(A a, B? b, C c) WITHIN 10", []int64{12, 12, 40, 40}, []int64{3, 3, 20, 20}},
		{"PATTERN OR(SEQ(A a, B b), SEQ(B b, C c))", []int64{0, 0, 0, 0, 0, 0}, []int64{2, 3, 12, 12, 20, 20}},
	}
	for _, c := range cases {
		for name, want := range map[string][]int64{"basic": c.basic, "auto": c.auto} {
			q, err := bench.Compile(stream, c.query, name)
			if err != nil {
				t.Fatal(err)
			}
			var at []int64
			var now int64 // the ts of the event the stream is giving
			events := func(yield func(*event.Event) bool) {
				for ev := range stream.All() {
					now = ev.TS
					if !yield(ev) {
						return
					}
				}
				now = 0
			}
			if _, err := q.Run(context.Background(), events, func([]sase.Cell) bool { at = append(at, now); return true }); err != nil {
				t.Fatal(err)
			}
			slices.Sort(at)
			if !slices.Equal(at, want) {
				t.Errorf("%s on %s: matches out at the events at %v, want %v", c.query, name, at, want)
			}
		}
	}
}

// TestUnionAgainstAlgebra runs v3 patterns that every engine but basic
// rewrites into a union of flat plans against the basic engine's Algebra
// source on random streams with equal timestamps: OR with a shared
// variable, nested and optional groups, negations between positives, a
// bounded closure, conjuncts that read a variable a branch leaves
// unbound, equivalence tests.
func TestUnionAgainstAlgebra(t *testing.T) {
	t.Parallel()
	patterns := []string{
		"SEQ(A a, OR(SEQ(B b, !C n, D d), C c)?, D e) WHERE b.price > a.price AND (c.price > 4 OR e.price > 4) WITHIN 6",
		"OR(SEQ(A a, B b), SEQ(A a, C c, D d)) WHERE [sym] AND a.price < 7 WITHIN 5",
		"SEQ(A a, B{2,3} b[], OR(C c, D d)) WHERE b[i].price >= a.price AND NOT has(c.price) WITHIN 8",
		"SEQ(!D n, A a, B? b, C? c, D d) WHERE n.price > a.price AND b.price + c.price < 12 AND (has(b.price) OR has(c.price) OR d.price > 3) WITHIN 5",
		"SEQ(A a, SEQ(B b, C c)?, D d, B^2 f[]) WHERE [sym] WITHIN 7",
	}
	r := rand.New(rand.NewPCG(27, 10))
	for _, pattern := range patterns {
		query := "PATTERN " + pattern
		stream := randomStream(r, true)
		s, err := source.LoadCSV(strings.NewReader(stream), "u.csv", source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if q, err := bench.Compile(s, query, "auto"); err != nil {
			t.Fatal(err)
		} else if _, ok := q.Plan().Source.(*planner.Union); !ok {
			t.Fatalf("%s runs on %T, want a union of flat plans", pattern, q.Plan().Source)
		}
		for round := range 8 {
			if round > 0 {
				stream = randomStream(r, true)
			}
			c := randquery.Case{Name: "union", StreamCSV: stream, Query: query}
			matches := caseMatches(t, c)
			want, err := matches("basic")
			if err != nil {
				t.Fatal(err)
			}
			for _, engine := range engines {
				got, err := matches(engine)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s on %s, round %d\nstream:\n%s\ngot  %d: %v\nwant %d: %v", pattern, engine, round, stream, len(got), got, len(want), want)
				}
			}
		}
	}
}

// TestUnionCounts runs ORs whose branches hand their matches to the
// consumer (one writing into the query's row, one whose cells are
// copied, one held per item by its equivalence test) into a callback, a
// count sink, one with a limit, a callback that stops, and on two
// workers: each must count what the callback sees, up to where it ends.
func TestUnionCounts(t *testing.T) {
	t.Parallel()
	stream, err := source.LoadCSV(strings.NewReader(maskedStream()), "masked.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"PATTERN OR(SEQ(A a, B b, C c), SEQ(A a, C c)) WITHIN 40",
		"PATTERN OR(SEQ(A a, B b), SEQ(B b, C c)) WHERE [s] WITHIN 40",
	} {
		for _, engine := range sase.EngineNames() {
			cq, err := bench.Compile(stream, q, engine)
			if err != nil {
				t.Fatal(err)
			}
			var rows int64
			stats, err := cq.Run(context.Background(), stream.All(), func([]sase.Cell) bool { rows++; return true })
			if err != nil {
				t.Fatal(err)
			}
			n := stats.Matches
			if n == 0 || rows != n {
				t.Fatalf("%s on %s: %d matches counted, %d seen", q, engine, n, rows)
			}
			for _, limit := range []int64{0, n / 3} {
				for _, workers := range []int{1, 2} {
					var got int64
					count := &sase.Chunks{Put: func(_ [][]byte, rows int) bool { got += int64(rows); return true }, Limit: limit}
					if _, err := cq.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true }, sase.WithChunks(count), sase.WithWorkers(workers)); err != nil {
						t.Fatal(err)
					}
					if want := cmp.Or(limit, n); got != want {
						t.Errorf("%s on %s, limit %d, %d workers: a count finds %d matches, want %d", q, engine, limit, workers, got, want)
					}
				}
			}
			rows = 0
			stats, err = cq.Run(context.Background(), stream.All(), func([]sase.Cell) bool { rows++; return rows < n/2 })
			if err != nil {
				t.Fatal(err)
			}
			if stats.Matches != n/2 || rows != n/2 {
				t.Errorf("%s on %s: a consumer that stops at match %d saw %d, the run counts %d", q, engine, n/2, rows, stats.Matches)
			}
		}
	}
}
