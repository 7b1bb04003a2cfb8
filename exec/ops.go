package exec

import (
	"math"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/minheap"
	"github.com/sase-cep/sase/planner"
)

// stage is the engine of an operator after the source: a stage or the
// output. push receives a sequence (the binding is the caller's and may
// change after push returns); advance says the stream has reached ts;
// finish says it has ended.
type stage interface {
	push(b *planner.Binding)
	advance(ts int64)
	finish()
}

// bind returns a binding for one of r's engines; a worker's writes its
// events on lines of their own (ofRun).
func (r *runner) bind() *planner.Binding {
	b := r.plan.NewBinding()
	if r.split {
		b.Events = ofRun[*event.Event](r, len(b.Events))
	}
	return b
}

// opBase carries what every stage shares: counters and the next stage.
type opBase struct {
	r    *runner
	id   int
	next stage
}

// in counts a sequence in; with timing on it also starts the operator's
// clock (the check is inline so that timing off costs nothing).
func (o *opBase) in() int {
	o.r.stats.Operators[o.id].In++
	if !o.r.clock.on {
		return 0
	}
	return o.r.clock.switchTo(o.id)
}

func (o *opBase) out(b *planner.Binding) {
	o.r.stats.Operators[o.id].Out++
	if o.next != nil {
		o.next.push(b)
	}
}

func (o *opBase) done(prev int) {
	if o.r.clock.on {
		o.r.clock.switchTo(prev)
	}
}
func (o *opBase) advance(int64) {}
func (o *opBase) finish()       {}

// ---- postponement ----

// pending holds sequences that may complete only once the stream passes
// ts(P1) + W (a trailing closure, a negated end), ordered by that deadline.
type pending struct {
	r       *runner
	on      bool // some component of the operator is at the end of the pattern
	items   minheap.Heap[pendingItem]
	nextSeq int64
	// free are the bindings of released items, for hold to reuse: the
	// stage a release hands one to does not keep it (stage.push).
	free []*planner.Binding
}

func (r *runner) newPending(comps []int) *pending {
	p := &pending{r: r}
	for _, c := range comps {
		if r.plan.Components[c].Next < 0 {
			p.on = true
		}
	}
	return p
}

type pendingItem struct {
	deadline int64
	seq      int64
	b        *planner.Binding
}

func (a pendingItem) Less(b pendingItem) bool {
	if a.deadline != b.deadline {
		return a.deadline < b.deadline
	}
	return a.seq < b.seq
}

// hold copies the binding and keeps it until the stream passes its deadline.
func (p *pending) hold(b *planner.Binding) {
	deadline := int64(math.MaxInt64)
	if p.r.plan.HasWindow {
		deadline = satAdd(b.Events[p.r.plan.First()].TS, p.r.plan.Window)
	}
	var c *planner.Binding
	if n := len(p.free); n > 0 {
		c, p.free = p.free[n-1], p.free[:n-1]
		copy(c.Events, b.Events)
		copy(c.Lists, b.Lists)
	} else {
		c = &planner.Binding{
			Events: append([]*event.Event(nil), b.Events...),
			Lists:  append([][]*event.Event(nil), b.Lists...),
		}
	}
	p.items.Push(pendingItem{deadline: deadline, seq: p.nextSeq, b: c})
	p.nextSeq++
}

// deadline is the earliest held item's; there is one.
func (p *pending) deadline() int64 { return p.items.Min().deadline }

// holdOr keeps b in p until its deadline when the operator postpones
// (a trailing closure, a negated end), else hands it to fn now.
func (o *opBase) holdOr(p *pending, b *planner.Binding, fn func(b *planner.Binding)) {
	if p.on {
		p.hold(b)
	} else {
		fn(b)
	}
}

// releasePending hands the sequences held in p whose deadline is before
// ts to fn, on this operator's clock; at the end of the stream it releases
// them all, a deadline of MaxInt64 (no window, or one past the end of
// time) included. (An event at MaxInt64 is no end: what it may still
// block or join must wait for it.)
func (o *opBase) releasePending(p *pending, ts int64, end bool, fn func(b *planner.Binding)) {
	if !p.on || p.items.Len() == 0 {
		return
	}
	prev := o.r.clock.switchTo(o.id)
	for p.items.Len() > 0 && (p.deadline() < ts || end) {
		o.r.tick()
		b := p.items.Pop().b
		fn(b)
		clear(b.Events) // no event stays reachable from a free binding
		clear(b.Lists)
		p.free = append(p.free, b)
	}
	o.done(prev)
}

// ---- intervals ----

// interval returns where component c's events lie for the sequence in b
// (docs/LANGUAGE.md, What a match is), as closed bounds on integer timestamps.
func (r *runner) interval(c *planner.Component, b *planner.Binding) bounds {
	p := r.plan
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if c.Prev >= 0 {
		if lo = b.Events[c.Prev].TS; lo == math.MaxInt64 {
			return bounds{1, 0} // nothing is after the end of time
		}
		lo++
	} else if p.HasWindow {
		lo = satSub(b.Events[p.Last()].TS, p.Window)
	}
	if c.Next >= 0 {
		if hi = b.Events[c.Next].TS; hi == math.MinInt64 {
			return bounds{1, 0}
		}
		hi--
	} else if p.HasWindow {
		hi = satAdd(b.Events[p.First()].TS, p.Window)
	}
	return bounds{lo, hi}
}

// equivRef is the value of an equivalence attribute the match has fixed:
// the first positive single's value that is present, else the first
// present value among the closure elements collected so far.
func (r *runner) equivRef(q *planner.Equiv, b *planner.Binding) event.Value {
	for _, i := range r.plan.Positives {
		// A v3 pattern's unbound single is nil (LANGUAGE.md §9.3).
		if e := b.Events[i]; e != nil {
			if v := q.Value(e); !v.IsAbsent() {
				return v
			}
		}
	}
	for _, c := range r.plan.Components {
		if c.Kind != planner.Closure {
			continue
		}
		for _, e := range b.Lists[c.Index] {
			if v := q.Value(e); !v.IsAbsent() {
				return v
			}
		}
	}
	return event.Value{}
}

// equivHolds reports whether e agrees with every equivalence test of the
// match.
func (r *runner) equivHolds(e *event.Event, b *planner.Binding) bool {
	for _, q := range r.plan.Equivs {
		if q.Value(e).IsAbsent() {
			continue // constrained by nothing: spare the search for ref
		}
		if ref := r.equivRef(q, b); !q.Agrees(&ref, e) {
			return false
		}
	}
	return true
}

// ---- closure collection ----

type closureStage struct {
	opBase
	op      *planner.ClosureOp
	pending *pending
}

func (s *closureStage) push(b *planner.Binding) {
	prev := s.in()
	s.holdOr(s.pending, b, s.collect)
	s.done(prev)
}

func (s *closureStage) collect(b *planner.Binding) {
	ok := true
	for _, ci := range s.op.Comps {
		b.Lists[ci] = nil
	}
	for _, ci := range s.op.Comps {
		if ok && !s.collectOne(s.r.plan.Components[ci], b) {
			ok = false
		}
	}
	if ok {
		s.out(b)
	}
	for _, ci := range s.op.Comps {
		b.Lists[ci] = nil
	}
}

// collectOne appends, in stream order, each event of c's types in its
// interval that passes the equivalence tests and c's per-element
// predicates (read against the elements appended so far), and reports
// whether the list reached c.K events.
func (s *closureStage) collectOne(c *planner.Component, b *planner.Binding) bool {
	list := s.r.collectList(c, b, s.r.store.inTypes(c.Types, s.r.interval(c, b)), c.ElemPreds, true)
	return len(list) >= c.K
}

// collectList builds closure c's list in b from evs, the events of its
// interval in stream order: those that pass the equivalence tests (when
// checkEquiv) and preds, read against the elements appended so far.
func (r *runner) collectList(c *planner.Component, b *planner.Binding, evs []*event.Event, preds []*planner.Pred, checkEquiv bool) []*event.Event {
	var list []*event.Event
	b.Lists[c.Index] = list
	for _, e := range evs {
		r.tick()
		if checkEquiv && !r.equivHolds(e, b) {
			continue
		}
		b.Elem = e
		keep := true
		for _, pr := range preds {
			if !pr.Eval(b) {
				keep = false
				break
			}
		}
		b.Elem = nil
		if keep {
			list = append(list, e)
			b.Lists[c.Index] = list
		}
	}
	return list
}

func (s *closureStage) advance(ts int64) { s.releasePending(s.pending, ts, false, s.collect) }
func (s *closureStage) finish()          { s.releasePending(s.pending, math.MaxInt64, true, s.collect) }

// ---- selection ----

type selectionStage struct {
	opBase
	op *planner.Selection
}

func (*selectionStage) untimed() bool { return true }

func (s *selectionStage) push(b *planner.Binding) {
	prev := s.in()
	if s.holds(b) {
		s.out(b)
	}
	s.done(prev)
}

func (s *selectionStage) holds(b *planner.Binding) bool {
	if !s.r.positivesAgree(s.op.Equivs, b) {
		return false
	}
	for _, pr := range s.op.Preds {
		if !pr.Eval(b) {
			return false
		}
	}
	return true
}

// positivesAgree reports whether the positive singles agree on each
// equivalence test (planner.Equiv.Agrees).
func (r *runner) positivesAgree(equivs []*planner.Equiv, b *planner.Binding) bool {
	for _, q := range equivs {
		var ref event.Value
		for _, i := range r.plan.Positives {
			if !q.Agrees(&ref, b.Events[i]) {
				return false
			}
		}
	}
	return true
}

// ---- window ----

type windowStage struct {
	opBase
	op *planner.Window
}

func (*windowStage) untimed() bool { return true }

func (s *windowStage) push(b *planner.Binding) {
	prev := s.in()
	defer s.done(prev)
	p := s.r.plan
	if b.Events[p.Last()].TS <= satAdd(b.Events[p.First()].TS, s.op.W) {
		s.out(b)
	}
}

// ---- negation ----

type negationStage struct {
	opBase
	op      *planner.Negation
	pending *pending
}

func (s *negationStage) push(b *planner.Binding) {
	prev := s.in()
	s.holdOr(s.pending, b, s.check)
	s.done(prev)
}

// check rejects the sequence if some event of a negated component's types
// in its interval satisfies the equivalence tests and its predicates.
func (s *negationStage) check(b *planner.Binding) {
	for _, ci := range s.op.Comps {
		c := s.r.plan.Components[ci]
		for _, t := range c.Types {
			for _, e := range s.r.store.in(t, s.r.interval(c, b)) {
				s.r.tick()
				if s.r.blocks(c, e, b, c.NegPreds, true) {
					return
				}
			}
		}
	}
	s.out(b)
}

// blocks reports whether e, an event in negated component c's interval,
// rejects the sequence in b: it passes the equivalence tests (when
// checkEquiv) and preds.
func (r *runner) blocks(c *planner.Component, e *event.Event, b *planner.Binding, preds []*planner.Pred, checkEquiv bool) bool {
	if checkEquiv && !r.equivHolds(e, b) {
		return false
	}
	b.Events[c.Index] = e
	defer func() { b.Events[c.Index] = nil }()
	for _, pr := range preds {
		if !pr.Eval(b) {
			return false
		}
	}
	return true
}

func (s *negationStage) advance(ts int64) { s.releasePending(s.pending, ts, false, s.check) }
func (s *negationStage) finish()          { s.releasePending(s.pending, math.MaxInt64, true, s.check) }

// ---- transformation ----

type transformStage struct {
	opBase
	op *planner.Transformation
}

func (*transformStage) untimed() bool { return true }

func (s *transformStage) push(b *planner.Binding) {
	if s.r.own != nil && !s.r.own(b) {
		return // another worker of a parallel run emits it
	}
	prev := s.in()
	row := s.r.row
	for i := range s.op.Columns {
		col := &s.op.Columns[i] // not a copy of each column per match
		switch col.Kind {
		// A column's kind never changes, so only its field is ever set.
		case planner.ColEvent:
			row[i].Event = b.Events[col.Comp]
		case planner.ColList:
			row[i].List = b.Lists[col.Comp]
		default:
			row[i].Value = col.Eval(b)
		}
	}
	s.r.stats.Operators[s.id].Out++
	s.r.deliver()
	s.done(prev)
}
