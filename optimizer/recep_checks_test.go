package optimizer

import (
	"slices"
	"testing"

	"github.com/sase-cep/sase/planner"
)

func TestReCEPChecks(t *testing.T) {
	p := basicPlan(t, "PATTERN SEQ(A a, B b, C+ c[], D d) WHERE a.attr4 < b.attr4 AND b.attr4 < d.attr4 "+
		"AND a.attr4 = d.attr4 AND avg(c[].attr4) > a.attr4 AND 1 = 1 WITHIN 6")
	if (recepChecks{}).Apply(p) {
		t.Fatal("the rule fired on a basic plan")
	}
	(recepRule{}).Apply(p)
	if !(recepChecks{}).Apply(p) {
		t.Fatal("the rule did not fire")
	}
	if (recepChecks{}).Apply(p) {
		t.Fatal("the rule fired twice")
	}
	// d triggers the search and is bound first, then a, then b.
	// Those reading one positive and d filter that positive's buffer.
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	qf := &p.Source.(*planner.ReCEP).Filter
	if len(qf.Checks) != 3 || qf.Checks[0] != nil || !slices.Equal(texts(qf.Checks[1]), []string{"a.attr4 < b.attr4"}) || qf.Checks[2] != nil {
		t.Errorf("checks %v", qf.Checks)
	}
	if len(qf.Pre) != 3 || !slices.Equal(texts(qf.Pre[0]), []string{"a.attr4 = d.attr4"}) ||
		!slices.Equal(texts(qf.Pre[1]), []string{"b.attr4 < d.attr4"}) || qf.Pre[2] != nil {
		t.Errorf("pre %v", qf.Pre)
	}
	if got := texts(p.Source.(*planner.ReCEP).Verify.Preds); !slices.Equal(got, []string{"avg(c[].attr4) > a.attr4", "1 = 1"}) {
		t.Errorf("left to AttributeVerify: %v", got)
	}
	p = basicPlan(t, "PATTERN SEQ(A a, B+ b[], D d) WHERE count(b[]) > 1 WITHIN 6")
	(recepRule{}).Apply(p)
	if (recepChecks{}).Apply(p) {
		t.Error("the rule fired without a predicate to move")
	}
}
