package optimizer

import "github.com/sase-cep/sase/planner"

// useAIS replaces SSC's runtime stack by Active Instance Stacks (SASE
// §4.1): one stack per NFA state, each instance pointing to the most
// recent instance of the previous stack (its RIP), so that sequence
// construction walks RIP ranges instead of per-event predecessor pointers.
type useAIS struct{}

func (useAIS) Name() string { return "use-active-instance-stacks" }

func (useAIS) Apply(p *planner.Plan) bool {
	ssc := p.Ops[0].(*planner.SSC)
	if ssc.AIS {
		return false
	}
	ssc.AIS = true
	return true
}
