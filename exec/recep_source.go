package exec

import (
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// recep is the engine of the ReCEP source: its three parts, wired to each
// other by type here. The cache routes each event into its buffers and
// hands a trigger, with the buffer set it is searched in, to the filter;
// the filter hands each candidate, with that set, to verify; verify hands
// the matches to the next stage, and holds postponed ones until time
// passes (its held candidates bound how far the cache prunes).
type recep struct {
	cache  *eventCache
	verify *verifyStage
}

// newReCEP builds the parts as operators 0, 1 and 2 of the plan.
func newReCEP(r *runner, op *planner.ReCEP, next stage) *recep {
	v := r.newVerify(opBase{r: r, id: 2, next: next}, &op.Verify)
	q := r.newQueryFilter(opBase{r: r, id: 1}, &op.Filter)
	c := newEventCache(r, &op.Cache, q, v.pending)
	q.cache, q.verify, v.cache = c, v, c
	q.verified = &r.stats.Operators[v.id]
	q.planRow()
	q.planPartners()
	return &recep{cache: c, verify: v}
}

// process skips, without a call, the events of types no buffer takes
// (but for readAhead).
func (s *recep) process(ev *event.Event) {
	c := s.cache
	c.readAhead(ev)
	if ev.Type < len(c.byType) && len(c.byType[ev.Type]) > 0 {
		c.process(ev)
	}
}
func (s *recep) advance(ts int64) { s.verify.advance(ts) }

// untimed: nothing waits on time unless verify may hold candidates.
func (s *recep) untimed() bool { return !s.verify.pending.on }
func (s *recep) finish()       { s.verify.finish() }

func (s *recep) report(st *Stats) {
	st.Operators[0].Counters = []Counter{{"max buffer", st.MaxBuffer}}
	if q := s.cache.qf; q.rowCol != nil {
		// The matches the search handed over itself passed the filter,
		// verify and the transformation unchanged; the transformation
		// counted the others.
		t := &st.Operators[q.verify.id+1]
		n := st.Matches - t.Out
		q.found.Out += n
		q.verified.In += n
		q.verified.Out += n
		t.In += n
		t.Out += n
	}
}
