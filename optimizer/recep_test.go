package optimizer

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/planner"
)

func texts(preds []*planner.Pred) []string {
	var out []string
	for _, pr := range preds {
		out = append(out, pr.Text)
	}
	return out
}

func TestReCEPRule(t *testing.T) {
	p := basicPlan(t, "PATTERN SEQ(!A n0, A a, B+ b[], C c, !D n1, D d, !C n2) "+
		"WHERE [attr3 = 'x'] AND [attr1] AND a.attr4 > 1 AND b[i].attr4 > 2 AND b[i].attr4 > b[i-1].attr4 "+
		"AND n0.attr2 = d.attr2 AND n1.attr4 > c.attr4 AND n1.attr1 > 0 AND n2.attr4 < b[1].attr4 "+
		"AND avg(b[].attr4) > a.attr4 AND c.attr4 != d.attr4 WITHIN 6")
	if !(recepRule{}).Apply(p) {
		t.Fatal("the rule did not fire")
	}
	if (recepRule{}).Apply(p) {
		t.Fatal("the rule fired twice")
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	r, ok := p.Source.(*planner.ReCEP)
	if !ok || len(p.Stages) != 0 {
		t.Fatalf("source %T, stages %v", p.Source, p.Stages)
	}
	cache, filter, verify := &r.Cache, &r.Filter, &r.Verify
	if cache.Partition == nil || cache.Partition.Attr != "attr1" || !cache.HasWindow || cache.Window != 6 {
		t.Errorf("cache partition %v window %v/%d", cache.Partition, cache.HasWindow, cache.Window)
	}
	for i, want := range []struct{ filters, residual []string }{
		{nil, []string{"n0.attr2 = d.attr2"}},
		{[]string{"a.attr4 > 1"}, nil},
		{[]string{"b[i].attr4 > 2"}, []string{"b[i].attr4 > b[i-1].attr4"}},
		{nil, nil},
		{[]string{"n1.attr1 > 0"}, []string{"n1.attr4 > c.attr4"}},
		{nil, nil},
		{nil, []string{"n2.attr4 < b[1].attr4"}},
	} {
		b := cache.Buffers[i]
		if b.Comp != i || !slices.Equal(texts(b.Filters), want.filters) || !slices.Equal(texts(b.Residual), want.residual) {
			t.Errorf("buffer %d: filters %v residual %v, want %v %v", i, texts(b.Filters), texts(b.Residual), want.filters, want.residual)
		}
		if len(b.Consts) != 1 || b.Consts[0].Attr != "attr3" {
			t.Errorf("buffer %d: consts %v", i, b.Consts)
		}
	}
	// n0 reads d, the trigger; n1 reads c, bound before d; n2 is at the end.
	if !slices.Equal(filter.Narrowed, []int{0, 4}) || !slices.Equal(verify.Negations, []int{6}) {
		t.Errorf("narrowed %v, verified negations %v", filter.Narrowed, verify.Negations)
	}
	if !slices.Equal(texts(verify.Preds), []string{"avg(b[].attr4) > a.attr4", "c.attr4 != d.attr4"}) ||
		len(verify.Equivs) != 1 || !slices.Equal(verify.Closures, []int{2}) {
		t.Errorf("verify preds %v equivs %v closures %v", texts(verify.Preds), verify.Equivs, verify.Closures)
	}
	p = basicPlan(t, "PATTERN SEQ(A a, !C n, B b, D d) WHERE n.attr4 > b.attr4 WITHIN 6")
	(recepRule{}).Apply(p)
	if nf := p.Source.(*planner.ReCEP).Filter.Narrowed; len(nf) != 0 {
		t.Errorf("a negation reading the positive after it was narrowed: %v", nf)
	}
}

// TestReCEPGolden prints the recep plan of the SASE paper's Q3.
func TestReCEPGolden(t *testing.T) {
	p, err := Optimize(basicPlan(t, q3), ReCEP)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "testdata", "explain", "q3.recep.golden")
	testkit.Golden(t, path, p.Explain(nil))
}
