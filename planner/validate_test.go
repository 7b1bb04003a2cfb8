package planner_test

import (
	"strings"
	"testing"

	"github.com/sase-cep/sase/optimizer"
	"github.com/sase-cep/sase/planner"
)

// TestValidate breaks valid plans one invariant at a time and checks that
// Validate names what broke.
func TestValidate(t *testing.T) {
	stream := testStream(t)
	const (
		q3      = "PATTERN SEQ(A a, B b, !C c, D d) WHERE [sym] AND [attr1] AND a.price < d.price WITHIN 6"
		closure = "PATTERN SEQ(A a, B+ b[], D d) WHERE avg(b[].price) > a.price WITHIN 6"
		runs    = "PATTERN SEQ(A a, B b) WHERE skip-till-next-match AND a.price < b.price WITHIN 6"
	)
	for _, tc := range []struct {
		name, query string
		engine      *optimizer.Engine
		breakIt     func(p *planner.Plan)
		want        string
	}{
		{"no source", q3, optimizer.Basic, func(p *planner.Plan) { p.Source = nil }, "no source"},
		{"no output", q3, optimizer.Basic, func(p *planner.Plan) { p.Output = nil }, "no output"},
		{"columns", q3, optimizer.Basic, func(p *planner.Plan) { p.Output = &planner.Transformation{Columns: p.Columns[:1]} },
			"the Transformation has 1 columns, the query 3"},
		{"column kind", q3, optimizer.Basic, func(p *planner.Plan) { p.Columns[0].Kind = planner.ColList },
			"column a reads component 0, which is not of its kind"},
		{"window lost", q3, optimizer.Basic, func(p *planner.Plan) { w, _ := planner.StageOf[*planner.Window](p); p.RemoveStage(w) },
			"the query's window 6 is neither in SSC (runtime stack) nor in a Window stage"},
		{"window twice", q3, optimizer.Basic, func(p *planner.Plan) {
			p.Source.(*planner.StackScan).WindowPushed = true
			p.Source.(*planner.StackScan).Window = 6
		},
			"has the window pushed and a Window stage too"},
		{"window bound", q3, optimizer.NFA, func(p *planner.Plan) { p.Source.(*planner.StackScan).Window = 7 },
			"has window 7 pushed, the query has WITHIN 6"},
		{"window stage bound", q3, optimizer.Basic, func(p *planner.Plan) { w, _ := planner.StageOf[*planner.Window](p); w.W = 60 },
			"the Window stage has 60, the query has WITHIN 6"},
		{"negation lost", q3, optimizer.Auto, func(p *planner.Plan) { n, _ := planner.StageOf[*planner.Negation](p); p.RemoveStage(n) },
			"the negations [2] are not all checked by a Negation stage"},
		{"closure lost", closure, optimizer.Basic, func(p *planner.Plan) { c, _ := planner.StageOf[*planner.ClosureOp](p); p.RemoveStage(c) },
			"the closures [1] are not all collected by a Closure stage"},
		{"stage order", closure, optimizer.Basic, func(p *planner.Plan) { p.Stages[0], p.Stages[1] = p.Stages[1], p.Stages[0] },
			"Selection comes before Closure, whose lists it may read"},
		{"stage twice", q3, optimizer.Basic, func(p *planner.Plan) { p.Stages = append(p.Stages, p.Stages[0]) }, "two Selection stages"},
		{"output as a stage", q3, optimizer.Basic, func(p *planner.Plan) { p.Stages = append(p.Stages, p.Output) },
			"a Transformation before the output"},
		{"not compiled", q3, optimizer.Basic, func(p *planner.Plan) { s, _ := planner.StageOf[*planner.Selection](p); s.Preds[0].Eval = nil },
			"the Selection: predicate a.price < d.price is not compiled"},
		{"states", q3, optimizer.Basic, func(p *planner.Plan) { p.Source.(*planner.StackScan).Comps = []int{0, 1} },
			"states [0 1] are not the positive singles [0 1 3]"},
		{"filters", q3, optimizer.AIS, func(p *planner.Plan) { p.Source.(*planner.AISScan).Filters = make([][]*planner.Pred, 2) },
			"has filters for 2 states, not 3"},
		{"multi without partition", q3, optimizer.MultiPAIS, func(p *planner.Plan) { p.Source.(*planner.AISScan).Partition = nil },
			"checks further equivalence tests without a partition"},
		{"foreign equivalence", q3, optimizer.PAIS, func(p *planner.Plan) { p.Source.(*planner.AISScan).Partition = &planner.Equiv{Text: "[x]"} },
			"uses [x], not an equivalence test of the query"},
		{"run scan stage", runs, optimizer.Auto, func(p *planner.Plan) { p.Stages = append(p.Stages, &planner.Window{W: 6}) },
			"a RunScan does Window itself"},
		{"recep stage", q3, optimizer.ReCEP, func(p *planner.Plan) { p.Stages = append(p.Stages, &planner.Window{W: 6}) },
			"ReCEP does Window itself"},
		{"recep negation", q3, optimizer.ReCEP, func(p *planner.Plan) {
			r := p.Source.(*planner.ReCEP)
			r.Verify.Negations = append(r.Verify.Negations, 2)
		},
			"the negations [2] are not each narrowed or verified once"},
		{"recep buffers", q3, optimizer.ReCEP, func(p *planner.Plan) { r := p.Source.(*planner.ReCEP); r.Cache.Buffers = r.Cache.Buffers[:2] },
			"the EventCache has 2 buffers for 4 components"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := compile(t, stream, tc.query)
			if err != nil {
				t.Fatal(err)
			}
			if p, err = optimizer.Optimize(p, tc.engine); err != nil {
				t.Fatal(err)
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("valid before breaking: %v", err)
			}
			tc.breakIt(p)
			err = p.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "plan: ") {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
