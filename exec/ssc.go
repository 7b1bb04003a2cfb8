package exec

import (
	"math"
	"math/bits"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// stackSSC is SASE's sequence scan and construction over the positive
// singles P1..Pn: an NFA with states 1..n whose runtime stack is a list of
// columns, one per relevant event. A state instance (j, c) is entered by a
// transition on column c's event, or carried over from column c-1 by the
// state's self-loop; its predecessor pointers are therefore implicit: the
// self-loop points to (j, c-1) and the transition to (j-1, prev(c)), where
// prev(c) is the last column with a smaller timestamp (equal timestamps
// are concurrent, never in sequence). Sequence construction is a
// depth-first search of that DAG from each accepting instance.
type stackSSC struct {
	timeless
	r       *runner
	op      *planner.StackScan
	next    stage
	n       int      // number of states (positive singles)
	typeSet []uint64 // by type id: the states (bit j-1 for state j) it may enter
	cols    []column
	base    int // absolute index of cols[0]; pruned columns are gone
	lastTS  int64
	prevIdx int // absolute index of the last column with ts < lastTS, or -1
	bind    *planner.Binding
	comps   []int
}

type column struct {
	ev     *event.Event
	prev   int    // absolute index of the last column with a smaller ts, -1 if none
	trans  uint64 // states entered by a transition on ev
	active uint64 // states active after ev (transition or self-loop)
}

func newStackSSC(r *runner, op *planner.StackScan, next stage) *stackSSC {
	s := &stackSSC{r: r, op: op, next: next, n: len(op.Comps), prevIdx: -1, comps: op.Comps, bind: r.bind()}
	for j, ci := range op.Comps {
		for _, t := range r.plan.Components[ci].Types {
			for len(s.typeSet) <= t {
				s.typeSet = append(s.typeSet, 0)
			}
			s.typeSet[t] |= 1 << j
		}
	}
	s.lastTS = math.MinInt64
	return s
}

func (s *stackSSC) col(abs int) *column { return &s.cols[abs-s.base] }

func (s *stackSSC) process(ev *event.Event) {
	if ev.Type >= len(s.typeSet) || s.typeSet[ev.Type] == 0 {
		return
	}
	m := filterStates(&s.op.SeqScan, s.bind, ev, s.typeSet[ev.Type])
	if m == 0 {
		return
	}
	if ev.TS > s.lastTS {
		s.prevIdx = s.base + len(s.cols) - 1
		s.lastTS = ev.TS
		if s.op.WindowPushed {
			s.prune(satSub(ev.TS, s.op.Window))
		}
	}
	var prevActive, lastActive uint64
	if s.prevIdx >= s.base {
		prevActive = s.col(s.prevIdx).active
	}
	if len(s.cols) > 0 {
		lastActive = s.cols[len(s.cols)-1].active
	}
	enabled := prevActive<<1 | 1 // state j is enterable when j-1 was active (state 0 always is)
	accept := uint64(1) << (s.n - 1)
	trans := m & enabled
	if trans&accept != 0 {
		s.construct(ev)
		trans &^= accept
	}
	if trans == 0 {
		return // a column without transitions would only copy the previous one
	}
	s.r.stats.Instances += int64(bits.OnesCount64(trans))
	s.cols = append(s.cols, column{ev: ev, prev: s.prevIdx, trans: trans, active: lastActive | trans})
}

// prune drops the columns older than the window's lower bound: no
// sequence completed from now on can start there. A new column whose prev
// column was pruned sees no active state, which is right: every instance
// there is out of the window.
func (s *stackSSC) prune(minTS int64) {
	k := 0
	for k < len(s.cols) && s.cols[k].ev.TS < minTS {
		k++
	}
	s.cols = s.cols[k:]
	s.base += k
}

// construct enumerates the sequences that end with ev bound to the
// accepting state.
func (s *stackSSC) construct(ev *event.Event) {
	b := s.bind
	b.Events[s.comps[s.n-1]] = ev
	minTS := int64(math.MinInt64)
	if s.op.WindowPushed {
		minTS = satSub(ev.TS, s.op.Window)
	}
	if s.n == 1 {
		s.emit()
		return
	}
	s.search(s.n-1, s.prevIdx, minTS)
	b.Events[s.comps[s.n-1]] = nil
}

// search binds state j (1-based) to each instance of j at or before column
// c, following self-loops back and transitions to state j-1.
func (s *stackSSC) search(j, c int, minTS int64) {
	bit := uint64(1) << (j - 1)
	for ; c >= s.base; c-- {
		s.r.tick()
		col := s.col(c)
		if col.active&bit == 0 || col.ev.TS < minTS {
			return
		}
		if col.trans&bit == 0 {
			continue
		}
		s.bind.Events[s.comps[j-1]] = col.ev
		if j == 1 {
			s.emit()
		} else {
			s.search(j-1, col.prev, minTS)
		}
	}
	s.bind.Events[s.comps[j-1]] = nil
}

func (s *stackSSC) emit() {
	s.r.stats.Operators[0].Out++
	if s.next != nil {
		s.next.push(s.bind)
	}
}

// filterStates clears from m (bit j for state j, 0-based) the states whose
// transition filters, the simple predicates pushed into SS, reject ev.
func filterStates(op *planner.SeqScan, b *planner.Binding, ev *event.Event, m uint64) uint64 {
	if len(op.Filters) == 0 {
		return m
	}
	for j, preds := range op.Filters {
		if m&(1<<j) == 0 || len(preds) == 0 {
			continue
		}
		c := op.Comps[j]
		b.Events[c] = ev
		for _, pr := range preds {
			if !pr.Eval(b) {
				m &^= 1 << j
				break
			}
		}
		b.Events[c] = nil
	}
	return m
}

func (s *stackSSC) report(st *Stats) { instances(st) }
