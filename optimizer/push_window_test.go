package optimizer

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/planner"
	"github.com/sase-cep/sase/source"
)

func basicPlan(t *testing.T, query string) *planner.Plan {
	t.Helper()
	csv := "type,ts,attr1,attr2,attr3,attr4\nA,1,1,1,x,1\nB,2,1,1,x,2\nC,3,1,1,x,3\nD,4,1,1,x,4\n"
	stream, err := source.LoadCSV(strings.NewReader(csv), "q3.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := &ast.Source{Name: "<input>", Text: query}
	q, err := grammar.ParseQuery(src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := planner.Compile(q, src, stream)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("the basic plan of %s: %v", query, err)
	}
	return p
}

const q3 = "EVENT SEQ(A x1, B x2, !(C x3), D x4) WHERE [attr1, attr2] AND x1.attr3 = 'x' AND x1.attr4 < x4.attr4 WITHIN 6"

func TestPushWindow(t *testing.T) {
	p := basicPlan(t, q3)
	if !(pushWindow{}).Apply(p) {
		t.Fatal("the rule did not fire on a plan with a Window operator")
	}
	ssc := p.Source.(*planner.StackScan)
	if !ssc.WindowPushed || ssc.Window != 6 {
		t.Errorf("SSC window = %v/%d, want pushed/6", ssc.WindowPushed, ssc.Window)
	}
	if _, ok := planner.StageOf[*planner.Window](p); ok {
		t.Error("the Window stage is still in the plan")
	}
	if err := p.Validate(); err != nil {
		t.Error(err)
	}
	if (pushWindow{}).Apply(p) {
		t.Error("the rule fired twice")
	}
	if (pushWindow{}).Apply(basicPlan(t, "PATTERN SEQ(A a, B b)")) {
		t.Error("the rule fired on a plan without WITHIN")
	}
}

// TestOptimizeGolden prints the auto plan of the SASE paper's Q3.
func TestOptimizeGolden(t *testing.T) {
	p, err := Optimize(basicPlan(t, q3), Auto)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, filepath.Join("..", "testdata", "explain", "q3.auto.golden"), p.Explain(nil))
}

func TestOptimizeEngines(t *testing.T) {
	if _, err := LookupEngine("warp"); err == nil || !strings.Contains(err.Error(), "unknown engine") {
		t.Errorf("unknown engine: got %v", err)
	}
	if e, err := LookupEngine("ReCEP"); err != nil || e != ReCEP {
		t.Errorf("LookupEngine(ReCEP) = %v, %v; want the recep engine", e, err)
	}
	p, err := Optimize(basicPlan(t, q3), Basic)
	if err != nil || len(p.Rules) != 0 || p.Engine != "basic" {
		t.Errorf("basic: rules %v, engine %s, err %v", p.Rules, p.Engine, err)
	}
}
