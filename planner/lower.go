package planner

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
)

// Binding is the partial match an evaluator reads: the events bound to
// components, closure lists, and the candidate element of a per-element
// predicate. Engines reuse one Binding per query.
type Binding struct {
	Events []*event.Event   // by component index; a negated slot holds the candidate
	Lists  [][]*event.Event // by component index, for closures
	Elem   *event.Event     // c[i] while checking a closure's per-element predicates
}

// NewBinding returns a binding sized for the plan.
func (p *Plan) NewBinding() *Binding {
	return &Binding{
		Events: make([]*event.Event, len(p.Components)),
		Lists:  make([][]*event.Event, len(p.Components)),
	}
}

// Eval computes a value; Cond decides a condition.
type (
	Eval func(b *Binding) event.Value
	Cond func(b *Binding) bool
)

// RuntimeError is raised (as a panic) by an evaluator that cannot go on,
// such as a division by zero or an int overflow; engines recover it at
// their boundary and return it as the query's error. It points at the
// expression.
type RuntimeError struct{ Err *ast.Error }

func (e *RuntimeError) Error() string { return e.Err.Error() }
func (e *RuntimeError) Unwrap() error { return e.Err }

// Builtin names the attributes every event has (event's one table).
type Builtin = event.Builtin

const (
	NotBuiltin = event.NotBuiltin
	BuiltinTS  = event.BuiltinTS
	BuiltinSeq = event.BuiltinSeq
)

func readAttr(e *event.Event, slot int, b Builtin) event.Value { return e.Get(slot, b) }

func builtinOf(name string) Builtin { return event.LookupBuiltin(name) }

// lowerCond compiles a checked condition to a closure. It runs once the
// query has checked clean, so e has no nil operand.
func (p *Plan) lowerCond(e Expr) Cond {
	switch e := e.(type) {
	case *Binary:
		switch e.Op {
		case ast.OpAnd:
			x, y := p.lowerCond(e.X), p.lowerCond(e.Y)
			return func(b *Binding) bool { return x(b) && y(b) }
		case ast.OpOr:
			x, y := p.lowerCond(e.X), p.lowerCond(e.Y)
			return func(b *Binding) bool { return x(b) || y(b) }
		}
		if fast := p.fastComparison(e); fast != nil {
			return fast
		}
		x, y := p.lowerExpr(e.X), p.lowerExpr(e.Y)
		op := e.Op
		return func(b *Binding) bool { return compare(op, x(b), y(b)) }
	case *Unary: // NOT
		x := p.lowerCond(e.X)
		return func(b *Binding) bool { return !x(b) }
	case *Const:
		v := e.Value.Bool()
		return func(*Binding) bool { return v }
	case *EquivTest:
		return p.nestedEquivalence(e.Equivs)
	case *Has:
		x := p.lowerExpr(e.X)
		return func(b *Binding) bool { return !x(b).IsAbsent() }
	}
	panic(fmt.Sprintf("planner: cannot lower condition %T", e))
}

// fastComparison compiles the commonest forms, v.attr op w.attr and
// v.attr op constant on single events, to one closure that reads the
// slots in place and compares two ints without building values; other
// kinds take compare's general path.
func (p *Plan) fastComparison(e *Binary) Cond {
	x, ok := p.plainAttr(e.X)
	if !ok {
		return nil
	}
	op := e.Op
	if lit, isLit := e.Y.(*Const); isLit {
		k := lit.Value
		if !k.IsInt() {
			return nil
		}
		ki := k.Int()
		return func(b *Binding) bool {
			ev := b.Events[x.comp]
			if ev == nil {
				return true
			}
			if v := x.read(ev); v.IsInt() {
				return CompareNumbers(op, v.Int(), ki)
			}
			return compare(op, readAttr(ev, x.slot, x.builtin), k)
		}
	}
	y, ok := p.plainAttr(e.Y)
	if !ok {
		return nil
	}
	return func(b *Binding) bool {
		ex, ey := b.Events[x.comp], b.Events[y.comp]
		if ex == nil || ey == nil {
			return true
		}
		if vx, vy := x.read(ex), y.read(ey); vx.IsInt() && vy.IsInt() {
			return CompareNumbers(op, vx.Int(), vy.Int())
		}
		return compare(op, readAttr(ex, x.slot, x.builtin), readAttr(ey, y.slot, y.builtin))
	}
}

// plainAttr is v.attr on a single event, read in place.
type plainAttr struct {
	comp, slot int
	builtin    Builtin
}

// absentValue is what read points to for an attribute the event lacks.
var absentValue event.Value

// read returns a pointer to the attribute's value, so that the hot path
// copies no Value; builtins are not in the slots and read as absent here
// (callers then take readAttr's general path).
func (a plainAttr) read(e *event.Event) *event.Value {
	if a.builtin != NotBuiltin || a.slot >= len(e.Attrs) {
		return &absentValue
	}
	return &e.Attrs[a.slot]
}

// plainAttr matches v.attr on a component that is not a closure.
func (p *Plan) plainAttr(e Expr) (plainAttr, bool) {
	a, ok := e.(*Attr)
	if !ok || a.Index != 0 || p.Components[a.Comp].Kind == Closure {
		return plainAttr{}, false
	}
	return plainAttr{comp: a.Comp, slot: a.Slot, builtin: a.Builtin}, true
}

// CompareNumbers is a op b for two numbers of one kind (with floats, Go's
// comparisons: NaN is unequal to all, and neither below nor above);
// MATCH_RECOGNIZE's DEFINE compares its columns with it too.
func CompareNumbers[T int64 | float64](op ast.Op, a, b T) bool {
	switch op {
	case ast.OpEq:
		return a == b
	case ast.OpNe:
		return a != b
	case ast.OpLt:
		return a < b
	case ast.OpLe:
		return a <= b
	case ast.OpGt:
		return a > b
	}
	return a >= b
}

// compare applies a comparison; a comparison that reads an absent
// attribute holds (SASE's rule), values of different kinds are unequal.
func compare(op ast.Op, x, y event.Value) bool {
	if x.IsAbsent() || y.IsAbsent() {
		return true
	}
	switch op {
	case ast.OpEq:
		return x.Equal(y)
	case ast.OpNe:
		return !x.Equal(y)
	}
	r, ok := x.Compare(y)
	if !ok {
		return false
	}
	switch op {
	case ast.OpLt:
		return r < 0
	case ast.OpLe:
		return r <= 0
	case ast.OpGt:
		return r > 0
	case ast.OpGe:
		return r >= 0
	}
	return false
}

// nestedEquivalence compiles an equivalence test under OR or NOT: it holds
// when the positive singles and closure elements agree on each attribute
// (Equiv.Agrees).
func (p *Plan) nestedEquivalence(equivs []*Equiv) Cond {
	comps := p.Components
	return func(b *Binding) bool {
		for _, q := range equivs {
			var ref event.Value
			for _, comp := range comps {
				var evs []*event.Event
				switch comp.Kind {
				case Single:
					evs = b.Events[comp.Index : comp.Index+1]
				case Closure:
					evs = b.Lists[comp.Index]
				}
				for _, ev := range evs {
					if !q.Agrees(&ref, ev) {
						return false
					}
				}
			}
		}
		return true
	}
}

// lowerExpr compiles a checked value expression to a closure.
func (p *Plan) lowerExpr(e Expr) Eval {
	switch e := e.(type) {
	case *Const:
		v := e.Value
		return func(*Binding) event.Value { return v }
	case *Attr:
		return lowerAttr(e)
	case *Len:
		i := e.Comp
		return func(b *Binding) event.Value { return event.IntValue(int64(len(b.Lists[i]))) }
	case *Unary: // -x
		x := p.lowerExpr(e.X)
		overflow := p.overflow(e.Pos(), e.Text)
		return func(b *Binding) event.Value { return negate(x(b), overflow) }
	case *Binary:
		x, y := p.lowerExpr(e.X), p.lowerExpr(e.Y)
		op := e.Op
		// Made once, so that the hot path allocates nothing.
		faults := [...]*RuntimeError{
			DivZero:  p.runtimeError(e.OpPos, "division by zero at run time in "+e.Text),
			Overflow: p.overflow(e.OpPos, e.Text),
		}
		return func(b *Binding) event.Value {
			v, f := Arith(op, x(b), y(b))
			if f != NoFault {
				panic(faults[f])
			}
			return v
		}
	case *Abs:
		x := p.lowerExpr(e.X)
		overflow := p.overflow(e.Pos(), e.Text)
		return func(b *Binding) event.Value {
			v := x(b)
			switch v.Kind() {
			case event.Int:
				if v.Int() < 0 {
					return negate(v, overflow)
				}
				return v
			case event.Float:
				return event.FloatValue(math.Abs(v.Float()))
			}
			return event.Value{}
		}
	case *Aggregate:
		i := e.Comp
		if !e.HasAttr {
			return func(b *Binding) event.Value { return event.IntValue(int64(len(b.Lists[i]))) }
		}
		fn, slot, bi := e.Func, e.Slot, e.Builtin
		overflow := p.overflow(e.Pos(), e.Text)
		return func(b *Binding) event.Value { return aggregate(fn, b.Lists[i], slot, bi, overflow) }
	}
	panic(fmt.Sprintf("planner: cannot lower value %T", e))
}

// lowerAttr reads an attribute of a single's or negated component's event,
// or of a closure's element.
func lowerAttr(e *Attr) Eval {
	i, slot, bi := e.Comp, e.Slot, e.Builtin
	switch e.Index {
	case 0:
		return func(b *Binding) event.Value {
			if ev := b.Events[i]; ev != nil {
				return readAttr(ev, slot, bi)
			}
			return event.Value{}
		}
	case ast.IndexI:
		if e.Offset == 0 {
			return func(b *Binding) event.Value { return readAttr(b.Elem, slot, bi) }
		}
		// Element i+off is list[len(list)+off]: the list holds elements 1..i-1.
		off := e.Offset
		return func(b *Binding) event.Value {
			l := b.Lists[i]
			if j := len(l) + off; j >= 0 && j < len(l) {
				return readAttr(l[j], slot, bi)
			}
			return event.Value{}
		}
	case ast.IndexConst:
		n := e.Offset
		return func(b *Binding) event.Value {
			if l := b.Lists[i]; n >= 1 && n <= len(l) {
				return readAttr(l[n-1], slot, bi)
			}
			return event.Value{}
		}
	default: // ast.IndexLen
		off := e.Offset
		return func(b *Binding) event.Value {
			l := b.Lists[i]
			if j := len(l) - 1 + off; j >= 0 && j < len(l) {
				return readAttr(l[j], slot, bi)
			}
			return event.Value{}
		}
	}
}

// runtimeError is the error a lowered evaluator panics with at the
// query's offset off.
func (p *Plan) runtimeError(off int, msg string) *RuntimeError {
	return &RuntimeError{Err: &ast.Error{Src: p.Src, Offset: off, Msg: msg}}
}

// overflow is the error of an int result beyond int64 in expression
// text, at the query's offset off.
func (p *Plan) overflow(off int, text string) *RuntimeError {
	return p.runtimeError(off, "integer overflow at run time in "+text)
}

// negate is -v; MinInt64, whose negation int64 does not hold, panics
// with overflow.
func negate(v event.Value, overflow *RuntimeError) event.Value {
	switch v.Kind() {
	case event.Int:
		if v.Int() == math.MinInt64 {
			panic(overflow)
		}
		return event.IntValue(-v.Int())
	case event.Float:
		return event.FloatValue(-v.Float())
	}
	return event.Value{}
}

// Fault is why Arith gives no value.
type Fault uint8

const (
	NoFault  Fault = iota
	DivZero        // a zero divisor
	Overflow       // an int result int64 does not hold
)

// Arith applies an arithmetic operator: ints stay ints except for /, which
// always yields a float; % is the truncated remainder; absent or
// non-numeric operands give absent. A zero divisor, or an int result
// beyond int64, gives no value and its Fault: never a wrapped int.
func Arith(op ast.Op, x, y event.Value) (event.Value, Fault) {
	if !x.IsNumber() || !y.IsNumber() {
		return event.Value{}, NoFault
	}
	if x.IsInt() && y.IsInt() && op != ast.OpDiv {
		a, b := x.Int(), y.Int()
		if op == ast.OpMod {
			if b == 0 {
				return event.Value{}, DivZero
			}
			return event.IntValue(a % b), NoFault // MinInt64 % -1 is 0, as it should be
		}
		if r, ok := IntArith(op, a, b); ok {
			return event.IntValue(r), NoFault
		}
		return event.Value{}, Overflow
	}
	a, b := x.AsFloat(), y.AsFloat()
	switch op {
	case ast.OpAdd:
		return event.FloatValue(a + b), NoFault
	case ast.OpSub:
		return event.FloatValue(a - b), NoFault
	case ast.OpMul:
		return event.FloatValue(a * b), NoFault
	case ast.OpDiv:
		if b == 0 {
			return event.Value{}, DivZero
		}
		return event.FloatValue(a / b), NoFault
	case ast.OpMod:
		if b == 0 {
			return event.Value{}, DivZero
		}
		return event.FloatValue(math.Mod(a, b)), NoFault
	}
	return event.Value{}, NoFault
}

// IntArith is a + b, a - b or a * b (op), wrapped to int64, and whether
// int64 holds it: the exact result then.
func IntArith(op ast.Op, a, b int64) (int64, bool) {
	switch op {
	case ast.OpAdd:
		return AddInt(a, b)
	case ast.OpSub:
		r := a - b
		return r, (a^b)&(a^r) >= 0 // overflow: the operands' signs differ and r's is b's
	}
	// The 128-bit product's high word, from the unsigned one's: it must
	// be the low word's sign extended.
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if a < 0 {
		hi -= uint64(b)
	}
	if b < 0 {
		hi -= uint64(a)
	}
	return int64(lo), int64(hi) == int64(lo)>>63
}

// AddInt is IntArith's a + b, small enough to inline in a search loop.
func AddInt(a, b int64) (int64, bool) {
	r := a + b
	return r, (a^r)&(b^r) >= 0 // overflow: both operands' sign differs from r's
}

// IntSum adds ints exactly: a partial sum may pass int64's range and
// come back (MaxInt64 + 1 - 1), as long as the whole sum fits. It counts
// the times the wrapped sum passed either end.
type IntSum struct{ sum, wraps int64 }

// Add adds v.
func (s *IntSum) Add(v int64) {
	r, ok := AddInt(s.sum, v)
	if !ok {
		if v > 0 {
			s.wraps++
		} else {
			s.wraps--
		}
	}
	s.sum = r
}

// Sum is the sum and whether int64 holds it.
func (s *IntSum) Sum() (int64, bool) { return s.sum, s.wraps == 0 }

// aggregate computes count/sum/avg/min/max over a closure list. Elements
// without the attribute are skipped; with no values sum/avg/min/max are
// absent and count is 0. A sum of ints beyond int64 panics with overflow.
func aggregate(fn string, list []*event.Event, slot int, bi Builtin, overflow *RuntimeError) event.Value {
	var (
		n      int64
		isum   IntSum
		fsum   float64
		allInt = true
		best   event.Value
	)
	for _, ev := range list {
		v := readAttr(ev, slot, bi)
		if v.IsAbsent() || (!v.IsNumber() && (fn == "sum" || fn == "avg")) {
			continue
		}
		n++
		switch fn {
		case "sum", "avg":
			if v.IsInt() {
				isum.Add(v.Int())
			} else {
				allInt = false
			}
			fsum += v.AsFloat()
		case "min", "max":
			if best.IsAbsent() {
				best = v
			} else if r, ok := v.Compare(best); ok && ((fn == "min" && r < 0) || (fn == "max" && r > 0)) {
				best = v
			}
		}
	}
	switch fn {
	case "count":
		return event.IntValue(n)
	case "sum":
		if n == 0 {
			return event.Value{}
		}
		if !allInt {
			return event.FloatValue(fsum)
		}
		sum, ok := isum.Sum()
		if !ok {
			panic(overflow)
		}
		return event.IntValue(sum)
	case "avg":
		if n == 0 {
			return event.Value{}
		}
		return event.FloatValue(fsum / float64(n))
	}
	return best
}
