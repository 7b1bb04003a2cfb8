package rulebook

import (
	"cmp"
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

// starts is a rule's window of starts for its reachBound: a deque of the
// starts no later start outranks (a later start with a greater
// attribute, for max, lasts longer and decides for both), so its front
// is the deciding start; and until when a start it cannot order (an
// absent, non-number or huge attribute) keeps every event reaching the
// rule. It holds a copy of what add and reaches read of its bound, in
// its cache line (64 bytes): read rule after rule at 10,000 rules, the
// bound missed the cache too.
type starts struct {
	q         []ranked
	head      int
	unordered int64
	k         float64
	field, at int32 // the bound's attributes' slots
	fieldB    event.Builtin
	atB       event.Builtin
	max       bool
	holds     [3]bool
}

// of copies what add and reaches read of the rule's bound b.
func (s *starts) of(b *reachBound) {
	s.k, s.field, s.at, s.fieldB, s.atB, s.max, s.holds = b.k, int32(b.field.Slot), int32(b.at.Slot), b.field.Builtin, b.at.Builtin, b.max, b.holds
}

type ranked struct {
	ev  *event.Event
	key float64 // the attribute, negated for min
	end int64   // the end of its window: reaches reads it, not the event
}

// add files start ev, whose window is w.
func (s *starts) add(ev *event.Event, w int64) {
	v := ev.Get(int(s.field), s.fieldB)
	if !small(v) {
		s.unordered = max(s.unordered, satAdd(ev.TS, w))
		return
	}
	key := v.AsFloat()
	if !s.max {
		key = -key
	}
	for len(s.q) > s.head && s.q[len(s.q)-1].key <= key {
		s.q[len(s.q)-1] = ranked{}
		s.q = s.q[:len(s.q)-1]
	}
	if s.head > 0 && s.head == len(s.q) {
		s.q, s.head = s.q[:0], 0
	}
	s.q = append(s.q, ranked{ev, key, satAdd(ev.TS, w)})
}

// reaches says whether event e of the later component may be bound in a
// match with a start in its window: the conjunct holds with the
// deciding start, or a start in the window cannot be ordered.
func (s *starts) reaches(b *reachBound, e *event.Event, bind *planner.Binding) bool {
	if e.TS <= s.unordered {
		return true
	}
	for s.head < len(s.q) && s.q[s.head].end < e.TS {
		s.q[s.head] = ranked{}
		s.head++
	}
	if s.head == len(s.q) {
		s.q, s.head = s.q[:0], 0
		return false
	}
	if s.head > len(s.q)/2 { // keep the deque's memory its starts'
		n := copy(s.q, s.q[s.head:])
		clear(s.q[n:])
		s.q, s.head = s.q[:n], 0
	}
	top := s.q[s.head]
	if v := e.Get(int(s.at), s.atB); small(v) {
		// Both sides are exact in floats (at most 2^53), as the conjunct
		// computes and compares them: the conjunct without its closure.
		a := top.key
		if !s.max {
			a = -a
		}
		return s.holds[cmp.Compare(v.AsFloat(), a+s.k)+1]
	}
	bind.Events[b.start], bind.Events[b.later] = top.ev, e
	ok := b.pred(bind)
	bind.Events[b.start], bind.Events[b.later] = nil, nil
	return ok
}
