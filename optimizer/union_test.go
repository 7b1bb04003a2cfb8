package optimizer

import (
	"path/filepath"
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/planner"
)

// TestUnion checks which v3 patterns the optimizer runs as a union of
// flat plans and which stay on the Algebra source, and prints the union
// of one pattern with every rewrite (testdata/explain/union.auto.golden).
func TestUnion(t *testing.T) {
	for _, tc := range []struct {
		query string
		union int // the number of flat plans; 0: the Algebra source
	}{
		{"PATTERN SEQ(A a, OR(SEQ(B b, !C n, D d), C c)?, D e, B{2,3} f[], A g) WHERE [sym] AND b.price > a.price AND (c.price > 1 OR e.price > 2) AND n.price > d.price WITHIN 10", 3},
		{"PATTERN OR(SEQ(A a, B b), SEQ(C c, D d))", 2},
		{"PATTERN SEQ(A a, B? b, C c) WITHIN 5", 2},
		{"PATTERN AND(A a, B b) WITHIN 5", 0},                                     // equal ts: not a flat SEQ
		{"PATTERN SEQ(A a, B* b[], C c) WITHIN 5", 0},                             // an empty closure: no flat form
		{"PATTERN OR(SEQ(A a, B b), SEQ(B b, A a))", 0},                           // two branches bind a and b
		{"PATTERN SEQ(A a, B? b, !C n, D d) WHERE n.price > b.price WITHIN 5", 0}, // the negation reads b, unbound in one branch
	} {
		p := rulesPlan(t, tc.query)
		p, err := Optimize(p, Auto)
		if err != nil {
			t.Fatal(err)
		}
		u, ok := p.Source.(*planner.Union)
		switch {
		case tc.union == 0 && ok:
			t.Errorf("%s: a union of %d flat plans, want the Algebra source", tc.query, len(u.Branches))
		case tc.union > 0 && !ok:
			t.Errorf("%s: the source is %T, want a union of %d flat plans", tc.query, p.Source, tc.union)
		case ok && len(u.Branches) != tc.union:
			t.Errorf("%s: %d flat plans, want %d", tc.query, len(u.Branches), tc.union)
		}
	}
	p, err := Optimize(rulesPlan(t, "PATTERN SEQ(A a, OR(SEQ(B b, !C n, D d), C c)?, D e, B{2,3} f[], A g) WHERE [sym] AND b.price > a.price AND (c.price > 1 OR e.price > 2) AND n.price > d.price WITHIN 10"), Auto)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, filepath.Join("..", "testdata", "explain", "union.auto.golden"), p.Explain(nil))
}

// TestJoinFlatAnd checks which AND patterns run as a join on every engine
// but basic, and prints one (testdata/explain/join.auto.golden).
func TestJoinFlatAnd(t *testing.T) {
	const q = "PATTERN AND(A a, B b, ANY(C, D) c) WHERE [sym] AND a.price > 3 AND b.price < c.price WITHIN 10"
	for _, tc := range []struct {
		query string
		join  bool
	}{
		{q, true},
		{"PATTERN AND(A a, B b)", true},
		{"PATTERN AND(A a, B? b) WITHIN 5", false},          // an optional item
		{"PATTERN AND(A a, SEQ(B b, C c)) WITHIN 5", false}, // a group
		{"PATTERN SEQ(D d, AND(A a, B b)) WITHIN 5", false}, // not at the top
	} {
		for _, e := range []*Engine{Basic, Auto} {
			p, err := Optimize(rulesPlan(t, tc.query), e)
			if err != nil {
				t.Fatal(err)
			}
			a, ok := p.Source.(*planner.Algebra)
			if want := tc.join && e != Basic; !ok || a.Join != want {
				t.Errorf("%s on %s: source %T, join %v, want a join %v", tc.query, e.Name, p.Source, ok && a.Join, want)
			}
		}
	}
	p, err := Optimize(rulesPlan(t, q), Auto)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, filepath.Join("..", "testdata", "explain", "join.auto.golden"), p.Explain(nil))
}
