package planner

import (
	"fmt"
	"math"
	"strings"

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
// such as a division by zero; engines recover it at their boundary and
// return it as the query's error. It points at the expression.
type RuntimeError struct{ Err *ast.Error }

func (e *RuntimeError) Error() string { return e.Err.Error() }
func (e *RuntimeError) Unwrap() error { return e.Err }

// Builtin names the attributes every event has.
type Builtin int

const (
	NotBuiltin Builtin = iota
	BuiltinTS
	BuiltinSeq
)

func readAttr(e *event.Event, slot int, b Builtin) event.Value {
	switch b {
	case BuiltinTS:
		return event.IntValue(e.TS)
	case BuiltinSeq:
		return event.IntValue(e.Seq)
	}
	return e.Attr(slot)
}

func builtinOf(name string) Builtin {
	switch name {
	case "ts", "timestamp":
		return BuiltinTS
	case "seq":
		return BuiltinSeq
	}
	return NotBuiltin
}

var numberKinds = event.KindSet(0).With(event.Int).With(event.Float)

// compiler compiles expressions of one query. elem is the closure whose
// per-element predicate is being compiled, or -1.
type compiler struct {
	plan *Plan
	errs *ast.ErrorList
	vars map[string]int
	elem int
}

func (c *compiler) errorf(n ast.Node, format string, args ...any) {
	c.errs.Add(c.plan.Src, n.NodeSpan().Start, format, args...)
}

func (c *compiler) text(n ast.Node) string {
	s := n.NodeSpan()
	if s.End > s.Start && s.End <= len(c.plan.Src.Text) {
		return strings.Join(strings.Fields(c.plan.Src.Text[s.Start:s.End]), " ")
	}
	return n.String()
}

// component resolves a variable, reporting an unknown one.
func (c *compiler) component(id *ast.Ident) (*Component, bool) {
	i, ok := c.vars[id.Name]
	if !ok {
		c.errorf(id, "unknown variable %q (the pattern has %s)", id.Name, c.varList())
		return nil, false
	}
	return c.plan.Components[i], true
}

func (c *compiler) varList() string {
	names := make([]string, len(c.plan.Components))
	for i, comp := range c.plan.Components {
		names[i] = comp.Var
	}
	return strings.Join(names, ", ")
}

// attr resolves an attribute of a component to a slot, with the kinds its
// types have seen. A name that no type of the component has is an error.
func (c *compiler) attr(comp *Component, id *ast.Ident) (slot int, b Builtin, kinds event.KindSet, ok bool) {
	if b := builtinOf(id.Name); b != NotBuiltin {
		return 0, b, event.KindSet(0).With(event.Int), true
	}
	schema := c.plan.Stream.Schema
	slot, found := schema.AttrSlot(id.Name)
	if found {
		if len(comp.Types) == 0 {
			return slot, NotBuiltin, 0, true // no event of its types: nothing to check against
		}
		for _, t := range comp.Types {
			if schema.Types[t].Has(slot) {
				kinds |= schema.Types[t].Kinds[slot]
				ok = true
			}
		}
		if ok {
			return slot, NotBuiltin, kinds, true
		}
	}
	var have []string
	for _, t := range comp.Types {
		have = append(have, fmt.Sprintf("%s has %s", schema.Types[t].Name, strings.Join(append(schema.AttrsOf(t), "ts", "seq"), ", ")))
	}
	if len(comp.Types) == 0 {
		have = append(have, fmt.Sprintf("the stream has %s", strings.Join(append(append([]string{}, schema.Attrs...), "ts", "seq"), ", ")))
	}
	c.errorf(id, "no type of %s has attribute %q (%s)", comp.Var, id.Name, strings.Join(have, "; "))
	return 0, NotBuiltin, 0, false
}

// cond compiles a condition.
func (c *compiler) cond(e ast.Expr) Cond {
	switch e := e.(type) {
	case *ast.BinaryExpr:
		switch {
		case e.Op == ast.OpAnd:
			x, y := c.cond(e.X), c.cond(e.Y)
			return func(b *Binding) bool { return x(b) && y(b) }
		case e.Op == ast.OpOr:
			x, y := c.cond(e.X), c.cond(e.Y)
			return func(b *Binding) bool { return x(b) || y(b) }
		case e.Op.IsComparison():
			return c.comparison(e)
		}
	case *ast.UnaryExpr:
		if e.Op == ast.OpNot {
			x := c.cond(e.X)
			return func(b *Binding) bool { return !x(b) }
		}
	case *ast.Literal:
		if e.Kind == ast.LitBool {
			v := e.Bool
			return func(*Binding) bool { return v }
		}
	case *ast.Equivalence:
		return c.nestedEquivalence(e)
	case *ast.Strategy:
		c.errorf(e, "an event selection strategy must be a top-level conjunct of WHERE")
		return func(*Binding) bool { return true }
	}
	c.errorf(e, "expected a condition (comparison or equivalence test)")
	return func(*Binding) bool { return true }
}

func (c *compiler) comparison(e *ast.BinaryExpr) Cond {
	x, kx := c.expr(e.X)
	y, ky := c.expr(e.Y)
	if kx != 0 && ky != 0 {
		sx, sy := kx == event.KindSet(0).With(event.String), ky == event.KindSet(0).With(event.String)
		nx, ny := kx&^numberKinds == 0, ky&^numberKinds == 0
		if (sx && ny) || (nx && sy) {
			c.errorf(e, "cannot compare a string with a number: %s", c.text(e))
		}
	}
	if fast := c.fastComparison(e); fast != nil {
		return fast
	}
	op := e.Op
	return func(b *Binding) bool { return compare(op, x(b), y(b)) }
}

// fastComparison compiles the commonest forms, v.attr op w.attr and
// v.attr op constant on single events, to one closure that reads the
// slots in place and compares two ints without building values; other
// kinds take compare's general path.
func (c *compiler) fastComparison(e *ast.BinaryExpr) Cond {
	x, ok := c.plainAttr(e.X)
	if !ok {
		return nil
	}
	op := e.Op
	if lit, isLit := e.Y.(*ast.Literal); isLit {
		k := literalValue(lit)
		if k.Kind() != event.Int {
			return nil
		}
		ki := k.Int()
		return func(b *Binding) bool {
			ev := b.Events[x.comp]
			if ev == nil {
				return true
			}
			if v := x.read(ev); v.Kind() == event.Int {
				return compareInts(op, v.Int(), ki)
			}
			return compare(op, readAttr(ev, x.slot, x.builtin), k)
		}
	}
	y, ok := c.plainAttr(e.Y)
	if !ok {
		return nil
	}
	return func(b *Binding) bool {
		ex, ey := b.Events[x.comp], b.Events[y.comp]
		if ex == nil || ey == nil {
			return true
		}
		if vx, vy := x.read(ex), y.read(ey); vx.Kind() == event.Int && vy.Kind() == event.Int {
			return compareInts(op, vx.Int(), vy.Int())
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

// plainAttr resolves v.attr on a single-event component (already checked
// by expr), or reports false.
func (c *compiler) plainAttr(e ast.Expr) (plainAttr, bool) {
	ref, ok := e.(*ast.AttrRef)
	if !ok || ref.Index != nil {
		return plainAttr{}, false
	}
	i, ok := c.vars[ref.Var.Name]
	if !ok || c.plan.Components[i].Kind == Closure {
		return plainAttr{}, false
	}
	if bi := builtinOf(ref.Attr.Name); bi != NotBuiltin {
		return plainAttr{comp: i, builtin: bi}, true
	}
	slot, ok := c.plan.Stream.Schema.AttrSlot(ref.Attr.Name)
	return plainAttr{comp: i, slot: slot}, ok
}

func compareInts(op ast.Op, a, b int64) bool {
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
func (c *compiler) nestedEquivalence(e *ast.Equivalence) Cond {
	equivs := c.equivs(e)
	comps := c.plan.Components
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

// equivs resolves the attributes of an equivalence test. An attribute must
// exist on some type of some component.
func (c *compiler) equivs(e *ast.Equivalence) []*Equiv {
	var out []*Equiv
	schema := c.plan.Stream.Schema
	for _, a := range e.Attrs {
		q := &Equiv{Attr: a.Attr.Name, Builtin: builtinOf(a.Attr.Name), Text: "[" + a.String() + "]"}
		if q.Builtin == NotBuiltin {
			slot, ok := schema.AttrSlot(a.Attr.Name)
			if !ok {
				c.errorf(a.Attr, "no type of any component has attribute %q (the stream has %s)", a.Attr.Name, strings.Join(schema.Attrs, ", "))
				continue
			}
			q.Slot = slot
		}
		if a.Value != nil {
			v := literalValue(a.Value)
			q.Const = &v
		}
		out = append(out, q)
	}
	return out
}

func literalValue(l *ast.Literal) event.Value {
	switch l.Kind {
	case ast.LitInt:
		return event.IntValue(l.Int)
	case ast.LitFloat:
		return event.FloatValue(l.Float)
	case ast.LitString:
		return event.StringValue(l.Str)
	case ast.LitBool:
		return event.BoolValue(l.Bool)
	}
	return event.Value{}
}

// expr compiles a value expression and returns the kinds it may produce
// (0 when unknown).
func (c *compiler) expr(e ast.Expr) (Eval, event.KindSet) {
	switch e := e.(type) {
	case *ast.Literal:
		v := literalValue(e)
		return func(*Binding) event.Value { return v }, event.KindSet(0).With(v.Kind())
	case *ast.AttrRef:
		return c.attrRef(e)
	case *ast.LenRef:
		comp, ok := c.closure(e.Var)
		if !ok {
			return absent, 0
		}
		i := comp.Index
		return func(b *Binding) event.Value { return event.IntValue(int64(len(b.Lists[i]))) }, event.KindSet(0).With(event.Int)
	case *ast.UnaryExpr:
		if e.Op == ast.OpNeg {
			x, k := c.expr(e.X)
			c.needNumber(e.X, k)
			return func(b *Binding) event.Value { return negate(x(b)) }, k & numberKinds
		}
	case *ast.BinaryExpr:
		if e.Op.IsArith() {
			return c.arith(e)
		}
	case *ast.Call:
		return c.call(e)
	case *ast.VarRef:
		c.errorf(e, "variable %s stands for a whole event here; use an attribute such as %s.ts", e.Var.Name, e.Var.Name)
		return absent, 0
	case *ast.ListRef:
		c.errorf(e, "%s can only be the argument of an aggregate (count, sum, avg, min, max)", c.text(e))
		return absent, 0
	}
	c.errorf(e, "expected a value, found %s", c.text(e))
	return absent, 0
}

func absent(*Binding) event.Value { return event.Value{} }

func (c *compiler) needNumber(e ast.Expr, k event.KindSet) {
	if k != 0 && k&numberKinds == 0 {
		c.errorf(e, "expected a number: %s is a %s", c.text(e), k)
	}
}

// closure resolves a variable that must be a closure.
func (c *compiler) closure(id *ast.Ident) (*Component, bool) {
	comp, ok := c.component(id)
	if !ok {
		return nil, false
	}
	if comp.Kind != Closure {
		c.errorf(id, "%s is not a closure variable", id.Name)
		return nil, false
	}
	return comp, true
}

func (c *compiler) attrRef(e *ast.AttrRef) (Eval, event.KindSet) {
	comp, ok := c.component(e.Var)
	if !ok {
		return absent, 0
	}
	if e.Index == nil && comp.Kind == Closure {
		c.errorf(e.Var, "%s is a closure: read its elements as %s[i].%s, %s[1].%s or %s[%s.LEN].%s",
			comp.Var, comp.Var, e.Attr.Name, comp.Var, e.Attr.Name, comp.Var, comp.Var, e.Attr.Name)
		return absent, 0
	}
	if e.Index != nil && comp.Kind != Closure {
		c.errorf(e.Var, "%s is not a closure variable", comp.Var)
		return absent, 0
	}
	slot, bi, kinds, ok := c.attr(comp, e.Attr)
	if !ok {
		return absent, 0
	}
	i := comp.Index
	if e.Index == nil {
		return func(b *Binding) event.Value {
			if ev := b.Events[i]; ev != nil {
				return readAttr(ev, slot, bi)
			}
			return event.Value{}
		}, kinds
	}
	idx := e.Index
	switch idx.Kind {
	case ast.IndexI:
		if c.elem != i {
			c.errorf(e, "%s[i] is only meaningful in a per-element predicate of %s", comp.Var, comp.Var)
			return absent, 0
		}
		if idx.Offset == 0 {
			return func(b *Binding) event.Value { return readAttr(b.Elem, slot, bi) }, kinds
		}
		// Element i+off is list[len(list)+off]: the list holds elements 1..i-1.
		off := idx.Offset
		return func(b *Binding) event.Value {
			l := b.Lists[i]
			if j := len(l) + off; j >= 0 && j < len(l) {
				return readAttr(l[j], slot, bi)
			}
			return event.Value{}
		}, kinds
	case ast.IndexConst:
		n := idx.Offset
		return func(b *Binding) event.Value {
			if l := b.Lists[i]; n >= 1 && n <= len(l) {
				return readAttr(l[n-1], slot, bi)
			}
			return event.Value{}
		}, kinds
	default: // IndexLen
		off := idx.Offset
		return func(b *Binding) event.Value {
			l := b.Lists[i]
			if j := len(l) - 1 + off; j >= 0 && j < len(l) {
				return readAttr(l[j], slot, bi)
			}
			return event.Value{}
		}, kinds
	}
}

func negate(v event.Value) event.Value {
	switch v.Kind() {
	case event.Int:
		return event.IntValue(-v.Int())
	case event.Float:
		return event.FloatValue(-v.Float())
	}
	return event.Value{}
}

func (c *compiler) arith(e *ast.BinaryExpr) (Eval, event.KindSet) {
	x, kx := c.expr(e.X)
	y, ky := c.expr(e.Y)
	c.needNumber(e.X, kx)
	c.needNumber(e.Y, ky)
	kinds := event.KindSet(0).With(event.Float)
	if e.Op != ast.OpDiv && kx&^event.KindSet(0).With(event.Int) == 0 && ky&^event.KindSet(0).With(event.Int) == 0 {
		kinds = event.KindSet(0).With(event.Int)
	}
	op := e.Op
	// Made once, so that the hot path allocates nothing.
	divZero := &RuntimeError{Err: &ast.Error{Src: c.plan.Src, Offset: e.OpPos, Msg: "division by zero at run time in " + c.text(e)}}
	return func(b *Binding) event.Value { return arith(op, x(b), y(b), divZero) }, kinds
}

// arith applies an arithmetic operator: ints stay ints except for /, which
// always yields a float; % is the truncated remainder; absent or
// non-numeric operands give absent.
func arith(op ast.Op, x, y event.Value, divZero *RuntimeError) event.Value {
	if !x.IsNumber() || !y.IsNumber() {
		return event.Value{}
	}
	if x.Kind() == event.Int && y.Kind() == event.Int && op != ast.OpDiv {
		a, b := x.Int(), y.Int()
		switch op {
		case ast.OpAdd:
			return event.IntValue(a + b)
		case ast.OpSub:
			return event.IntValue(a - b)
		case ast.OpMul:
			return event.IntValue(a * b)
		case ast.OpMod:
			if b == 0 {
				panic(divZero)
			}
			return event.IntValue(a % b)
		}
	}
	a, b := x.AsFloat(), y.AsFloat()
	switch op {
	case ast.OpAdd:
		return event.FloatValue(a + b)
	case ast.OpSub:
		return event.FloatValue(a - b)
	case ast.OpMul:
		return event.FloatValue(a * b)
	case ast.OpDiv:
		if b == 0 {
			panic(divZero)
		}
		return event.FloatValue(a / b)
	case ast.OpMod:
		if b == 0 {
			panic(divZero)
		}
		return event.FloatValue(math.Mod(a, b))
	}
	return event.Value{}
}

func (c *compiler) call(e *ast.Call) (Eval, event.KindSet) {
	switch e.Func {
	case "abs":
		if len(e.Args) != 1 {
			c.errorf(e, "abs takes one argument")
			return absent, 0
		}
		x, k := c.expr(e.Args[0])
		c.needNumber(e.Args[0], k)
		return func(b *Binding) event.Value {
			v := x(b)
			switch v.Kind() {
			case event.Int:
				if v.Int() < 0 {
					return event.IntValue(-v.Int())
				}
				return v
			case event.Float:
				return event.FloatValue(math.Abs(v.Float()))
			}
			return event.Value{}
		}, k & numberKinds
	case "count", "sum", "avg", "min", "max":
		return c.aggregate(e)
	}
	c.errorf(e, "unknown function %s (functions: abs, count, sum, avg, min, max)", e.Func)
	return absent, 0
}

// aggregate compiles count/sum/avg/min/max over a closure list. Elements
// without the attribute are skipped; with no values sum/avg/min/max are
// absent and count is 0.
func (c *compiler) aggregate(e *ast.Call) (Eval, event.KindSet) {
	var arg *ast.ListRef
	if len(e.Args) == 1 {
		arg, _ = e.Args[0].(*ast.ListRef)
	}
	if arg == nil {
		c.errorf(e, "%s takes a closure list: %s(b[]) or %s(b[].attr)", e.Func, e.Func, e.Func)
		return absent, 0
	}
	comp, ok := c.closure(arg.Var)
	if !ok {
		return absent, 0
	}
	if arg.Running && c.elem != comp.Index {
		c.errorf(arg, "%s is only meaningful in a per-element predicate of %s", c.text(arg), comp.Var)
		return absent, 0
	}
	if !arg.Running && c.elem == comp.Index {
		c.errorf(e, "per-element predicate of %s uses a whole-list aggregate of %s", comp.Var, comp.Var)
		return absent, 0
	}
	i := comp.Index
	if arg.Attr == nil {
		if e.Func != "count" {
			c.errorf(e, "%s needs an attribute: %s(%s[].attr)", e.Func, e.Func, comp.Var)
			return absent, 0
		}
		return func(b *Binding) event.Value { return event.IntValue(int64(len(b.Lists[i]))) }, event.KindSet(0).With(event.Int)
	}
	slot, bi, kinds, ok := c.attr(comp, arg.Attr)
	if !ok {
		return absent, 0
	}
	fn := e.Func
	if fn != "count" && fn != "min" && fn != "max" {
		c.needNumber(arg, kinds)
	}
	resultKinds := kinds
	switch fn {
	case "count":
		resultKinds = event.KindSet(0).With(event.Int)
	case "avg":
		resultKinds = event.KindSet(0).With(event.Float)
	case "sum":
		resultKinds = kinds & numberKinds
	}
	return func(b *Binding) event.Value { return aggregate(fn, b.Lists[i], slot, bi) }, resultKinds
}

func aggregate(fn string, list []*event.Event, slot int, bi Builtin) event.Value {
	var (
		n      int64
		isum   int64
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
			if v.Kind() == event.Int {
				isum += v.Int()
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
		if allInt {
			return event.IntValue(isum)
		}
		return event.FloatValue(fsum)
	case "avg":
		if n == 0 {
			return event.Value{}
		}
		return event.FloatValue(fsum / float64(n))
	}
	return best
}
