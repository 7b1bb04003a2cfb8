package planner

import (
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
)

// The resolved form of expressions. The checking pass (check.go) reads each
// WHERE conjunct and RETURN item once and binds every name in it: a
// variable to its component index, an attribute to its schema slot or a
// builtin; it records the kinds each value may have and reports every
// error there, with its position. Optimizer rules match on this tree,
// never on the syntax tree or on names; lower.go compiles it to closures
// last, once the query has checked clean.

// Expr is a checked expression.
type Expr interface {
	// Pos is the expression's offset in the query's source.
	Pos() int
	// Kinds are the kinds its value may have: 0 when unknown (an attribute
	// no event of its types has shown yet), Bool for a condition.
	Kinds() event.KindSet
}

type node struct {
	pos   int
	kinds event.KindSet
}

func (n *node) Pos() int             { return n.pos }
func (n *node) Kinds() event.KindSet { return n.kinds }

// Const is a literal.
type Const struct {
	node
	Value event.Value
}

// Field is a resolved attribute: its slot in the schema, or a builtin.
type Field struct {
	Name    string // as written
	Slot    int    // when Builtin is NotBuiltin
	Builtin Builtin
}

// Attr reads an attribute of an event of component Comp: its event for a
// single or negated component (Index 0), a closure's element otherwise.
type Attr struct {
	node
	Field
	Comp int
	// Index and Offset say which element of a closure: c[i+Offset]
	// (ast.IndexI, in a per-element predicate of c), c[Offset] counted
	// from 1 (ast.IndexConst), c[c.LEN+Offset] (ast.IndexLen).
	Index  ast.IndexKind
	Offset int
}

// Len is the length of closure Comp's list (c.LEN).
type Len struct {
	node
	Comp int
}

// Unary is -X (ast.OpNeg) or NOT X (ast.OpNot); Text is -X as written,
// for the error of an int that has no negation.
type Unary struct {
	node
	Op   ast.Op
	X    Expr
	Text string
}

// Binary is an arithmetic operator, a comparison, AND or OR.
type Binary struct {
	node
	Op   ast.Op
	X, Y Expr
	// OpPos is the operator's offset and Text the expression as written:
	// a division by zero or an int overflow at run time points there.
	OpPos int
	Text  string
}

// AddedConst matches e as x plus or minus a constant (c + x too): it
// returns x, the constant and whether it is subtracted. The typed fast
// paths that compare an attribute with an offset (AIS's keys, a
// rulebook's bounds) read a check so.
func AddedConst(e Expr) (x Expr, c event.Value, sub, ok bool) {
	b, isBin := e.(*Binary)
	if !isBin || b.Op != ast.OpAdd && b.Op != ast.OpSub {
		return e, event.Value{}, false, false
	}
	x, y := b.X, b.Y
	if _, isConst := x.(*Const); isConst && b.Op == ast.OpAdd {
		x, y = y, x
	}
	k, isConst := y.(*Const)
	if !isConst {
		return e, event.Value{}, false, false
	}
	return x, k.Value, b.Op == ast.OpSub, true
}

// Abs is abs(X); Text is as written, for the error of an int that has
// no absolute value.
type Abs struct {
	node
	X    Expr
	Text string
}

// Has is has(X): whether the event has attribute X.
type Has struct {
	node
	X Expr
}

// Aggregate is Func (count, sum, avg, min or max) over closure Comp's list
// (the elements before i when Running, in a per-element predicate): of the
// attribute Field, or of the elements themselves (count(c[])) when HasAttr
// is false. Text is the call as written, for the error of a sum beyond
// int64.
type Aggregate struct {
	node
	Func    string
	Comp    int
	Running bool
	HasAttr bool
	Field
	Text string
}

// EquivTest is an equivalence test under OR or NOT; top-level ones are the
// plan's Equivs.
type EquivTest struct {
	node
	Equivs []*Equiv
}

// Inspect calls f for e and, while f returns true, for its operands, depth
// first.
func Inspect(e Expr, f func(Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	switch e := e.(type) {
	case *Unary:
		Inspect(e.X, f)
	case *Binary:
		Inspect(e.X, f)
		Inspect(e.Y, f)
	case *Abs:
		Inspect(e.X, f)
	case *Has:
		Inspect(e.X, f)
	}
}
