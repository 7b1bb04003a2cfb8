package optimizer

import (
	"slices"

	"github.com/sase-cep/sase/planner"
)

// multiMode says where equivalence tests beyond the PAIS one go.
type multiMode int

const (
	multiAuto    multiMode = iota // the optimizer's choice: dynamic filtering
	multiPAIS                     // all in SS (Multi-PAIS)
	multiDynamic                  // checked during SC's search
)

// pushMoreEquivalences places the equivalence tests left after PAIS (SASE
// §4.2.2): Multi-PAIS checks them in SS by cross-attribute transition
// filtering (an event enters a state only if some instance of the previous
// state agrees on every attribute) and leaves the final check to Selection;
// dynamic filtering checks them during SC's search, cutting a branch at
// the first event that disagrees. Auto picks dynamic filtering: it adds no
// per-event bookkeeping, and construction inside a PAIS partition already
// touches few instances.
type pushMoreEquivalences struct{ mode multiMode }

func (r pushMoreEquivalences) Name() string {
	if r.mode == multiPAIS {
		return "push-equivalences-into-ss-as-multi-pais"
	}
	return "push-equivalences-into-sc-as-dynamic-filters"
}

func (r pushMoreEquivalences) Apply(p *planner.Plan) bool {
	ssc, isAIS := p.Source.(*planner.AISScan)
	sel, ok := planner.StageOf[*planner.Selection](p)
	if !isAIS || !ok || ssc.Partition == nil {
		return false
	}
	var moved []*planner.Equiv
	for _, q := range alwaysPresentTests(p, sel.Equivs) {
		if !slices.Contains(ssc.Multi, q) {
			moved = append(moved, q)
		}
	}
	if len(moved) == 0 {
		return false
	}
	if r.mode == multiPAIS {
		ssc.Multi = append(ssc.Multi, moved...)
		return true
	}
	ssc.Dynamic = append(ssc.Dynamic, moved...)
	sel.Equivs = slices.DeleteFunc(sel.Equivs, func(q *planner.Equiv) bool { return slices.Contains(moved, q) })
	dropEmptySelection(p)
	return true
}
