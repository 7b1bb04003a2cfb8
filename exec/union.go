package exec

import (
	"fmt"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// unionSource runs a Union: each flat plan in a runner of its own, fed
// every event, whose matches come here instead of to an output, mapped to
// the union plan's components (the variables a branch leaves unbound stay
// nil), checked against the conjuncts that read those, and handed on.
// The branches bind different sets of variables, so there is nothing to
// deduplicate; each runner's state is its engine's.
type unionSource struct {
	r    *runner
	next stage
	subs []*runner
	outs []*unionOut
}

// unionOut is the end of one branch's runner.
type unionOut struct {
	s   *unionSource
	br  *planner.Branch
	b   *planner.Binding
	out int64 // its matches that passed Rest
}

func newUnion(r *runner, op *planner.Union, next stage) *unionSource {
	s := &unionSource{r: r, next: next}
	for _, br := range op.Branches {
		out := &unionOut{s: s, br: br, b: r.bind()}
		s.outs = append(s.outs, out)
		s.subs = append(s.subs, newRunnerInto(br.Plan, nil, out))
	}
	return s
}

func (o *unionOut) push(bb *planner.Binding) {
	b := o.b
	clear(b.Events)
	clear(b.Lists)
	for i, c := range o.br.Comps {
		if o.br.Plan.Components[i].Kind != planner.Negated {
			b.Events[c], b.Lists[c] = bb.Events[i], bb.Lists[i]
		}
	}
	for _, l := range o.br.Longest {
		if len(b.Lists[l.Comp]) > l.Max {
			return
		}
	}
	for _, pr := range o.br.Rest {
		if !pr.Eval(b) {
			return
		}
	}
	o.out++
	o.s.r.stats.Operators[0].Out++
	o.s.next.push(b)
}

func (*unionOut) advance(int64) {}
func (*unionOut) finish()       {}

// start sets up each branch's runner when the run's options are set.
func (s *unionSource) start() {
	for _, sub := range s.subs {
		sub.ctx = s.r.ctx
		sub.begin(s.r.clock.last)
	}
}

func (s *unionSource) process(ev *event.Event) {
	for _, sub := range s.subs {
		if err := sub.feed(ev); err != nil {
			panic(cancelled{err})
		}
	}
}

func (s *unionSource) advance(ts int64) {
	for _, sub := range s.subs {
		sub.pass(ts)
	}
}

func (s *unionSource) finish() {
	for _, sub := range s.subs {
		sub.finish()
	}
}

// report counts each branch's matches and its engine's instances.
func (s *unionSource) report(st *Stats) {
	for i, sub := range s.subs {
		sub.src.report(&sub.stats)
		st.Instances += sub.stats.Instances
		st.Operators[0].Counters = append(st.Operators[0].Counters, Counter{fmt.Sprintf("branch %d", i+1), s.outs[i].out})
	}
	if st.Instances > 0 {
		st.Operators[0].Counters = append(st.Operators[0].Counters, Counter{"instances", st.Instances})
	}
}
