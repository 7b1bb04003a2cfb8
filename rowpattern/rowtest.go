package rowpattern

import (
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// rowTest is a DEFINE that reads only the row it tests, the rows before
// it and the match's start row, compiled to read the partition's columns
// directly: it is row i's truth in a match from row start, with no
// evaluation context nor closures per operand.
type rowTest func(p *partition, start, i int) bool

// rowTest compiles the usual DEFINE, col op PREV(col) or col op constant
// (either side), of the variable being defined (c.defVar), where an
// operand may also be the start row's column (compiler.startRow) and
// either operand may have a number added, subtracted, multiplied or
// divided; nil when x is another form, which the general expression
// evaluates.
func (c *compiler) rowTest(x ast.Expr) rowTest {
	if x == nil {
		return func(*partition, int, int) bool { return true } // no DEFINE: every row
	}
	n, ok := x.(*ast.BinaryExpr)
	if !ok || !n.Op.IsComparison() {
		return nil
	}
	a, aok := c.operand(n.X)
	b, bok := c.operand(n.Y)
	if !aok || !bok {
		return nil
	}
	op := n.Op
	return func(p *partition, start, i int) bool {
		x, y := a.at(p, start, i), b.at(p, start, i)
		switch {
		case x.IsFloat() && y.IsFloat():
			// Go's comparisons with NaN are compare's: unequal, else false.
			return planner.CompareNumbers(op, x.Float(), y.Float())
		case x.IsInt() && y.IsInt():
			return planner.CompareNumbers(op, x.Int(), y.Int())
		}
		v, ok := truth(compare(op, x, y))
		return ok && v
	}
}

// operand is a constant (col < 0) or the column col of the row back
// rows before the tested one or (start) of the match's start row; then,
// when op is arithmetic, op with the number k (on the left: kLeft).
type operand struct {
	col, back int
	start     bool
	v         event.Value
	op        ast.Op
	k         event.Value
	kLeft     bool
}

func (o operand) at(p *partition, start, i int) event.Value {
	v := o.v
	if o.col >= 0 {
		if o.start {
			i = start
		} else {
			i -= o.back
		}
		v = event.Value{}
		if i >= 0 {
			v = p.cols[o.col][i]
		}
	}
	switch {
	case !o.op.IsArith():
		return v
	case o.kLeft:
		return arith(o.op, o.k, v)
	}
	return arith(o.op, v, o.k)
}

// operand recognizes a number, the tested row's column, PREV of it, the
// start row's column, and one of these but a number with a number.
func (c *compiler) operand(x ast.Expr) (operand, bool) {
	switch n := x.(type) {
	case *ast.BinaryExpr:
		if !n.Op.IsArith() {
			return operand{}, false
		}
		a, aok := c.operand(n.X)
		b, bok := c.operand(n.Y)
		switch {
		case !aok || !bok || a.op.IsArith() || b.op.IsArith() || (a.col < 0) == (b.col < 0):
			return operand{}, false
		case a.col < 0:
			b.op, b.k, b.kLeft = n.Op, a.v, true
			return b, true
		}
		a.op, a.k = n.Op, b.v
		return a, true
	case *ast.Literal:
		switch n.Kind {
		case ast.LitInt:
			return operand{col: -1, v: event.IntValue(n.Int)}, true
		case ast.LitFloat:
			return operand{col: -1, v: event.FloatValue(n.Float)}, true
		}
	case *ast.MRColumn:
		return c.ownColumn(n, 0)
	case *ast.MRCall:
		if n.Func != "PREV" || n.Mode != "" || len(n.Args) < 1 || len(n.Args) > 2 {
			return operand{}, false
		}
		back := int64(1)
		if len(n.Args) == 2 {
			lit, ok := n.Args[1].(*ast.Literal)
			if !ok || lit.Kind != ast.LitInt || lit.Int < 0 || lit.Int > 1<<30 {
				return operand{}, false
			}
			back = lit.Int
		}
		if col, ok := n.Args[0].(*ast.MRColumn); ok {
			return c.ownColumn(col, int(back))
		}
	}
	return operand{}, false
}

// ownColumn is col of the row back rows before the tested one, when col
// reads the tested row (its variable is the defined one or universal), or
// (back 0) of the start row, when col reads it (compiler.startRow).
func (c *compiler) ownColumn(col *ast.MRColumn, back int) (operand, bool) {
	var vars varSet
	if col.Var != nil {
		var ok bool
		if vars, ok = c.varSetOf(col.Var); !ok {
			return operand{}, false
		}
	}
	start := back == 0 && c.startRow(vars)
	if !c.ownRow(vars) && !start {
		return operand{}, false
	}
	return operand{col: c.cache(c.slot(col.Col)), back: back, start: start}, true
}
