package optimizer

import (
	"slices"

	"github.com/sase-cep/sase/planner"
)

// pushChecks moves the predicates that read only positive singles from
// Selection into SC: construction binds the states from last to first, so
// a predicate is checked as soon as the earliest state it reads is bound,
// and a failing branch of the search is cut before its sequences are built
// (the dynamic filtering of SASE §4.2.2, for any predicate).
type pushChecks struct{}

func (pushChecks) Name() string { return "push-predicates-into-sc" }

func (pushChecks) Apply(p *planner.Plan) bool {
	sel, ok := planner.StageOf[*planner.Selection](p)
	ssc, isAIS := p.Source.(*planner.AISScan)
	if !ok || !isAIS {
		return false
	}
	moved := false
	sel.Preds = slices.DeleteFunc(sel.Preds, func(pr *planner.Pred) bool {
		if len(pr.Vars) == 0 {
			return false
		}
		first := len(ssc.Comps)
		for _, v := range pr.Vars {
			j := slices.Index(ssc.Comps, v)
			if j < 0 {
				return false // a closure or negated variable
			}
			first = min(first, j)
		}
		if ssc.Checks == nil {
			ssc.Checks = make([][]*planner.Pred, len(ssc.Comps))
		}
		ssc.Checks[first] = append(ssc.Checks[first], pr)
		moved = true
		return true
	})
	dropEmptySelection(p)
	return moved
}
