package optimizer

import "github.com/sase-cep/sase/planner"

// pushWindow moves the Window stage into SSC: the stacks drop instances
// older than the window and the search stops at its bound, so state
// follows the window instead of the stream (SASE §4.3).
type pushWindow struct{}

func (pushWindow) Name() string { return "push-window-into-ssc" }

func (pushWindow) Apply(p *planner.Plan) bool {
	w, ok := planner.StageOf[*planner.Window](p)
	scan := seqScan(p)
	if !ok || scan == nil {
		return false
	}
	scan.WindowPushed, scan.Window = true, w.W
	p.RemoveStage(w)
	return true
}

// seqScan returns what the plan's SSC source, a stack or AIS scan, shares
// (window, transition filters), or nil for another source.
func seqScan(p *planner.Plan) *planner.SeqScan {
	switch s := p.Source.(type) {
	case *planner.StackScan:
		return &s.SeqScan
	case *planner.AISScan:
		return &s.SeqScan
	}
	return nil
}
