package exec

import (
	"math"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// ReCEP's search checks its predicates per buffered event in its inner
// loops. The commonest correlation predicates, `x.a op y.b` and
// `x.a op k * y.b` with a float constant k (the paper's `a.price > 1.1 *
// b.price`), compare two numbers: for those the buffer of the component
// being chosen keeps the attribute as a float64 column, the other side is
// read once per loop, and the loop compares two floats. Where a value is
// not one float64 orders exactly as the predicate does (absent, not a
// number, an int beyond 2^53), numOf gives NaN and the predicate's own
// evaluator decides.

// numOf returns a's value in ev as a float64 when float64 arithmetic and
// comparison give exactly what the evaluators do with the Value (ints up
// to 2^53 in magnitude, floats but NaN), else NaN.
func numOf(ev *event.Event, slot int) float64 {
	if slot < len(ev.Attrs) {
		switch v := &ev.Attrs[slot]; v.Kind() {
		case event.Int:
			if i := v.Int(); -1<<53 <= i && i <= 1<<53 {
				return float64(i)
			}
		case event.Float:
			return v.Float()
		}
	}
	return math.NaN()
}

// numTerm is one side of a numeric check: comp's attribute in slot, times
// k when scaled.
type numTerm struct {
	comp, slot int
	k          float64
	scaled     bool
}

// of is the term's value for the attribute's value x: arith's product
// when scaled (k * x and x * k are the same IEEE product).
func (t numTerm) of(x float64) float64 {
	if t.scaled {
		return t.k * x
	}
	return x
}

// check is one predicate of a search level, in the plan's order: with
// fast set, `it op bound`, where it reads the component the level chooses
// (column col of its buffer) and bound an event bound before the loop.
type check struct {
	pr    *planner.Pred
	fast  bool
	op    ast.Op
	it    numTerm
	col   int
	bound numTerm
}

// numTermOf matches attr, k * attr or attr * k (k a float constant) on a
// single event's plain attribute.
func numTermOf(p *planner.Plan, e planner.Expr) (numTerm, bool) {
	switch e := e.(type) {
	case *planner.Attr:
		if e.Index != 0 || e.Builtin != planner.NotBuiltin || p.Components[e.Comp].Kind != planner.Single {
			return numTerm{}, false
		}
		return numTerm{comp: e.Comp, slot: e.Slot}, true
	case *planner.Binary:
		if e.Op != ast.OpMul {
			return numTerm{}, false
		}
		x, y := e.X, e.Y
		if _, ok := x.(*planner.Const); !ok {
			x, y = y, x
		}
		k, ok := x.(*planner.Const)
		if !ok || k.Value.Kind() != event.Float {
			return numTerm{}, false // an int k multiplies ints as ints
		}
		t, ok := numTermOf(p, y)
		if !ok || t.scaled {
			return numTerm{}, false
		}
		t.k, t.scaled = k.Value.Float(), true
		return t, true
	}
	return numTerm{}, false
}

// flipped is op with its operands swapped: x op y is y flipped(op) x.
func flipped(op ast.Op) ast.Op {
	switch op {
	case ast.OpLt:
		return ast.OpGt
	case ast.OpLe:
		return ast.OpGe
	case ast.OpGt:
		return ast.OpLt
	case ast.OpGe:
		return ast.OpLe
	}
	return op
}

// compileChecks makes the checks of the level choosing comp; the
// attributes the fast ones read of comp are added to *cols, comp's
// buffer's columns.
func compileChecks(p *planner.Plan, comp int, preds []*planner.Pred, cols *[]int) []check {
	out := make([]check, len(preds))
	for i, pr := range preds {
		out[i] = check{pr: pr}
		e, ok := pr.Expr.(*planner.Binary)
		if !ok {
			continue
		}
		switch e.Op {
		case ast.OpEq, ast.OpNe, ast.OpLt, ast.OpLe, ast.OpGt, ast.OpGe:
		default:
			continue
		}
		x, okx := numTermOf(p, e.X)
		y, oky := numTermOf(p, e.Y)
		op := e.Op
		if !okx || !oky || x.comp == y.comp {
			continue
		}
		if y.comp == comp {
			x, y, op = y, x, flipped(op)
		}
		if x.comp != comp {
			continue
		}
		c := &out[i]
		c.fast, c.op, c.it, c.bound = true, op, x, y
		c.col = -1
		for k, slot := range *cols {
			if slot == x.slot {
				c.col = k
			}
		}
		if c.col < 0 {
			c.col = len(*cols)
			*cols = append(*cols, x.slot)
		}
	}
	return out
}

// compareFloats is compare for two numbers in float64 form (numOf): NaN
// orders nothing and equals nothing, as in Value.Compare and Value.Equal.
func compareFloats(op ast.Op, x, y float64) bool {
	switch op {
	case ast.OpLt:
		return x < y
	case ast.OpLe:
		return x <= y
	case ast.OpGt:
		return x > y
	case ast.OpGe:
		return x >= y
	case ast.OpEq:
		return x == y
	}
	return x != y
}

// levelChecks is a level's checks with, per loop, the bound sides' values.
type levelChecks struct {
	checks []check
	bound  []float64
	// fast: every bound side read as a number for this loop; else the
	// evaluators decide every check.
	fast bool
}

// bind reads the bound sides from the events bound in b.
func (l *levelChecks) bind(b *planner.Binding) {
	l.fast = true
	for k := range l.checks {
		c := &l.checks[k]
		if !c.fast {
			continue
		}
		x := numOf(b.Events[c.bound.comp], c.bound.slot)
		if x != x {
			l.fast = false
			return
		}
		l.bound[k] = c.bound.of(x)
	}
}

// pass checks buffered event i of buf, bound in b.
func (l *levelChecks) pass(b *planner.Binding, buf *rbuf, i int) bool {
	for k := range l.checks {
		c := &l.checks[k]
		if c.fast && l.fast {
			if x := buf.cols[c.col][i]; x == x {
				if !compareFloats(c.op, c.it.of(x), l.bound[k]) {
					return false
				}
				continue
			}
		}
		if !c.pr.Eval(b) {
			return false
		}
	}
	return true
}
