package optimizer

import "github.com/sase-cep/sase/planner"

// useAIS replaces SSC's runtime stack by Active Instance Stacks (SASE
// §4.1): one stack per NFA state, each instance pointing to the most
// recent instance of the previous stack (its RIP), so that sequence
// construction walks RIP ranges instead of per-event predecessor pointers.
// What was pushed into the stack scan (window, filters) stays pushed.
type useAIS struct{}

func (useAIS) Name() string { return "use-active-instance-stacks" }

func (useAIS) Apply(p *planner.Plan) bool {
	stack, ok := p.Source.(*planner.StackScan)
	if !ok {
		return false
	}
	p.Source = &planner.AISScan{SeqScan: stack.SeqScan}
	return true
}
