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
	filters stateFilters
}

type column struct {
	ev     *event.Event
	prev   int    // absolute index of the last column with a smaller ts, -1 if none
	trans  uint64 // states entered by a transition on ev
	active uint64 // states active after ev (transition or self-loop)
}

func newStackSSC(r *runner, op *planner.StackScan, next stage) *stackSSC {
	s := &stackSSC{r: r, op: op, next: next, n: len(op.Comps), prevIdx: -1, comps: op.Comps, bind: r.bind(), filters: newStateFilters(r.plan, &op.SeqScan)}
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
	m := s.filters.apply(s.bind, ev, s.typeSet[ev.Type])
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

// stateFilters are a scan's transition filters, the simple predicates
// pushed into SS, compiled once, in the plan's order: by state ascending
// and, within a state, as the plan lists them. A filter that compares an
// attribute of the event with a number is tested in place when the
// attribute holds an int (constFilterOf), without the binding or the
// evaluator's call, which cost W2 about 130 instructions an event for
// its one filter.
type stateFilters struct {
	states uint64 // the states that have filters (bit j for state j, 0-based)
	list   []stateFilter
}

type stateFilter struct {
	bit  uint64 // the state's
	comp int
	pred *planner.Pred
	// isConst: pred holds of an int v in slot when v is in in.
	isConst bool
	slot    int
	in      intSet
}

func newStateFilters(plan *planner.Plan, op *planner.SeqScan) stateFilters {
	var f stateFilters
	for j, preds := range op.Filters {
		for _, pr := range preds {
			sf := stateFilter{bit: 1 << j, comp: op.Comps[j], pred: pr}
			sf.slot, sf.in, sf.isConst = constFilterOf(plan, pr)
			f.list = append(f.list, sf)
			f.states |= sf.bit
		}
	}
	return f
}

// apply clears from m (bit j for state j, 0-based) the states whose
// filters reject ev: a state's first filter that fails rejects it, and
// the state's later ones are not evaluated. Its loop tests the filters
// in place until one needs the evaluator, and leaves that one and the
// rest to applyFrom: a loop without a call keeps its values in registers.
func (f *stateFilters) apply(b *planner.Binding, ev *event.Event, m uint64) uint64 {
	if m&f.states == 0 {
		return m
	}
	for i := range f.list {
		sf := &f.list[i]
		if m&sf.bit == 0 {
			continue
		}
		bit, ok := sf.test(ev)
		if !ok {
			return f.applyFrom(i, b, ev, m)
		}
		m &^= sf.bit * (1 - bit)
	}
	return m
}

// applyFrom is apply from the filter at i on.
func (f *stateFilters) applyFrom(i int, b *planner.Binding, ev *event.Event, m uint64) uint64 {
	for ; i < len(f.list); i++ {
		sf := &f.list[i]
		if m&sf.bit == 0 {
			continue
		}
		bit, ok := sf.test(ev)
		if !ok && sf.eval(b, ev) {
			bit = 1
		}
		m &^= sf.bit * (1 - bit)
	}
	return m
}

// test is the filter's outcome (1: ev passes) when it is a comparison
// with a number of an attribute that holds an int; else not ok.
func (sf *stateFilter) test(ev *event.Event) (bit uint64, ok bool) {
	if !sf.isConst || sf.slot >= len(ev.Attrs) || !ev.Attrs[sf.slot].IsInt() {
		return 0, false
	}
	return sf.in.has(ev.Attrs[sf.slot].Int()), true
}

// intSet is the ints v for which v rel k holds: a range lo..lo+span, or
// its complement when out is 1, tested with one comparison.
type intSet struct {
	lo, span, out uint64
}

func intSetOf(rel order, k int64) intSet {
	const minInt, maxInt = math.MinInt64, math.MaxInt64
	lt, eq, gt := rel&0b001 != 0, rel&0b010 != 0, rel&0b100 != 0
	lo, hi, out := int64(minInt), int64(maxInt), false
	switch {
	case lt && eq && gt:
	case lt && gt:
		lo, hi, out = k, k, true
	case !lt && !eq && !gt, lt && !eq && k == minInt, gt && !eq && k == maxInt:
		out = true // never: the complement of every int
	case lt:
		hi = k - b2i(!eq)
	case gt:
		lo = k + b2i(!eq)
	default: // eq only
		lo, hi = k, k
	}
	return intSet{lo: uint64(lo), span: uint64(hi) - uint64(lo), out: uint64(b2u(out))}
}

// has is 1 when v is in the set, else 0.
func (s intSet) has(v int64) uint64 {
	return uint64(b2u(uint64(v)-s.lo <= s.span)) ^ s.out
}

func b2i(b bool) int64 { return int64(b2u(b)) }

// eval evaluates the filter's predicate with ev bound to its state.
func (sf *stateFilter) eval(b *planner.Binding, ev *event.Event) bool {
	b.Events[sf.comp] = ev
	ok := sf.pred.Eval(b)
	b.Events[sf.comp] = nil
	return ok
}

// constFilterOf matches pr as a comparison of a plain attribute in a slot
// with a number (on either side), and returns the ints that pass it: for
// a float, those that compare with it as with an int (floatBound).
func constFilterOf(plan *planner.Plan, pr *planner.Pred) (slot int, in intSet, ok bool) {
	e, isBin := pr.Expr.(*planner.Binary)
	if !isBin || !e.Op.IsComparison() {
		return 0, intSet{}, false
	}
	op := e.Op
	x, isAttr := e.X.(*planner.Attr)
	c, isConst := e.Y.(*planner.Const)
	if !isAttr {
		x, isAttr = e.Y.(*planner.Attr)
		c, isConst = e.X.(*planner.Const)
		op = converse(op)
	}
	if !isAttr || !isConst || x.Index != 0 || x.Builtin != planner.NotBuiltin || plan.Components[x.Comp].Kind != planner.Single {
		return 0, intSet{}, false
	}
	rel, k := orderOf(op), int64(0)
	switch v := c.Value; v.Kind() {
	case event.Int:
		k = v.Int()
	case event.Float:
		if rel, k, ok = floatBound(rel, v.Float()); !ok {
			return 0, intSet{}, false
		}
	default:
		return 0, intSet{}, false
	}
	return x.Slot, intSetOf(rel, k), true
}

// floatBound turns i rel f, i an int and f a float, into i rel' k with an
// int k, as Value.Compare orders an int and a float (exactly): f itself
// when it is an int; else i < f is i <= floor(f), i > f is i > floor(f),
// and i = f never holds. Not ok for a NaN or a floor out of int64's range.
func floatBound(rel order, f float64) (order, int64, bool) {
	t := math.Floor(f)
	if math.IsNaN(f) || t < -0x1p63 || t >= 0x1p63 {
		return 0, 0, false
	}
	if t == f {
		return rel, int64(t), true
	}
	// i is never equal to f: less than f when i <= t, else greater.
	lt, gt := rel&0b001 != 0, rel&0b100 != 0
	return order(b2u(lt) | b2u(lt)<<1 | b2u(gt)<<2), int64(t), true
}

func (s *stackSSC) report(st *Stats) { instances(st) }
