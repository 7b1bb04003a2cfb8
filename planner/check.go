package planner

import (
	"fmt"
	"strings"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
)

// The checking pass over expressions: each function resolves one form of
// the syntax tree to its resolved node (resolved.go), with the kinds its
// value may have, and reports what is wrong with it. An expression with
// an error resolves to nil; the query then fails, so nil is never lowered.

var (
	numberKinds = event.KindSet(0).With(event.Int).With(event.Float)
	boolKinds   = event.KindSet(0).With(event.Bool)
	intKinds    = event.KindSet(0).With(event.Int)
)

// compiler checks one query. elem is the closure whose per-element
// predicate is being checked, or -1; preds are the predicates made, which
// are lowered to closures once the query has checked clean.
type compiler struct {
	plan  *Plan
	errs  *ast.ErrorList
	vars  map[string]int
	elem  int
	sel   []*Pred // Selection's conjuncts
	preds []*Pred
}

func (c *compiler) errorf(n ast.Node, format string, args ...any) {
	c.errorAt(n.NodeSpan().Start, format, args...)
}

func (c *compiler) errorAt(offset int, format string, args ...any) {
	c.errs.Add(c.plan.Src, offset, format, args...)
}

func (c *compiler) text(n ast.Node) string {
	s := n.NodeSpan()
	if s.End > s.Start && s.End <= len(c.plan.Src.Text) {
		return strings.Join(strings.Fields(c.plan.Src.Text[s.Start:s.End]), " ")
	}
	return n.String()
}

func at(n ast.Node, kinds event.KindSet) node { return node{pos: n.NodeSpan().Start, kinds: kinds} }

// component resolves a variable, reporting an unknown one.
func (c *compiler) component(id *ast.Ident) (*Component, bool) {
	i, ok := c.vars[id.Name]
	if !ok {
		c.errorf(id, "unknown variable %q (the pattern has %s)%s", id.Name, c.varList(), ast.DidYouMean(id.Name, c.varNames()))
		return nil, false
	}
	return c.plan.Components[i], true
}

func (c *compiler) varList() string { return strings.Join(c.varNames(), ", ") }

func (c *compiler) varNames() []string {
	names := make([]string, len(c.plan.Components))
	for i, comp := range c.plan.Components {
		names[i] = comp.Var
	}
	return names
}

// attr resolves an attribute of a component to a slot, with the kinds its
// types have seen. A name that no type of the component has is an error.
func (c *compiler) attr(comp *Component, id *ast.Ident) (f Field, kinds event.KindSet, ok bool) {
	f.Name = id.Name
	if f.Builtin = builtinOf(id.Name); f.Builtin != NotBuiltin {
		return f, intKinds, true
	}
	schema := c.plan.Stream.Schema
	slot, found := schema.AttrSlot(id.Name)
	f.Slot = slot
	if found {
		if len(comp.Types) == 0 {
			return f, 0, true // no event of its types: nothing to check against
		}
		for _, t := range comp.Types {
			if schema.Types[t].Has(slot) {
				kinds |= schema.Types[t].Kinds[slot]
				ok = true
			}
		}
		if ok {
			return f, kinds, true
		}
	}
	var have, names []string
	for _, t := range comp.Types {
		attrs := append(schema.AttrsOf(t), "ts", "seq")
		have = append(have, fmt.Sprintf("%s has %s", schema.Types[t].Name, strings.Join(attrs, ", ")))
		names = append(names, attrs...)
	}
	if len(comp.Types) == 0 {
		names = append(append([]string{}, schema.Attrs...), "ts", "seq")
		have = append(have, fmt.Sprintf("the stream has %s", strings.Join(names, ", ")))
	}
	c.errorf(id, "no type of %s has attribute %q (%s)%s", comp.Var, id.Name, strings.Join(have, "; "), ast.DidYouMeanAttr(id.Name, names))
	return f, 0, false
}

// has checks has(v.attr): the guard against the absent-attribute rule,
// under which a comparison with an attribute the event lacks holds.
func (c *compiler) has(e *ast.Call) Expr {
	if len(e.Args) != 1 {
		c.errorf(e, "has takes one attribute: has(b.x)")
		return nil
	}
	ref, ok := e.Args[0].(*ast.AttrRef)
	if !ok {
		c.errorf(e.Args[0], "has takes an attribute such as b.x or b[i].x, not %s", c.text(e.Args[0]))
		return nil
	}
	x, _ := c.attrRef(ref)
	c.noteGuard(ref)
	return &Has{node: at(e, boolKinds), X: x}
}

// cond checks a condition.
func (c *compiler) cond(e ast.Expr) Expr {
	switch e := e.(type) {
	case *ast.BinaryExpr:
		switch {
		case e.Op == ast.OpAnd, e.Op == ast.OpOr:
			x, y := c.cond(e.X), c.cond(e.Y)
			return &Binary{node: at(e, boolKinds), Op: e.Op, X: x, Y: y, OpPos: e.OpPos}
		case e.Op.IsComparison():
			return c.comparison(e)
		}
	case *ast.UnaryExpr:
		if e.Op == ast.OpNot {
			return &Unary{node: at(e, boolKinds), Op: e.Op, X: c.cond(e.X)}
		}
	case *ast.Literal:
		if e.Kind == ast.LitBool {
			return &Const{node: at(e, boolKinds), Value: event.BoolValue(e.Bool)}
		}
	case *ast.Equivalence:
		return &EquivTest{node: at(e, boolKinds), Equivs: c.equivs(e)}
	case *ast.Call:
		if e.Func == "has" {
			return c.has(e)
		}
	case *ast.Strategy:
		c.errorf(e, "an event selection strategy must be a top-level conjunct of WHERE")
		return nil
	}
	c.errorf(e, "expected a condition (comparison or equivalence test)")
	return nil
}

func (c *compiler) comparison(e *ast.BinaryExpr) Expr {
	x, kx := c.expr(e.X)
	y, ky := c.expr(e.Y)
	if kx != 0 && ky != 0 {
		sx, sy := kx == event.KindSet(0).With(event.String), ky == event.KindSet(0).With(event.String)
		nx, ny := kx&^numberKinds == 0, ky&^numberKinds == 0
		if (sx && ny) || (nx && sy) {
			c.errorf(e, "cannot compare a string with a number: %s", c.text(e))
		}
	}
	c.noteReads(e, kx, ky)
	return &Binary{node: at(e, boolKinds), Op: e.Op, X: x, Y: y, OpPos: e.OpPos}
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

// expr checks a value expression and returns the kinds it may produce (0
// when unknown or wrong).
func (c *compiler) expr(e ast.Expr) (Expr, event.KindSet) {
	switch e := e.(type) {
	case *ast.Literal:
		v := literalValue(e)
		k := event.KindSet(0).With(v.Kind())
		return &Const{node: at(e, k), Value: v}, k
	case *ast.AttrRef:
		return c.attrRef(e)
	case *ast.LenRef:
		comp, ok := c.closure(e.Var)
		if !ok {
			return nil, 0
		}
		return &Len{node: at(e, intKinds), Comp: comp.Index}, intKinds
	case *ast.UnaryExpr:
		if e.Op == ast.OpNeg {
			x, k := c.expr(e.X)
			c.needNumber(e.X, k)
			return &Unary{node: at(e, k&numberKinds), Op: e.Op, X: x, Text: c.text(e)}, k & numberKinds
		}
	case *ast.BinaryExpr:
		if e.Op.IsArith() {
			return c.arith(e)
		}
	case *ast.Call:
		return c.call(e)
	case *ast.VarRef:
		c.errorf(e, "variable %s stands for a whole event here; use an attribute such as %s.ts", e.Var.Name, e.Var.Name)
		return nil, 0
	case *ast.ListRef:
		c.errorf(e, "%s can only be the argument of an aggregate (count, sum, avg, min, max)", c.text(e))
		return nil, 0
	}
	c.errorf(e, "expected a value, found %s", c.text(e))
	return nil, 0
}

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

func (c *compiler) attrRef(e *ast.AttrRef) (Expr, event.KindSet) {
	comp, ok := c.component(e.Var)
	if !ok {
		return nil, 0
	}
	if e.Index == nil && comp.Kind == Closure {
		c.errorf(e.Var, "%s is a closure: read its elements as %s[i].%s, %s[1].%s or %s[%s.LEN].%s",
			comp.Var, comp.Var, e.Attr.Name, comp.Var, e.Attr.Name, comp.Var, comp.Var, e.Attr.Name)
		return nil, 0
	}
	if e.Index != nil && comp.Kind != Closure {
		c.errorf(e.Var, "%s is not a closure variable", comp.Var)
		return nil, 0
	}
	f, kinds, ok := c.attr(comp, e.Attr)
	if !ok {
		return nil, 0
	}
	a := &Attr{node: at(e, kinds), Field: f, Comp: comp.Index}
	if e.Index != nil {
		a.Index, a.Offset = e.Index.Kind, e.Index.Offset
		if e.Index.Kind == ast.IndexI && c.elem != comp.Index {
			c.errorf(e, "%s[i] is only meaningful in a per-element predicate of %s", comp.Var, comp.Var)
			return nil, 0
		}
	}
	return a, kinds
}

func (c *compiler) arith(e *ast.BinaryExpr) (Expr, event.KindSet) {
	x, kx := c.expr(e.X)
	y, ky := c.expr(e.Y)
	c.needNumber(e.X, kx)
	c.needNumber(e.Y, ky)
	kinds := event.KindSet(0).With(event.Float)
	if e.Op != ast.OpDiv && kx&^intKinds == 0 && ky&^intKinds == 0 {
		kinds = intKinds
	}
	return &Binary{node: at(e, kinds), Op: e.Op, X: x, Y: y, OpPos: e.OpPos, Text: c.text(e)}, kinds
}

func (c *compiler) call(e *ast.Call) (Expr, event.KindSet) {
	switch e.Func {
	case "abs":
		if len(e.Args) != 1 {
			c.errorf(e, "abs takes one argument")
			return nil, 0
		}
		x, k := c.expr(e.Args[0])
		c.needNumber(e.Args[0], k)
		return &Abs{node: at(e, k&numberKinds), X: x, Text: c.text(e)}, k & numberKinds
	case "count", "sum", "avg", "min", "max":
		return c.aggregate(e)
	case "has":
		c.errorf(e, "has(...) is a condition, not a value: WHERE has(b.x) AND b.x > 1")
		return nil, 0
	}
	funcs := []string{"abs", "count", "sum", "avg", "min", "max", "has"}
	c.errorf(e, "unknown function %s (functions: %s)%s", e.Func, strings.Join(funcs, ", "), ast.DidYouMean(e.Func, funcs))
	return nil, 0
}

// aggregate checks count/sum/avg/min/max over a closure list.
func (c *compiler) aggregate(e *ast.Call) (Expr, event.KindSet) {
	var arg *ast.ListRef
	if len(e.Args) == 1 {
		arg, _ = e.Args[0].(*ast.ListRef)
	}
	if arg == nil {
		c.errorf(e, "%s takes a closure list: %s(b[]) or %s(b[].attr)", e.Func, e.Func, e.Func)
		return nil, 0
	}
	comp, ok := c.closure(arg.Var)
	if !ok {
		return nil, 0
	}
	if arg.Running && c.elem != comp.Index {
		c.errorf(arg, "%s is only meaningful in a per-element predicate of %s", c.text(arg), comp.Var)
		return nil, 0
	}
	if !arg.Running && c.elem == comp.Index {
		c.errorf(e, "per-element predicate of %s uses a whole-list aggregate of %s", comp.Var, comp.Var)
		return nil, 0
	}
	agg := &Aggregate{Func: e.Func, Comp: comp.Index, Running: arg.Running, Text: c.text(e)}
	if arg.Attr == nil {
		if e.Func != "count" {
			c.errorf(e, "%s needs an attribute: %s(%s[].attr)", e.Func, e.Func, comp.Var)
			return nil, 0
		}
		agg.node = at(e, intKinds)
		return agg, intKinds
	}
	f, kinds, ok := c.attr(comp, arg.Attr)
	if !ok {
		return nil, 0
	}
	agg.HasAttr, agg.Field = true, f
	if e.Func != "count" && e.Func != "min" && e.Func != "max" {
		c.needNumber(arg, kinds)
	}
	switch e.Func {
	case "count":
		kinds = intKinds
	case "avg":
		kinds = event.KindSet(0).With(event.Float)
	case "sum":
		kinds &= numberKinds
	}
	agg.node = at(e, kinds)
	return agg, kinds
}
