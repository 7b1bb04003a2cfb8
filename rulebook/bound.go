package rulebook

import (
	"math"
	"slices"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// reachBound is a gated rule's conjunct that compares a later single
// component's plain attribute with its start's attribute, plus or minus
// a constant: `b.price < a.price - 5`. The side of the start grows with
// its attribute, so among the starts in the window the one with the
// greatest attribute (for < and <=; the least, for > and >=) makes it
// hold if any does: an event of the later component for which the
// conjunct fails with that start can be bound in no match, and the rule
// need not read it.
type reachBound struct {
	types []int // the later component's: no other but the start names them
	start int   // component index of the start
	later int   // component index of the later component
	field planner.Field
	at    planner.Field // the later component's attribute
	holds [3]bool       // later.at op start.field + k: whether it holds at <, =, > (cmp.Compare + 1)
	k     float64
	max   bool // the greatest start decides (<, <=); else the least
	pred  planner.Cond
}

// orders says at which outcomes of a comparison each order holds.
var orders = map[ast.Op][3]bool{
	ast.OpLt: {true, false, false}, ast.OpLe: {true, true, false},
	ast.OpGt: {false, false, true}, ast.OpGe: {false, true, true},
}

// exact is the largest magnitude of an attribute a bound orders by: an
// int beyond it may wrap round when the constant is added.
const exact = 1 << 52

// findBound finds rule p's reachBound, given its gated types.
func findBound(p *planner.Plan, gated []int) *reachBound {
	start := p.Components[p.First()]
	for _, pred := range p.Where {
		if len(pred.Vars) != 2 || pred.Eval == nil || !slices.Contains(pred.Vars, start.Index) {
			continue
		}
		later := pred.Vars[0]
		if later == start.Index {
			later = pred.Vars[1]
		}
		c := p.Components[later]
		if c.Kind != planner.Single || len(c.Types) == 0 || !allIn(c.Types, gated) || namedElsewhere(p, c, start) {
			continue
		}
		b, ok := pred.Expr.(*planner.Binary)
		if !ok || !slices.Contains(ordOps[:], b.Op) {
			continue
		}
		op, x, y := b.Op, b.X, b.Y
		if !plainAttr(x, later) { // f(a) op b.x: b.x op' f(a)
			x, y = y, x
			op = map[ast.Op]ast.Op{ast.OpLt: ast.OpGt, ast.OpLe: ast.OpGe, ast.OpGt: ast.OpLt, ast.OpGe: ast.OpLe}[op]
		}
		field, k, ok := growing(y, start.Index)
		if !plainAttr(x, later) || !ok {
			continue
		}
		return &reachBound{types: c.Types, start: start.Index, later: later, field: field, at: x.(*planner.Attr).Field,
			holds: orders[op], k: k, max: op == ast.OpLt || op == ast.OpLe, pred: pred.Eval}
	}
	return nil
}

func allIn(ts, set []int) bool {
	return !slices.ContainsFunc(ts, func(t int) bool { return !slices.Contains(set, t) })
}

// namedElsewhere says whether a component of p other than c and the
// start names one of c's types: an event of it could be bound there (a
// start reaches the rule through the filter index whatever its bound).
func namedElsewhere(p *planner.Plan, c, start *planner.Component) bool {
	return slices.ContainsFunc(p.Components, func(o *planner.Component) bool {
		return o != c && o != start && slices.ContainsFunc(o.Types, func(t int) bool { return slices.Contains(c.Types, t) })
	})
}

// plainAttr says whether e reads an attribute of component comp's event.
func plainAttr(e planner.Expr, comp int) bool {
	a, ok := e.(*planner.Attr)
	return ok && a.Comp == comp && a.Index == 0
}

// growing matches comp's plain attribute, alone or plus or minus a
// number constant (c + attr too): an expression that grows with the
// attribute. It returns the attribute and what is added to it.
func growing(e planner.Expr, comp int) (planner.Field, float64, bool) {
	var k float64
	if x, c, sub, ok := planner.AddedConst(e); ok {
		if !small(c) {
			return planner.Field{}, 0, false
		}
		if k = c.AsFloat(); sub {
			k = -k
		}
		e = x
	}
	if !plainAttr(e, comp) {
		return planner.Field{}, 0, false
	}
	return e.(*planner.Attr).Field, k, true
}

// small says whether v is a finite float or an int of magnitude at most
// exact: a number the bound orders by its float, exactly.
func small(v event.Value) bool {
	switch {
	case v.IsInt():
		return v.Int() >= -exact && v.Int() <= exact
	case v.IsFloat():
		return !math.IsNaN(v.Float()) && !math.IsInf(v.Float(), 0)
	}
	return false
}

// gateState is what the visit of a type's live list and a start read
// of one gated rule, in one cache line (64 bytes): read rule after rule,
// at 10,000 rules each of its fields kept elsewhere (the gate, the bound,
// the deque's front) missed the cache. It holds a copy of what reaches
// reads of the rule's bound, and of its deque's front, the deciding start.
type gateState struct {
	until     int64 // the end of the window of the last start the rule read
	unordered int64 // until when a start the bound cannot order keeps every event reaching it
	// thr is the start's side of the bound with the deciding start, its
	// attribute plus k; topEnd the end of that start's window,
	// math.MinInt64 when there is none.
	thr     float64
	topEnd  int64
	k       float64
	window  int64
	at      int32 // the bound's later attribute's slot
	typ     int32 // the type gated, where it is one (gates)
	gates   uint8 // how many types are gated: 0, 1 or 2 for more
	atB     event.Builtin
	started bool // the rule has read a start
	bounded bool // the rule has a reachBound: its starts are filed
	max     bool
	holds   [3]bool
}

func newGateState() gateState {
	return gateState{until: math.MinInt64, unordered: math.MinInt64, topEnd: math.MinInt64}
}

// of copies what reaches reads of the rule's gate g.
func (h *gateState) of(g *gate) {
	h.window, h.gates = g.window, uint8(min(2, len(g.types)))
	if h.gates == 1 {
		h.typ = int32(g.types[0])
	}
	if b := g.bound; b != nil {
		h.bounded = true
		h.k, h.at, h.atB, h.max, h.holds = b.k, int32(b.at.Slot), b.at.Builtin, b.max, b.holds
	}
}

// starts is a rule's window of starts for its reachBound: a deque of the
// starts no later start outranks (a later start with a greater
// attribute, for max, lasts longer and decides for both), so its front is
// the deciding start (copied into the rule's gateState). The front is
// kept beside the rest's header, in one cache line (64 bytes): a rule
// mostly holds one start at a time, and a deque in memory of its own
// missed the cache at nearly every start (at 10,000 rules, a fifth of the
// misses of a 1 MB cache).
type starts struct {
	top    ranked   // the front; top.ev is nil when the deque is empty
	rest   []ranked // the starts after the front, from head on
	head   int32
	field  int32 // the bound's start attribute's slot
	fieldB event.Builtin
}

// of copies what add reads of the rule's bound b.
func (s *starts) of(b *reachBound) { s.field, s.fieldB = int32(b.field.Slot), b.field.Builtin }

type ranked struct {
	ev  *event.Event
	key float64 // the attribute, negated for min
	end int64   // the end of its window: reaches reads it, not the event
}

// add files start ev, whose window is h.window.
func (s *starts) add(h *gateState, ev *event.Event) {
	v := ev.Get(int(s.field), s.fieldB)
	if !small(v) {
		h.unordered = max(h.unordered, satAdd(ev.TS, h.window))
		return
	}
	key := v.AsFloat()
	if !h.max {
		key = -key
	}
	// Drop the starts ev outranks, from the back.
	for s.top.ev != nil {
		if n := len(s.rest); n > int(s.head) {
			if s.rest[n-1].key > key {
				break
			}
			s.rest[n-1] = ranked{}
			s.rest = s.rest[:n-1]
			continue
		}
		if s.top.key > key {
			break
		}
		s.top = ranked{}
	}
	r := ranked{ev, key, satAdd(ev.TS, h.window)}
	if s.top.ev == nil {
		s.top, s.rest, s.head = r, s.rest[:0], 0
		h.front(r)
		return
	}
	if s.head > 0 && int(s.head) == len(s.rest) {
		s.rest, s.head = s.rest[:0], 0
	}
	s.rest = append(s.rest, r)
}

// front makes r the deciding start.
func (h *gateState) front(r ranked) {
	h.thr, h.topEnd = threshold(r.key, h.max, h.k), r.end
}

// threshold is the start's side of a bound, its attribute plus k, from
// the deciding start's key (the attribute, negated for min). Both sides
// are exact in floats (at most 2^53), as the conjunct computes and
// compares them: the conjunct without its closure.
func threshold(key float64, max bool, k float64) float64 {
	if !max {
		key = -key
	}
	return key + k
}

// holdsAt is a bound's outcome for the later attribute x against the
// start's side thr: holds at <, =, >.
func holdsAt(holds *[3]bool, x, thr float64) bool {
	switch {
	case x < thr:
		return holds[0]
	case x > thr:
		return holds[2]
	}
	return holds[1]
}

// expire drops the starts whose window ends before ts, and copies the
// new front, if any, into h.
func (s *starts) expire(h *gateState, ts int64) {
	for s.top.ev != nil && s.top.end < ts {
		if int(s.head) == len(s.rest) {
			s.top, s.rest, s.head = ranked{}, s.rest[:0], 0
			break
		}
		s.top, s.rest[s.head] = s.rest[s.head], ranked{}
		s.head++
	}
	if s.top.ev == nil {
		h.topEnd = math.MinInt64
		return
	}
	if int(s.head) > len(s.rest)/2 { // keep the deque's memory its starts'
		n := copy(s.rest, s.rest[s.head:])
		clear(s.rest[n:])
		s.rest, s.head = s.rest[:n], 0
	}
	h.front(s.top)
}

// reaches says whether event e of the later component may be bound in a
// match with a start in its window: the conjunct holds with the
// deciding start, or a start in the window cannot be ordered. x is e's
// attribute the bound reads, as a float, where it is small; where it is
// not (xok false), known is false: holds decides.
func (h *gateState) reaches(s *starts, e *event.Event, x float64, xok bool) (ok, known bool) {
	if e.TS <= h.unordered {
		return true, true
	}
	if e.TS > h.topEnd {
		if s.expire(h, e.TS); h.topEnd == math.MinInt64 {
			return false, true
		}
	}
	if !xok {
		return false, false
	}
	return holdsAt(&h.holds, x, h.thr), true
}

// holds evaluates b's conjunct on e and the deciding start, which
// reaches has left at the deque's front.
func (s *starts) holds(b *reachBound, e *event.Event, bind *planner.Binding) bool {
	return b.holdsWith(s.top.ev, e, bind)
}

// holdsWith evaluates b's conjunct on start and e, the later event.
func (b *reachBound) holdsWith(start, e *event.Event, bind *planner.Binding) bool {
	bind.Events[b.start], bind.Events[b.later] = start, e
	ok := b.pred(bind)
	bind.Events[b.start], bind.Events[b.later] = nil, nil
	return ok
}
