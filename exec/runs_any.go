package exec

import (
	"math"
	"slices"

	"github.com/sase-cep/sase/event"
)

// Under skip-till-any-match a run that can act on an event stays as it is
// and a copy acts (docs/STRATEGIES.md, What each strategy does with an event).
//
// In a single state the copies are made: there are as many as partial
// matches, as in SASE. In a closure state they are not. A run there stands
// for all of its copies at once: they differ only in which candidate events
// (the closure's types, after the run's last event, within its window) their
// list took, and the event store holds every candidate. So when an event
// could end the closure (proceed), or when a trailing closure's run
// finishes, a depth-first search over the candidates rebuilds the copies'
// lists one at a time in one scratch buffer, applying take and proceed in
// stream order exactly as the copies would have. A closure with n candidates
// has up to 2^n lists; this keeps one run and one buffer instead of 2^n
// runs, and spends time only on the lists it enumerates, which any-match's
// output needs anyway.

// reactAny is the any-match reaction of r to e.
func (s *runScan) reactAny(r *run, e *event.Event) {
	j := r.state
	st := &s.states[j]
	if st.closure {
		s.proceedAll(r, j, e)
		return
	}
	if s.selectable(r, st, e, r.last) && s.bindIf(r, st, e) {
		s.fork(r, j, e)
	}
}

// fork hands on a copy of r with state j bound to e: as a match if that
// completes it, else as a new run. r itself ignores e.
func (s *runScan) fork(r *run, j int, e *event.Event) {
	st := &s.states[j]
	if st.last {
		s.complete(r)
	} else {
		c := s.clone(r)
		s.advanceRun(c, j, e)
		s.born = append(s.born, c)
	}
	r.events[st.Comp] = nil
}

// proceedAll proceeds with e every list of closure state j that can.
func (s *runScan) proceedAll(r *run, j int, e *event.Event) {
	st := &s.states[j]
	if st.last || !s.selectable(r, &s.states[j+1], e, r.last) {
		return
	}
	nx := s.states[j+1].Comp
	r.events[nx] = e
	fixed := s.holdsAll(r, st.nextFixed)
	r.events[nx] = nil
	if !fixed {
		return
	}
	ci := st.Comp
	s.lists(r, j, e.Seq, func() {
		if !s.proceeds(r, j, e) {
			return
		}
		list := r.lists[ci]
		if s.holds || !s.states[j+1].last {
			r.lists[ci] = slices.Clone(list) // it outlives the scratch buffer
		}
		s.fork(r, j+1, e)
		r.lists[ci] = list
	})
}

// finishAny yields every closable list of a trailing closure's run. (A
// trailing closure is never followed by a negated end, so nothing holds
// the scratch list after push.)
func (s *runScan) finishAny(r *run) {
	st := &s.states[r.state]
	s.lists(r, r.state, math.MaxInt64, func() {
		if s.closable(r, st) {
			s.complete(r)
		}
	})
}

// lists calls visit with r.lists set to each non-empty list that a copy of
// r in closure state j holds just before the event with seq before.
func (s *runScan) lists(r *run, j int, before int64, visit func()) {
	ci := s.states[j].Comp
	prefix := r.lists[ci] // a leading closure's run holds its first element
	cands := s.candidates(r, &s.states[j], before)
	if need := len(prefix) + len(cands); cap(s.buf) < need {
		s.buf = make([]*event.Event, 0, need)
	}
	buf := append(s.buf[:0], prefix...)
	if len(buf) > 0 {
		r.lists[ci] = buf
		visit()
	}
	s.extend(r, j, cands, buf, visit)
	r.lists[ci] = prefix
}

// extend tries each candidate as the next element of list, as a copy
// would: taken only if take holds and proceed does not (proceed first).
func (s *runScan) extend(r *run, j int, cands, list []*event.Event, visit func()) {
	ci := s.states[j].Comp
	for k, y := range cands {
		s.r.tick()
		r.lists[ci] = list
		if !s.takes(r, &s.states[j], y) {
			continue
		}
		if s.proceeds(r, j, y) {
			r.events[s.states[j+1].Comp] = nil
			continue
		}
		mask := s.fixKey(r.key, y)
		grown := append(list, y) // within buf's capacity: siblings overwrite, never reallocate
		r.lists[ci] = grown
		visit()
		s.extend(r, j, cands[k+1:], grown, visit)
		unfixKey(r.key, mask)
	}
	r.lists[ci] = list
}

// candidates are the events of closure state j's types after r's last
// event, before seq before, within r's window, from the event store.
func (s *runScan) candidates(r *run, st *runState, before int64) []*event.Event {
	evs := s.r.store.inTypes(st.comp.Types, bounds{r.last, r.due})
	i, k := 0, len(evs)
	for i < k && evs[i].Seq <= r.lastSeq {
		i++
	}
	for k > i && evs[k-1].Seq >= before {
		k--
	}
	return evs[i:k]
}
