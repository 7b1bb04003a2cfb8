package rowpattern

import (
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// arg is the argument of a navigation function or an aggregate, compiled
// to read one row: its column references must all name one variable
// (the standard's rule), which the function's rows are taken from.
type arg struct {
	fn    string // the function, for errors
	vars  varSet
	named bool // a variable has been seen (vars nil: the universal one)
}

// expr compiles x; in (not nil) means x is inside a function's argument,
// where it reads the row the function chose.
func (c *compiler) expr(x ast.Expr, in *arg) rowExpr {
	switch n := x.(type) {
	case *ast.Literal:
		var v event.Value
		switch n.Kind {
		case ast.LitInt:
			v = event.IntValue(n.Int)
		case ast.LitFloat:
			v = event.FloatValue(n.Float)
		case ast.LitString:
			v = event.StringValue(n.Str)
		case ast.LitBool:
			v = event.BoolValue(n.Bool)
		}
		return func(*evalCtx, int) event.Value { return v }
	case *ast.UnaryExpr:
		y := c.expr(n.X, in)
		switch n.Op {
		case ast.OpIsNull:
			return func(e *evalCtx, pos int) event.Value { return boolValue(y(e, pos).IsAbsent()) }
		case ast.OpIsNotNull:
			return func(e *evalCtx, pos int) event.Value { return boolValue(!y(e, pos).IsAbsent()) }
		}
		if n.Op == ast.OpNot {
			return func(e *evalCtx, pos int) event.Value {
				if b, ok := truth(y(e, pos)); ok {
					return boolValue(!b)
				}
				return event.Value{}
			}
		}
		zero := event.IntValue(0)
		return func(e *evalCtx, pos int) event.Value { return arith(ast.OpSub, zero, y(e, pos)) }
	case *ast.BinaryExpr:
		return c.binary(n, in)
	case *ast.MRColumn:
		return c.column(n, in)
	case *ast.MRCall:
		return c.call(n, in)
	}
	c.fail(x, "not supported yet: %s in MATCH_RECOGNIZE", x)
	return func(*evalCtx, int) event.Value { return event.Value{} }
}

func (c *compiler) binary(n *ast.BinaryExpr, in *arg) rowExpr {
	x, y := c.expr(n.X, in), c.expr(n.Y, in)
	op := n.Op
	switch {
	case op == ast.OpAnd || op == ast.OpOr:
		return logic(op, x, y)
	case op.IsComparison():
		return func(e *evalCtx, pos int) event.Value { return compare(op, x(e, pos), y(e, pos)) }
	}
	return func(e *evalCtx, pos int) event.Value { return arith(op, x(e, pos), y(e, pos)) }
}

// refVars is the variable set a reference names (nil: the universal one).
func (c *compiler) refVars(v *ast.MRName, in *arg, at ast.Node) varSet {
	var set varSet
	if v != nil {
		set, _ = c.varSetOf(v)
	}
	if in != nil {
		if in.named && !sameVars(in.vars, set) {
			c.fail(at, "the argument of %s reads more than one pattern variable", in.fn)
		}
		in.vars, in.named = set, true
	}
	return set
}

func sameVars(a, b varSet) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// column is [var.]col: in an argument, the chosen row's; else the last
// row of var up to the current row (the universal variable: the current
// row).
func (c *compiler) column(n *ast.MRColumn, in *arg) rowExpr {
	if c.sel != nil {
		col, ok := c.outColumn(n.Var, n.Col)
		if !ok {
			return nullExpr
		}
		j := len(*c.sel)
		*c.sel = append(*c.sel, col)
		return func(e *evalCtx, _ int) event.Value { return e.refs[j] }
	}
	vars := c.refVars(n.Var, in, n)
	start := c.startRow(vars)
	switch {
	case start:
		c.q.fromStart[c.defVar] = true
	case c.define && vars != nil && !vars[c.defVar]:
		c.q.history = true // another variable's last row
	}
	k := c.cache(c.slot(n.Col)) // read from its column
	read := func(e *evalCtx, pos int) event.Value {
		if i := e.start + pos; i >= 0 && i < len(e.rows.rows) {
			return e.rows.cols[k][i]
		}
		return event.Value{}
	}
	if in != nil {
		return read
	}
	if c.ownRow(vars) {
		return func(e *evalCtx, _ int) event.Value { return read(e, e.cur) }
	}
	if start {
		return func(e *evalCtx, _ int) event.Value { return read(e, e.origin-e.start) }
	}
	return func(e *evalCtx, _ int) event.Value {
		pos := e.runningLast(vars)
		if pos < 0 {
			return event.Value{} // no row of var yet
		}
		return read(e, pos)
	}
}

// ownRow reports whether vars' last row up to the current row is the
// current row whatever the match: in a DEFINE, when vars holds the
// variable it defines (the current row's label) or is the universal one.
func (c *compiler) ownRow(vars varSet) bool {
	return c.define && (vars == nil || vars[c.defVar])
}

// startRow reports whether, in a DEFINE of another variable, vars' last
// row up to the current row is the match's start row (evalCtx.origin)
// whatever the match: vars is the variable of a match's first row and no
// other (Query.startVar), whose row a later one follows.
func (c *compiler) startRow(vars varSet) bool {
	if !c.define || vars == nil || vars[c.defVar] || c.q.startVar < 0 || !vars[c.q.startVar] {
		return false
	}
	for v, in := range vars {
		if in && v != c.q.startVar {
			return false
		}
	}
	return true
}

// runningLast is the position of vars' last row up to the current row.
func (e *evalCtx) runningLast(vars varSet) int {
	if vars == nil {
		return e.cur
	}
	return e.last(vars, 0, e.cur)
}

// maxOffset bounds a navigation's offset: far past any partition, and an
// int with room for a row's position added.
const maxOffset = 1 << 30

// offset is a navigation's optional literal offset, default def.
func (c *compiler) offset(n *ast.MRCall, def int) int {
	if len(n.Args) < 2 {
		return def
	}
	lit, ok := n.Args[1].(*ast.Literal)
	if !ok || lit.Kind != ast.LitInt || lit.Int < 0 || lit.Int > maxOffset {
		c.fail(n.Args[1], "the offset of %s must be a non-negative integer, at most %d", n.Func, maxOffset)
		return def
	}
	return int(lit.Int)
}

func (c *compiler) call(n *ast.MRCall, in *arg) rowExpr {
	if c.sel != nil {
		c.fail(n, "%s in the SELECT list: compute it in MEASURES and select the measure", n.Func)
		return nullExpr
	}
	final := n.Mode == "FINAL"
	if final && c.define {
		c.fail(n, "FINAL is not allowed in DEFINE")
	}
	switch n.Func {
	case "PREV", "NEXT", "FIRST", "LAST":
		if len(n.Args) < 1 || len(n.Args) > 2 {
			c.fail(n, "%s takes an expression and an optional offset", n.Func)
			return nullExpr
		}
		if in != nil {
			c.fail(n, "%s inside %s", n.Func, in.fn)
			return nullExpr
		}
		target, read := c.navigation(n)
		return func(e *evalCtx, _ int) event.Value {
			pos, ok := target(e)
			if !ok {
				return event.Value{}
			}
			return read(e, pos)
		}
	case "CLASSIFIER":
		if len(n.Args) > 1 {
			c.fail(n, "CLASSIFIER takes at most one variable")
			return nullExpr
		}
		var vars varSet
		if len(n.Args) == 1 {
			c.q.history = c.q.history || c.define
			col, ok := n.Args[0].(*ast.MRColumn)
			if !ok || col.Var != nil {
				c.fail(n.Args[0], "the argument of CLASSIFIER must be a pattern variable or SUBSET")
				return nullExpr
			}
			vars, _ = c.varSetOf(col.Col)
		}
		if in != nil {
			c.q.history = c.q.history || c.define // another row's label
			c.refVars(nil, in, n)
			return func(e *evalCtx, pos int) event.Value {
				if pos >= 0 && pos < len(e.labels) && vars.has(e.labels[pos]) {
					return e.classifier(pos)
				}
				return event.Value{}
			}
		}
		return func(e *evalCtx, _ int) event.Value { return e.classifier(e.runningLast(vars)) }
	case "MATCH_NUMBER":
		if len(n.Args) > 0 {
			c.fail(n, "MATCH_NUMBER takes no argument")
		}
		if c.define {
			c.fail(n, "MATCH_NUMBER is not allowed in DEFINE")
		}
		return func(e *evalCtx, _ int) event.Value { return event.IntValue(e.matchNo) }
	}
	return c.aggregate(n, in, final)
}

func nullExpr(*evalCtx, int) event.Value { return event.Value{} }

// navigation compiles PREV NEXT FIRST LAST to the match position of the
// row they read (ok false: there is none) and the argument that reads it.
// PREV and NEXT move from their argument's row: the row of a FIRST or LAST
// inside, else the last row of its variable (the current row).
func (c *compiler) navigation(n *ast.MRCall) (func(*evalCtx) (int, bool), rowExpr) {
	final := n.Mode == "FINAL"
	switch n.Func {
	case "PREV", "NEXT":
		if n.Mode != "" {
			c.fail(n, "%s applies to FIRST, LAST and aggregates, not to %s", n.Mode, n.Func)
		}
		k := c.offset(n, 1)
		if n.Func == "PREV" {
			c.q.reach = max(c.q.reach, k)
			k = -k
		} else if c.nextAt == nil {
			c.nextAt = n
		}
		var base func(*evalCtx) (int, bool)
		var read rowExpr
		if inner, ok := n.Args[0].(*ast.MRCall); ok && (inner.Func == "FIRST" || inner.Func == "LAST") {
			if len(inner.Args) < 1 || len(inner.Args) > 2 {
				c.fail(inner, "%s takes an expression and an optional offset", inner.Func)
				return func(*evalCtx) (int, bool) { return 0, false }, nullExpr
			}
			base, read = c.navigation(inner)
		} else {
			a := &arg{fn: n.Func}
			read = c.expr(n.Args[0], a)
			c.navigable(n, a)
			vars := a.vars
			base = func(e *evalCtx) (int, bool) {
				pos := e.runningLast(vars)
				return pos, pos >= 0
			}
			if c.ownRow(vars) {
				base = func(e *evalCtx) (int, bool) { return e.cur, true }
			} else if c.startRow(vars) {
				base = func(e *evalCtx) (int, bool) { return e.origin - e.start, true }
			}
		}
		return func(e *evalCtx) (int, bool) {
			pos, ok := base(e)
			if !ok || !e.inPartition(pos+k) {
				return 0, false
			}
			return pos + k, true
		}, read
	}
	c.q.history = c.q.history || c.define // FIRST, LAST
	k := c.offset(n, 0)
	a := &arg{fn: n.Func}
	read := c.expr(n.Args[0], a)
	c.navigable(n, a)
	vars := a.vars
	if n.Func == "FIRST" {
		return func(e *evalCtx) (int, bool) {
			pos := e.first(vars, k, e.limit(final))
			return pos, pos >= 0
		}, read
	}
	return func(e *evalCtx) (int, bool) {
		pos := e.last(vars, k, e.limit(final))
		return pos, pos >= 0
	}, read
}

// navigable checks that a navigation reads a row: its argument must name
// a column or CLASSIFIER.
func (c *compiler) navigable(n *ast.MRCall, a *arg) {
	if !a.named {
		c.fail(n, "the argument of %s must read a column of a row", n.Func)
	}
}

// aggregate compiles count sum avg min max over a variable's rows (the
// universal variable: all the match's rows), to the current row (RUNNING)
// or the match's end (FINAL). Nulls are skipped; an empty set is null
// (count: 0).
func (c *compiler) aggregate(n *ast.MRCall, in *arg, final bool) rowExpr {
	if in != nil {
		c.fail(n, "%s inside %s", n.Func, in.fn)
		return nullExpr
	}
	c.q.history = c.q.history || c.define
	a := &arg{fn: "an aggregate"}
	var read rowExpr
	switch {
	case n.Star:
		read = func(*evalCtx, int) event.Value { return event.BoolValue(true) }
		if n.StarVar != nil {
			// count(var.*): var's rows
			a.vars, _ = c.varSetOf(n.StarVar)
		}
	case len(n.Args) != 1:
		c.fail(n, "%s takes one argument", n.Func)
		return nullExpr
	default:
		read = c.expr(n.Args[0], a)
	}
	vars := a.vars
	fn := n.Func
	return func(e *evalCtx, _ int) event.Value {
		var acc aggState
		for i, limit := 0, e.limit(final); i <= limit; i++ {
			if vars.has(e.labels[i]) {
				acc.add(read(e, i))
			}
		}
		return acc.result(fn)
	}
}

// aggState accumulates an aggregate's non-null values.
type aggState struct {
	n        int64
	isum     planner.IntSum
	fsum     float64
	float    bool
	min, max event.Value
}

func (a *aggState) add(v event.Value) {
	if v.IsAbsent() {
		return
	}
	a.n++
	if v.IsInt() {
		a.isum.Add(v.Int())
		a.fsum += float64(v.Int())
	} else if v.IsNumber() {
		a.float = true
		a.fsum += v.Float()
	}
	if a.n == 1 {
		a.min, a.max = v, v
		return
	}
	if c, ok := v.Compare(a.min); ok && c < 0 {
		a.min = v
	}
	if c, ok := v.Compare(a.max); ok && c > 0 {
		a.max = v
	}
}

func (a *aggState) result(fn string) event.Value {
	if fn == "COUNT" {
		return event.IntValue(a.n)
	}
	if a.n == 0 {
		return event.Value{}
	}
	switch fn {
	case "SUM":
		if a.float {
			return event.FloatValue(a.fsum)
		}
		if sum, ok := a.isum.Sum(); ok {
			return event.IntValue(sum)
		}
		return event.Value{} // beyond int64: null, as arith's overflow
	case "AVG":
		return event.FloatValue(a.fsum / float64(a.n))
	case "MIN":
		return a.min
	}
	return a.max
}
