package optimizer

import "github.com/sase-cep/sase/planner"

// pushWindow moves the Window operator into SSC: the runtime stack drops
// instances older than the window and the search stops at its bound, so
// state follows the window instead of the stream (SASE §4.3).
type pushWindow struct{}

func (pushWindow) Name() string { return "push-window-into-ssc" }

func (pushWindow) Apply(p *planner.Plan) bool {
	for i, op := range p.Ops {
		w, ok := op.(*planner.Window)
		if !ok {
			continue
		}
		ssc := p.Ops[0].(*planner.SSC)
		ssc.WindowPushed, ssc.Window = true, w.W
		p.Ops = append(p.Ops[:i:i], p.Ops[i+1:]...)
		return true
	}
	return false
}
