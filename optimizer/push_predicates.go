package optimizer

import "github.com/sase-cep/sase/planner"

// pushPredicates moves simple predicates, those that read one positive
// single and constants (a.price > 500), from Selection into SS as
// transition filters: an event that fails them never enters the state, so
// it creates no instance and no sequence (SASE §4.2).
type pushPredicates struct{}

func (pushPredicates) Name() string { return "push-simple-predicates-into-ss" }

func (pushPredicates) Apply(p *planner.Plan) bool {
	sel := selection(p)
	if sel == nil {
		return false
	}
	ssc := p.Ops[0].(*planner.SSC)
	state := map[int]int{}
	for j, c := range ssc.Comps {
		state[c] = j
	}
	kept := sel.Preds[:0]
	moved := false
	for _, pr := range sel.Preds {
		j, ok := state[singleVar(pr)]
		if !ok {
			kept = append(kept, pr)
			continue
		}
		if ssc.Filters == nil {
			ssc.Filters = make([][]*planner.Pred, len(ssc.Comps))
		}
		ssc.Filters[j] = append(ssc.Filters[j], pr)
		moved = true
	}
	sel.Preds = kept
	dropEmptySelection(p)
	return moved
}

// singleVar returns the one component a predicate reads, or -1.
func singleVar(pr *planner.Pred) int {
	if len(pr.Vars) != 1 {
		return -1
	}
	return pr.Vars[0]
}

// selection returns the plan's Selection operator, if any.
func selection(p *planner.Plan) *planner.Selection {
	for _, op := range p.Ops {
		if s, ok := op.(*planner.Selection); ok {
			return s
		}
	}
	return nil
}

// dropEmptySelection removes a Selection that has nothing left to check.
func dropEmptySelection(p *planner.Plan) {
	for i, op := range p.Ops {
		if s, ok := op.(*planner.Selection); ok && len(s.Preds) == 0 && len(s.Equivs) == 0 {
			p.Ops = append(p.Ops[:i:i], p.Ops[i+1:]...)
			return
		}
	}
}
