package exec

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// algebraSource runs a v3 pattern (LANGUAGE.md §9) on every engine. With
// WITHIN it anchors each match at its first bound ts: once the stream has
// passed t0+W, every event a match starting at t0 can bind or read (back
// to t0-W for an edge) is known, so it builds the occurrences of the
// pattern tree that start at t0 from the events of [t0, t0+W], checks each
// derivation (branch and optional choices) as §9.5 orders it, emits each
// binding once and drops the events no later anchor reads: the state is
// the window's, and a live stream emits as it goes. Without WITHIN a match
// may span the stream: it does all of that once, at the end.
type algebraSource struct {
	r      *runner
	op     *planner.Algebra
	next   stage
	byType [][]*event.Event
	b      *planner.Binding
	seen   map[string]bool
	// anchors are the distinct ts of the events that may start a match
	// (a type of a positive single), oldest first, not yet run; starts
	// marks those types.
	anchors []int64
	starts  []bool
	// span is the ts range a run reads positives from; t0 the anchor.
	span bounds
	t0   int64
}

func newAlgebra(r *runner, op *planner.Algebra, next stage) *algebraSource {
	s := &algebraSource{r: r, op: op, next: next, b: r.bind(), seen: map[string]bool{}}
	op.Root.Walk(func(n *planner.AlgNode) {
		if n.Kind == planner.AlgSingle {
			for _, t := range n.Types {
				for len(s.starts) <= t {
					s.starts = append(s.starts, false)
				}
				s.starts[t] = true
			}
		}
	})
	return s
}

func (s *algebraSource) process(ev *event.Event) {
	for len(s.byType) <= ev.Type {
		s.byType = append(s.byType, nil)
	}
	s.byType[ev.Type] = append(s.byType[ev.Type], ev)
	if s.op.HasWindow && ev.Type < len(s.starts) && s.starts[ev.Type] {
		if n := len(s.anchors); n == 0 || s.anchors[n-1] != ev.TS {
			s.anchors = append(s.anchors, ev.TS)
		}
	}
}

// advance runs the anchors whose window the stream has passed: events at
// ts itself may still come.
func (s *algebraSource) advance(ts int64) {
	if len(s.anchors) == 0 || satAdd(s.anchors[0], s.op.Window) >= ts {
		return
	}
	k := 0
	for ; k < len(s.anchors) && satAdd(s.anchors[k], s.op.Window) < ts; k++ {
		s.anchor(s.anchors[k])
	}
	s.anchors = s.anchors[:copy(s.anchors, s.anchors[k:])]
	s.prune(ts)
}

// anchor emits the matches whose first bound ts is t0.
func (s *algebraSource) anchor(t0 int64) {
	s.t0, s.span = t0, bounds{t0, satAdd(t0, s.op.Window)}
	clear(s.seen) // a binding has one first ts: no later anchor emits it
	for _, o := range s.occurrences(s.op.Root, algHit) {
		s.r.tick()
		s.check(o)
	}
}

// prune drops the events no anchor still to run reads: the next one is
// not before ts (or the first one waiting), and reads back to it - W.
// A slice is copied down once half of it is dead, so pruning is linear.
func (s *algebraSource) prune(ts int64) {
	if len(s.anchors) > 0 {
		ts = s.anchors[0]
	}
	cut := satSub(ts, satAdd(s.op.Window, 1))
	for t, evs := range s.byType {
		k := len(inRange(evs, bounds{math.MinInt64, cut}))
		if k > 0 && 2*k >= len(evs) {
			n := copy(evs, evs[k:])
			clear(evs[n:])
			s.byType[t] = evs[:n]
		}
	}
}

func (s *algebraSource) report(*Stats) {}
func (s *algebraSource) untimed() bool { return !s.op.HasWindow }
func (s *algebraSource) finish() {
	if s.op.HasWindow {
		s.advance(math.MaxInt64)
		for _, t0 := range s.anchors { // anchors at the end of time
			s.anchor(t0)
		}
		s.anchors = nil
		return
	}
	s.span = bounds{math.MinInt64, math.MaxInt64}
	for _, o := range s.occurrences(s.op.Root, algAny) {
		s.r.tick()
		s.check(o)
	}
}

// algMode restricts the occurrences of an item to those that start at the
// anchor t0 (hit) or do not (after: empty, or first > t0), or neither
// (any); every occurrence of the run is within the span, which starts at
// t0, so hit and after split any.
type algMode int

const (
	algAny algMode = iota
	algHit
	algAfter
)

// admits reports whether an occurrence with that first ts (when not
// empty) is one of mode's.
func (s *algebraSource) admits(m algMode, empty bool, first int64) bool {
	switch m {
	case algHit:
		return !empty && first == s.t0
	case algAfter:
		return empty || first > s.t0
	}
	return true
}

// algBind is a positive single bound to an event.
type algBind struct {
	comp int
	ev   *event.Event
}

// algItem is a closure or negation of an occurrence with its interval,
// closed bounds; an edge bound of the top-level SEQ is set from the
// whole match (§4 rules 4 and 5).
type algItem struct {
	node           *planner.AlgNode
	lo, hi         int64
	loEdge, hiEdge bool
	none           bool // after the end of time, or before its start
}

// algOcc is an occurrence of an item: its bound singles, its closures and
// negations, and its first and last ts (none when empty).
type algOcc struct {
	binds       []algBind
	items       []algItem
	first, last int64
	empty       bool
}

var emptyOcc = algOcc{empty: true}

// join is the occurrence of a and b together.
func join(a, b algOcc) algOcc {
	o := bounds2(a, b)
	o.binds, o.items = append(slices.Clip(a.binds), b.binds...), append(slices.Clip(a.items), b.items...)
	return o
}

// bounds2 is the join of a and b without its bindings: its first, last
// and emptiness, which fits needs before a join is built.
func bounds2(a, b algOcc) algOcc {
	o := algOcc{empty: a.empty && b.empty}
	switch {
	case a.empty:
		o.first, o.last = b.first, b.last
	case b.empty:
		o.first, o.last = a.first, a.last
	default:
		o.first, o.last = min(a.first, b.first), max(a.last, b.last)
	}
	return o
}

// fits reports whether an occurrence can still be in the window.
func (s *algebraSource) fits(o algOcc) bool {
	return o.empty || !s.op.HasWindow || satSub(o.last, o.first) <= s.op.Window
}

// occurrences lists an item's occurrences (§9.2) of mode m within the
// span.
func (s *algebraSource) occurrences(n *planner.AlgNode, m algMode) []algOcc {
	var out []algOcc
	switch n.Kind {
	case planner.AlgSingle:
		for _, t := range n.Types {
			if t < len(s.byType) {
				for _, e := range inRange(s.byType[t], s.span) {
					if s.admits(m, false, e.TS) {
						out = append(out, algOcc{binds: []algBind{{n.Comp, e}}, first: e.TS, last: e.TS})
					}
				}
			}
		}
	case planner.AlgOr:
		for _, it := range n.Items {
			out = append(out, s.occurrences(it, m)...)
		}
	case planner.AlgAnd:
		out = s.and(n.Items, m)
	case planner.AlgSeq:
		out = s.seq(n, m)
	}
	if n.Optional && m != algHit {
		out = append(out, emptyOcc)
	}
	return out
}

// and lists the occurrences of an AND's items of mode m. Those that start
// at the anchor are split by the first item that does: the items before
// it do not, the ones after it may.
func (s *algebraSource) and(items []*planner.AlgNode, m algMode) []algOcc {
	if m != algHit {
		return s.product(items, func(int) algMode { return m })
	}
	var out []algOcc
	for j := range items {
		out = append(out, s.product(items, func(i int) algMode {
			switch {
			case i < j:
				return algAfter
			case i == j:
				return algHit
			}
			return algAny
		})...)
	}
	return out
}

// product joins one occurrence of each item, of the mode mode(i) gives,
// pairwise disjoint and in the window.
func (s *algebraSource) product(items []*planner.AlgNode, mode func(int) algMode) []algOcc {
	out := []algOcc{emptyOcc}
	for i, it := range items {
		var next []algOcc
		for _, c := range s.occurrences(it, mode(i)) {
			for _, o := range out {
				s.r.tick() // a large product stays cancellable
				if s.fits(bounds2(o, c)) && disjoint(o, c) {
					next = append(next, join(o, c))
				}
			}
		}
		out = next
	}
	return out
}

// seq lists a SEQ's occurrences of mode m: its non-empty positive items
// strictly ordered, the first of them of mode m (the SEQ starts where it
// does); each closure and negation between the nearest non-empty
// positive neighbours, or at the top-level edges.
func (s *algebraSource) seq(n *planner.AlgNode, m algMode) []algOcc {
	type partial struct {
		o       algOcc
		pending []int // items still waiting for their right neighbour
	}
	parts := []partial{{o: emptyOcc}}
	for _, it := range n.Items {
		var next []partial
		if !it.IsPositive() {
			for _, p := range parts {
				item := algItem{node: it, loEdge: p.o.empty}
				if !p.o.empty {
					item.lo, item.none = satAdd(p.o.last, 1), p.o.last == math.MaxInt64
				}
				o := p.o
				o.items = append(slices.Clip(o.items), item)
				next = append(next, partial{o, append(slices.Clip(p.pending), len(o.items)-1)})
			}
			parts = next
			continue
		}
		// An empty partial takes the item's occurrences of mode m (and
		// for hit, the item's empty one: a later item may start the SEQ),
		// a non-empty one any occurrence; each list is built when needed.
		var first, later []algOcc
		var haveFirst, haveLater bool
		for _, p := range parts {
			occs := &later
			if p.o.empty {
				occs = &first
				if !haveFirst {
					first, haveFirst = s.occurrences(it, m), true
					if m == algHit && it.Nullable() {
						// Below the top an empty occurrence binds nothing and
						// holds no item (§9.2 forbids them at a nested edge).
						first = append(first, emptyOcc)
					}
				}
			} else if !haveLater {
				later, haveLater = s.occurrences(it, algAny), true
			}
			for _, c := range *occs {
				s.r.tick()
				if !p.o.empty && !c.empty && p.o.last >= c.first {
					continue
				}
				if !s.fits(bounds2(p.o, c)) {
					continue
				}
				j := join(p.o, c)
				pending := p.pending
				if !c.empty && len(pending) > 0 {
					j.items = slices.Clone(j.items)
					for _, k := range pending {
						j.items[k].hi = satSub(c.first, 1)
						j.items[k].none = j.items[k].none || c.first == math.MinInt64
					}
					pending = nil
				}
				next = append(next, partial{j, pending})
			}
		}
		parts = next
	}
	out := make([]algOcc, 0, len(parts))
	for _, p := range parts {
		if p.o.empty && m == algHit {
			continue
		}
		if len(p.pending) > 0 {
			p.o.items = slices.Clone(p.o.items)
		}
		for _, k := range p.pending {
			p.o.items[k].hiEdge = true
		}
		out = append(out, p.o)
	}
	return out
}

// disjoint reports whether two occurrences bind no event twice.
func disjoint(a, b algOcc) bool {
	for _, x := range a.binds {
		for _, y := range b.binds {
			if x.ev == y.ev {
				return false
			}
		}
	}
	return true
}

// check takes one derivation of the whole pattern through §9.5's order:
// closure lists, their bounds, disjointness, window, equivalence tests and
// selection, negations; a binding is emitted once.
func (s *algebraSource) check(o algOcc) {
	p, op, b := s.r.plan, s.op, s.b
	clear(b.Events)
	clear(b.Lists)
	for _, x := range o.binds {
		b.Events[x.comp] = x.ev
	}
	for i := range o.items {
		it := &o.items[i]
		if it.loEdge {
			it.lo = math.MinInt64
			if op.HasWindow {
				it.lo = satSub(o.last, op.Window)
			}
		}
		if it.hiEdge {
			it.hi = math.MaxInt64
			if op.HasWindow {
				it.hi = satAdd(o.first, op.Window)
			}
		}
	}
	lo, hi := o.first, o.last
	for _, it := range o.items {
		if it.node.Kind != planner.AlgClosure {
			continue
		}
		list := s.collect(p.Components[it.node.Comp], it)
		if len(list) < it.node.Min || it.node.Max > 0 && len(list) > it.node.Max {
			return
		}
		for _, e := range list {
			lo, hi = min(lo, e.TS), max(hi, e.TS)
		}
	}
	if op.HasWindow && satSub(hi, lo) > op.Window || !s.distinct(o) {
		return
	}
	for _, q := range op.Equivs {
		var ref event.Value
		for _, x := range o.binds {
			if !q.Agrees(&ref, x.ev) {
				return
			}
		}
	}
	for _, pr := range op.Preds {
		if !pr.Eval(b) {
			return
		}
	}
	for _, it := range o.items {
		if it.node.Kind == planner.AlgNegated && s.blocked(p.Components[it.node.Comp], it) {
			return
		}
	}
	key := s.key()
	if s.seen[key] {
		return
	}
	s.seen[key] = true
	s.r.stats.Operators[0].Out++
	s.next.push(b)
}

// inInterval lists the events of a leaf's types in [lo, hi], in stream
// order.
func (s *algebraSource) inInterval(it algItem) []*event.Event {
	var evs []*event.Event
	if it.none {
		return nil
	}
	for _, t := range it.node.Types {
		if t < len(s.byType) {
			evs = append(evs, inRange(s.byType[t], bounds{it.lo, it.hi})...)
		}
	}
	if len(it.node.Types) > 1 {
		slices.SortFunc(evs, func(x, y *event.Event) int { return int(x.Seq - y.Seq) })
	}
	return evs
}

// collect builds a closure's list (§4 rule 5) as v1 does. A bound
// closure with no element is an empty list, not nil (nil is unbound).
func (s *algebraSource) collect(c *planner.Component, it algItem) []*event.Event {
	list := s.r.collectList(c, s.b, s.inInterval(it), c.ElemPreds, true)
	if list == nil {
		list = []*event.Event{}
		s.b.Lists[c.Index] = list
	}
	return list
}

// distinct reports whether no event is bound twice, closure elements
// included.
func (s *algebraSource) distinct(o algOcc) bool {
	seen := map[*event.Event]bool{}
	for _, x := range o.binds {
		seen[x.ev] = true
	}
	for _, l := range s.b.Lists {
		for _, e := range l {
			if seen[e] {
				return false
			}
			seen[e] = true
		}
	}
	return true
}

// blocked reports whether an event in a negation's interval rejects the
// derivation; the scan sees events bound elsewhere in the match too.
func (s *algebraSource) blocked(c *planner.Component, it algItem) bool {
	for _, e := range s.inInterval(it) {
		if s.r.blocks(c, e, s.b, c.NegPreds, true) {
			return true
		}
	}
	return false
}

// key names a binding: each bound variable's events.
func (s *algebraSource) key() string {
	var k strings.Builder
	for i, e := range s.b.Events {
		if e != nil && s.r.plan.Components[i].Kind == planner.Single {
			k.WriteString(strconv.Itoa(i) + "=" + strconv.FormatInt(e.Seq, 10) + ";")
		}
	}
	for i, l := range s.b.Lists {
		if l != nil {
			k.WriteString(strconv.Itoa(i) + "=[")
			for _, e := range l {
				k.WriteString(strconv.FormatInt(e.Seq, 10) + ",")
			}
			k.WriteString("];")
		}
	}
	return k.String()
}
