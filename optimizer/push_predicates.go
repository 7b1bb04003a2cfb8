package optimizer

import "github.com/sase-cep/sase/planner"

// pushPredicates moves simple predicates, those that read one positive
// single and constants (a.price > 500), from Selection into SS as
// transition filters: an event that fails them never enters the state, so
// it creates no instance and no sequence (SASE §4.2).
type pushPredicates struct{}

func (pushPredicates) Name() string { return "push-simple-predicates-into-ss" }

func (pushPredicates) Apply(p *planner.Plan) bool {
	sel, ok := planner.StageOf[*planner.Selection](p)
	scan := seqScan(p)
	if !ok || scan == nil {
		return false
	}
	state := map[int]int{}
	for j, c := range scan.Comps {
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
		if scan.Filters == nil {
			scan.Filters = make([][]*planner.Pred, len(scan.Comps))
		}
		scan.Filters[j] = append(scan.Filters[j], pr)
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

// dropEmptySelection removes a Selection that has nothing left to check.
func dropEmptySelection(p *planner.Plan) {
	if s, ok := planner.StageOf[*planner.Selection](p); ok && len(s.Preds) == 0 && len(s.Equivs) == 0 {
		p.RemoveStage(s)
	}
}
