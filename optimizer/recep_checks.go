package optimizer

import (
	"slices"

	"github.com/sase-cep/sase/planner"
)

// recepChecks moves the correlation predicates that read positive singles
// only from AttributeVerify into ReCEP's recursion: each is checked as
// soon as the last of its variables is bound (the trigger Pn is bound
// first, then P1, P2, ...), so a failing partial sequence is not extended;
// one that reads a positive Pj and the trigger only filters Pj's buffer
// slice once per trigger instead of once per partial sequence.
// The paper verifies after the search; this keeps its candidates from
// growing with (events in a window)^length when predicates prune.
type recepChecks struct{}

func (recepChecks) Name() string { return "check-predicates-in-recursion" }

func (recepChecks) Apply(p *planner.Plan) bool {
	r, ok := p.Source.(*planner.ReCEP)
	if !ok || r.Filter.Checks != nil {
		return false
	}
	filter, verify := &r.Filter, &r.Verify
	checks := make([][]*planner.Pred, len(filter.Positives))
	pre := make([][]*planner.Pred, len(filter.Positives))
	moved := false
	kept := verify.Preds[:0]
	for _, pr := range verify.Preds {
		level, others := -1, 0 // index in Positives of the variable bound last
		for _, v := range pr.Vars {
			j := slices.Index(filter.Positives, v)
			if j < 0 {
				level = -2 // a closure: its list exists only in AttributeVerify
				break
			}
			if v != p.Last() {
				if level >= 0 {
					others++
				}
				level = max(level, j)
			}
		}
		switch {
		case level < 0:
			kept = append(kept, pr)
			continue
		case others == 0: // Pj and the trigger: filter Pj's buffer per trigger
			pre[level] = append(pre[level], pr)
		default:
			checks[level] = append(checks[level], pr)
		}
		moved = true
	}
	verify.Preds = kept
	if !moved {
		return false
	}
	filter.Checks, filter.Pre = checks, pre
	return true
}
