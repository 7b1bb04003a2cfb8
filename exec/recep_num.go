package exec

import (
	"math"
	"slices"

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
		return numOfValue(&ev.Attrs[slot])
	}
	return notANumber
}

// numOfValue is numOf of one value.
func numOfValue(v *event.Value) float64 {
	if v.IsFloat() {
		return v.Float()
	}
	if i := v.Int(); v.IsInt() && -1<<53 <= i && i <= 1<<53 {
		return float64(i)
	}
	return notANumber
}

// notANumber is NaN as a variable, which keeps numOf within the inliner's budget
// (math.NaN, inlined, costs more).
var notANumber = math.NaN()

// numTerm is one side of a numeric check: comp's attribute in slot, times
// k (1 unless scaled), plus c. Its value for the attribute's value x is
// k * x + c (termOf): arith's product when scaled (k * x and x * k are
// the same IEEE product), x itself otherwise (x * 1 is x for every float
// but NaN, which numOf keeps out), then arith's sum. Where arith adds two
// ints (an int c to an unscaled attribute that holds one), the float sum
// is the int's only below 2^53 in magnitude, far from int64's ends: lim
// says up to where a value is the evaluator's (+Inf: all but NaN), and
// past it the evaluator decides (and reports an overflow).
type numTerm struct {
	comp, slot int
	k, c, lim  float64
	scaled     bool
}

// maxExact is the largest magnitude below 2^53: an int sum of two ints
// float64 holds is exact in float64 up to it, and is past it in float64
// whenever it is in int64.
const maxExact = 1<<53 - 1

// termOf is the value k * x + c of a numTerm, rounded as arith rounds
// each step (the conversion keeps the compiler from fusing them), with k
// and c multiplied by the check's sign (numCmp): usable where its
// magnitude is at most the term's lim.
func termOf(k, x, c float64) float64 {
	return float64(k*x) + c
}

// levelCheck is one predicate of a search level, in the plan's order: with
// fast set, `it op bound`, where it reads the component the level chooses
// (column col of its buffer) and bound an event bound before the loop.
type levelCheck struct {
	pr    *planner.Pred
	fast  bool
	op    numCmp
	it    numTerm
	col   int
	bound numTerm
}

// numTermOf matches attr, k * attr or attr * k (k a float constant) on a
// single event's plain attribute, alone or plus or minus a number
// constant c (either side of +) that float64 holds exactly.
func numTermOf(p *planner.Plan, e planner.Expr) (numTerm, bool) {
	switch e := e.(type) {
	case *planner.Attr:
		if e.Index != 0 || e.Builtin != planner.NotBuiltin || p.Components[e.Comp].Kind != planner.Single {
			return numTerm{}, false
		}
		return numTerm{comp: e.Comp, slot: e.Slot, k: 1, lim: math.Inf(1)}, true
	case *planner.Binary:
		if x, k, sub, ok := planner.AddedConst(e); ok {
			return offTermOf(p, x, k, sub)
		}
		if e.Op != ast.OpMul {
			return numTerm{}, false
		}
		x, y := e.X, e.Y
		if _, ok := x.(*planner.Const); !ok {
			x, y = y, x
		}
		k, ok := x.(*planner.Const)
		if !ok || !k.Value.IsFloat() {
			return numTerm{}, false // an int k multiplies ints as ints
		}
		t, ok := numTermOf(p, y)
		if !ok || t.scaled || offset(t) {
			return numTerm{}, false
		}
		t.k, t.scaled = k.Value.Float(), true
		return t, true
	}
	return numTerm{}, false
}

// offTermOf matches x plus k (minus k when sub) as a term plus a
// constant.
func offTermOf(p *planner.Plan, x planner.Expr, k event.Value, sub bool) (numTerm, bool) {
	c := numOfValue(&k)
	t, ok := numTermOf(p, x)
	if c != c || !ok || offset(t) {
		return numTerm{}, false // not a number, or an int float64 does not hold
	}
	if t.c = c; sub {
		t.c = -c // x - c is x + -c: exactly, c being a float64 (an int up to 2^53)
	}
	if k.IsInt() && !t.scaled {
		t.lim = maxExact
	}
	return t, true
}

// constCheck is a buffer's filter `it op k`, it a numTerm of the
// buffer's component and k a number constant, compared as floats (the
// numCmp form: it's factor and k times op's sign). ok: the filter has
// that form; an event whose value is NaN is left to its evaluator.
type constCheck struct {
	ok   bool
	slot int
	k, b float64
	op   numCmp
}

// constCheckOf matches a filter of comp's buffer.
func constCheckOf(p *planner.Plan, comp int, pr *planner.Pred) constCheck {
	e, ok := pr.Expr.(*planner.Binary)
	if !ok {
		return constCheck{}
	}
	switch e.Op {
	case ast.OpEq, ast.OpNe, ast.OpLt, ast.OpLe, ast.OpGt, ast.OpGe:
	default:
		return constCheck{}
	}
	x, y, op := e.X, e.Y, e.Op
	if _, ok := x.(*planner.Const); ok {
		x, y, op = y, x, converse(op)
	}
	t, okt := numTermOf(p, x)
	k, okk := y.(*planner.Const)
	if !okt || !okk || t.comp != comp || offset(t) {
		return constCheck{}
	}
	b := numOfValue(&k.Value)
	if b != b {
		return constCheck{} // not a number, or an int float64 does not hold
	}
	c := cmpOf(op)
	return constCheck{ok: true, slot: t.slot, k: c.sign * t.k, b: c.sign * b, op: c}
}

// compileChecks makes the checks of the level choosing comp; the
// attributes the fast ones read of comp are added to *cols, comp's
// buffer's columns.
func compileChecks(p *planner.Plan, comp int, preds []*planner.Pred, cols *[]int) []levelCheck {
	out := make([]levelCheck, len(preds))
	for i, pr := range preds {
		out[i] = levelCheck{pr: pr}
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
			x, y, op = y, x, converse(op)
		}
		if x.comp != comp {
			continue
		}
		c := &out[i]
		c.fast, c.op, c.it, c.bound = true, cmpOf(op), x, y
		c.col = colOf(cols, x.slot)
	}
	return out
}

// colOf returns slot's index in *cols, a buffer's columns, appending it
// if it is not there.
func colOf(cols *[]int, slot int) int {
	if k := slices.Index(*cols, slot); k >= 0 {
		return k
	}
	*cols = append(*cols, slot)
	return len(*cols) - 1
}

// numCmp is a comparison v op b of two numbers neither NaN in the form a
// loop tests without a branch: (v < b, or for = and != v < b or b < v)
// exclusive-ored with flip, after both sides are multiplied by sign, -1
// for > and <= (-v < -b is v > b). The sides are products already
// (numTerm), and (-k) * x is -(k * x) exactly.
type numCmp struct {
	sign float64
	gt   uint // 1 for = and !=: b < v counts too
	flip uint
}

func cmpOf(op ast.Op) numCmp {
	switch op {
	case ast.OpLt:
		return numCmp{sign: 1}
	case ast.OpLe:
		return numCmp{sign: -1, flip: 1}
	case ast.OpGt:
		return numCmp{sign: -1}
	case ast.OpGe:
		return numCmp{sign: 1, flip: 1}
	case ast.OpEq:
		return numCmp{sign: 1, gt: 1, flip: 1}
	}
	return numCmp{sign: 1, gt: 1} // !=
}

// bit is 1 when v op b holds, else 0, for v and b multiplied by sign
// and not NaN.
func (c numCmp) bit(v, b float64) uint {
	return (b2u(v < b) | b2u(b < v)&c.gt) ^ c.flip
}

// holds is bit as a bool, for a loop that branches on it: only = and !=
// compare twice.
func (c numCmp) holds(v, b float64) bool {
	lt := v < b
	if c.gt != 0 {
		lt = lt || b < v
	}
	return lt != (c.flip != 0)
}

// mask has bit n set when k * col[n] op b holds, the product never NaN,
// for col of 64 values at most: no branch that follows the data.
func (c numCmp) mask(col []float64, k, b float64) uint64 {
	// From the last value down, each bit shifted in at the bottom.
	var m uint64
	if c.gt != 0 {
		for n := len(col) - 1; n >= 0; n-- {
			m = m<<1 | uint64(c.bit(k*col[n], b))
		}
		return m
	}
	// <, <=, > and >= test one side: half of bit's work.
	for n := len(col) - 1; n >= 0; n-- {
		m = m<<1 | uint64(b2u(k*col[n] < b)^c.flip)
	}
	return m
}

// count is the number of x in col for which k * x op b holds, the
// product never NaN, with no branch that follows the data.
func (c numCmp) count(col []float64, k, b float64) int {
	m := 0
	for _, x := range col {
		m += int(c.bit(k*x, b))
	}
	return m
}

// b2u is 1 for true; the compiler makes it a flag set, not a branch.
func b2u(b bool) uint {
	if b {
		return 1
	}
	return 0
}

// newLevelChecks returns checks with their bound sides, which bind writes
// for each loop, in an array of r's (ofRun).
func newLevelChecks(r *runner, checks []levelCheck) levelChecks {
	l := levelChecks{checks: checks, cur: ofRun[fastCheck](r, len(checks))}
	for k, c := range checks {
		sign := c.op.sign
		it, b := c.it, c.bound
		l.cur[k] = fastCheck{k: sign * it.k, c: sign * it.c, lim: it.lim, op: c.op, fast: c.fast,
			comp: b.comp, slot: b.slot, kb: sign * b.k, cb: sign * b.c, limb: b.lim,
			finite: it.k != 0 && !math.IsInf(it.k, 0) && !offset(it) && !offset(b)}
	}
	return l
}

// offset says t adds a constant.
func offset(t numTerm) bool {
	return t.c != 0 || t.lim != math.Inf(1)
}

// levelChecks is a level's checks and, per loop, their fast forms.
type levelChecks struct {
	checks []levelCheck
	// cur[k] is check k over the loop's buffer, usable (ok) when it is
	// fast and its bound side was read as a number (bind).
	cur []fastCheck
}

// fastCheck is a fast check for one loop: k * col[i] op bound (k and op
// are set once, col per search, bound per loop), k and kb multiplied by
// op's sign (numCmp). bound is kb times the
// value of the event bound to comp in slot: a copy of the check's bound
// term, so that bind reads one small array. When a level of the search
// binds comp (from), bind reads the value from column bcol of that
// level's source at the index it has bound (level.at), not from the
// event: the number its buffer took when the event came.
//
// Each side adds its constant (c, cb, times op's sign) and is usable up
// to its lim (numTerm). The loops that test no value for NaN (finite)
// take checks without them.
type fastCheck struct {
	col          []float64
	k, bound     float64
	c, lim       float64
	op           numCmp
	ok, fast     bool
	finite       bool // k is neither 0 nor infinite, no side adds: k * x is NaN only for a NaN x
	comp, slot   int
	kb, cb, limb float64
	from         *level
	bcol         int
}

// over makes the checks read buf's columns, for the loops of one search.
func (l *levelChecks) over(buf *rbuf) {
	for k := range l.checks {
		if c := &l.checks[k]; c.fast {
			l.cur[k].col = buf.cols[c.col]
		}
	}
}

// bind reads the bound sides from the events bound in b, for a loop.
func (l *levelChecks) bind(b *planner.Binding) {
	for k := range l.cur {
		if f := &l.cur[k]; f.fast { // else never ok
			// A NaN bound (0 * inf) leaves the check to its evaluator:
			// NaN equals nothing and is unequal to everything, which
			// numCmp does not say.
			if l := f.from; l != nil {
				f.bindTo(l.src.cols[f.bcol][l.at])
			} else {
				f.bindTo(numOf(b.Events[f.comp], f.slot))
			}
		}
	}
}

// bindTo makes the bound side's value y's, usable (ok) where the term's
// value is the evaluator's and not NaN.
func (f *fastCheck) bindTo(y float64) {
	f.bound = termOf(f.kb, y, f.cb)
	f.ok = math.Abs(f.bound) <= f.limb
}

// candidates returns the indices of the buffer's events in [i0, i1) the
// level's checks may pass, in order: those its one usable fast check
// passes, and, complemented (^i), those passAll must decide. The first
// kind is found by a loop over the column alone.
func (l *levelChecks) candidates(out []int, i0, i1 int) []int {
	out = slices.Grow(out[:0], i1-i0)[:i1-i0]
	m := 0
	switch {
	case len(l.cur) == 0:
		for i := i0; i < i1; i++ {
			out[m] = i
			m++
		}
	case len(l.cur) == 1 && l.cur[0].ok:
		return l.cur[0].selectIn(out, i0, i1)
	default:
		for i := i0; i < i1; i++ {
			out[m] = ^i
			m++
		}
	}
	return out[:m]
}

// selectIn is candidates for a level whose one check is f, fast and
// usable, in out's array: one loop over f's column, with no branch that
// follows the data but for a value the evaluator must decide.
func (f *fastCheck) selectIn(out []int, i0, i1 int) []int {
	// Scalars, so that the loop keeps them in registers.
	col, k, c, lim, bound, op := f.col[i0:i1], f.k, f.c, f.lim, f.bound, f.op
	out = out[:len(col)]
	m := 0
	for n, x := range col {
		v := termOf(k, x, c)
		if !(math.Abs(v) <= lim) { // NaN, or past where it is the evaluator's
			out[m] = ^(i0 + n)
			m++
			continue
		}
		out[m] = i0 + n
		m += int(op.bit(v, bound))
	}
	return out[:m]
}

// passAll checks event i, bound in b, in the plan's order, each check by
// its fast form where usable and i's value is a number, else by its
// evaluator.
func (l *levelChecks) passAll(b *planner.Binding, i int) bool {
	for k := range l.checks {
		if f := &l.cur[k]; f.ok {
			if x := termOf(f.k, f.col[i], f.c); math.Abs(x) <= f.lim {
				if f.op.bit(x, f.bound) == 0 {
					return false
				}
				continue
			}
		}
		if !l.checks[k].pr.Eval(b) {
			return false
		}
	}
	return true
}
