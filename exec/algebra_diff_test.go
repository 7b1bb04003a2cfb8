package exec_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/internal/randquery"
)

// TestAlgebraAgainstFlat compares nested patterns with the union of the
// flat queries they mean (LANGUAGE.md §9.2) on random streams: OR as the
// union of its branches, an optional item as the union of its presence and
// absence, AND (on streams without equal timestamps) as the union of its
// orders, a bounded closure as a v1 closure with a length test.
func TestAlgebraAgainstFlat(t *testing.T) {
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
