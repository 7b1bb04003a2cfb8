package exec

import (
	"math"
	"slices"

	"github.com/sase-cep/sase/planner"
)

// verifyStage is ReCEP's attribute verification. It checks the
// equivalence tests the buffers did not enforce and the predicates that
// read positives only (early), builds the closure lists from their
// buffers, then checks the predicates that read them (late) and the
// negations the search did not narrow. A candidate whose pattern ends with
// a closure or negation waits (in pending) after the early checks until
// the stream passes ts(P1) + W.
type verifyStage struct {
	opBase
	op      *planner.AttributeVerify
	cache   *eventCache
	pending *pending
	early   []*planner.Pred // checked before holding (postponed plans)
	late    []*planner.Pred // checked after the closure lists are built
	// bare: no closure, late predicate or negation to verify on a path
	// that enforces the equivalence tests.
	bare bool
}

func (r *runner) newVerify(base opBase, op *planner.AttributeVerify) *verifyStage {
	p := r.plan
	s := &verifyStage{opBase: base, op: op, pending: r.newPending(append(p.Closures(), p.Negations()...))}
	for _, pr := range op.Preds {
		if slices.ContainsFunc(pr.Vars, func(v int) bool { return p.Components[v].Kind == planner.Closure }) {
			s.late = append(s.late, pr)
		} else {
			s.early = append(s.early, pr)
		}
	}
	s.bare = len(op.Closures) == 0 && len(s.late) == 0 && len(p.Negations()) == 0
	return s
}

// push checks what reads the positives only, then verifies the rest now
// or, for a postponed plan, once the stream passes ts(P1) + W. set is the
// buffer set the candidate was found in, enforced whether the equivalence
// tests hold by construction there.
func (s *verifyStage) push(b *planner.Binding, set *rset, enforced bool) {
	prev := s.in()
	defer s.done(prev)
	if !enforced && !s.r.positivesAgree(s.op.Equivs, b) {
		return
	}
	for _, pr := range s.early {
		if !pr.Eval(b) {
			return
		}
	}
	if s.pending.on {
		s.pending.hold(b)
	} else {
		s.verify(b, set, enforced)
	}
}

// direct reports whether the stage hands every candidate found where the
// equivalence tests hold by construction on unchanged, untimed: then the
// search may skip it.
func (s *verifyStage) direct() bool {
	return s.bare && len(s.early) == 0 && !s.pending.on && !s.r.clock.on
}

func (s *verifyStage) release(b *planner.Binding) {
	set, enforced := s.cache.setFor(b.Events[s.r.plan.Last()])
	s.verify(b, set, enforced)
}

// verify checks the rest of a candidate: closures, late predicates,
// negations.
func (s *verifyStage) verify(b *planner.Binding, set *rset, enforced bool) {
	if s.bare && enforced {
		s.out(b)
		return
	}
	p := s.r.plan
	ok := true
	for _, ci := range s.op.Closures {
		b.Lists[ci] = nil
	}
	for _, ci := range s.op.Closures {
		if !ok {
			break
		}
		c := p.Components[ci]
		evs := inRange(set.bufs[ci].live(), s.r.interval(c, b))
		res := s.cache.op.Buffers[ci].Residual
		list := evs[:len(evs):len(evs)] // the buffer slice is the list
		if !enforced || len(res) > 0 {
			list = s.r.collectList(c, b, evs, res, !enforced)
		}
		b.Lists[ci] = list
		ok = len(list) >= c.K
	}
	for _, pr := range s.late {
		if !ok {
			break
		}
		ok = pr.Eval(b)
	}
	if ok {
		ok = s.negationsPass(b, set, enforced)
	}
	if ok {
		s.out(b)
	}
	for _, ci := range s.op.Closures {
		b.Lists[ci] = nil
	}
}

// negationsPass checks the negations the search has not narrowed: always
// those of AttributeVerify, and the narrowed ones too for a trigger that
// lacks an equivalence attribute.
func (s *verifyStage) negationsPass(b *planner.Binding, set *rset, enforced bool) bool {
	check := func(ci int) bool {
		c := s.r.plan.Components[ci]
		res := s.cache.op.Buffers[ci].Residual
		for _, e := range inRange(set.bufs[ci].live(), s.r.interval(c, b)) {
			s.r.tick()
			if s.r.blocks(c, e, b, res, !enforced) {
				return false
			}
		}
		return true
	}
	for _, ci := range s.op.Negations {
		if !check(ci) {
			return false
		}
	}
	if !s.cache.narrows(b.Events[s.r.plan.Last()]) {
		for _, ci := range s.cache.qf.op.Narrowed {
			if !check(ci) {
				return false
			}
		}
	}
	return true
}

func (s *verifyStage) advance(ts int64) { s.releasePending(s.pending, ts, false, s.release) }
func (s *verifyStage) finish()          { s.releasePending(s.pending, math.MaxInt64, true, s.release) }
