package planner_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/planner"
)

// TestStrategyPlacement checks where each conjunct of a strategy query is
// checked (docs/STRATEGIES.md, Where each condition is checked).
func TestStrategyPlacement(t *testing.T) {
	stream := testStream(t)
	p, err := compile(t, stream, "PATTERN SEQ(A a, B+ b[], C c, !D d) WHERE Skip_Till_Next_Match AND [sym] AND 1 = 1 AND a.price > 1 "+
		"AND b[1].price > a.price AND b[i].price > b[i-1].price AND count(b[]) >= 2 AND c.price > avg(b[].price) AND d.price > c.price "+
		"AND (c.price > 100 OR [attr1]) WITHIN 10")
	if err != nil {
		t.Fatal(err)
	}
	if p.Strategy != planner.NextMatch {
		t.Fatalf("strategy %v", p.Strategy)
	}
	scan, ok := p.Source.(*planner.RunScan)
	if !ok || len(scan.States) != 3 || len(scan.Partition) != 1 {
		t.Fatalf("source %v", p.Source)
	}
	texts := func(preds []*planner.Pred) []string {
		var out []string
		for _, pr := range preds {
			out = append(out, pr.Text)
		}
		return out
	}
	for _, tc := range []struct {
		state int
		where string
		got   []*planner.Pred
		want  []string
	}{
		{0, "begin", scan.States[0].Begin, []string{"1 = 1", "a.price > 1"}},
		{1, "begin", scan.States[1].Begin, []string{"b[1].price > a.price"}},
		{1, "take", scan.States[1].Take, []string{"b[i].price > b[i-1].price"}},
		{1, "end", scan.States[1].End, []string{"count(b[]) >= 2"}},
		{2, "begin", scan.States[2].Begin, []string{"c.price > avg(b[].price)", "c.price > 100 OR [attr1]"}},
	} {
		if got := texts(tc.got); !slices.Equal(got, tc.want) {
			t.Errorf("S%d %s: got %q, want %q", tc.state+1, tc.where, got, tc.want)
		}
	}
	names := []string{}
	for _, op := range p.Operators() {
		names = append(names, op.Name())
	}
	if want := []string{"RunScan", "Negation", "Transformation"}; !slices.Equal(names, want) {
		t.Errorf("ops %v, want %v", names, want)
	}
	// A nested equivalence test ending in a trailing closure is checked
	// when it ends.
	p, err = compile(t, stream, "PATTERN SEQ(A a, B+ b[]) WHERE strict-contiguity AND (b[1].price > 1 OR [attr1]) WITHIN 10")
	if err != nil {
		t.Fatal(err)
	}
	if st := p.Source.(*planner.RunScan).States[1]; len(st.End) != 1 || len(st.Begin) != 0 {
		t.Errorf("nested equivalence: begin %q, end %q", texts(st.Begin), texts(st.End))
	}
}

// TestStrategyExplainGolden prints strategy plans: the strategy and where
// each conjunct is checked.
func TestStrategyExplainGolden(t *testing.T) {
	stream := testStream(t)
	for name, query := range map[string]string{
		"next-kleene": "PATTERN SEQ(B+ b[], A a, !C c) WHERE skip-till-next-match AND [sym] AND b[1].price % 5 = 0 AND b[i].price > b[i-1].price AND avg(b[].price) > 3 AND a.price < 20 WITHIN 10",
		"any-seq":     "PATTERN SEQ(A a, B b) WHERE skip_till_any_match(a, b) { b.price > a.price }",
	} {
		t.Run(name, func(t *testing.T) {
			p, err := compile(t, stream, query)
			if err != nil {
				t.Fatal(err)
			}
			testkit.Golden(t, filepath.Join("..", "testdata", "explain", name+".basic.golden"), p.Explain(nil))
		})
	}
}
