package planner

import (
	"slices"

	"github.com/sase-cep/sase/ast"
)

// QueryNames are the names a query needs from a stream's schema, read from
// its syntax tree before it is bound to one: a live stream that has not
// seen them yet declares them, so that the query compiles before its
// events arrive.
type QueryNames struct {
	// Types are the event types the pattern names, in order, once each.
	Types []string
	// Attrs are the attributes the query reads, in the order it reads
	// them (builtins such as ts are not listed), each with the types it is
	// read on: those of its component, or every type of the pattern for an
	// equivalence test. An attribute read on two components is listed
	// twice, once with each one's types.
	Attrs []AttrUse
}

// AttrUse is an attribute read on events of some types.
type AttrUse struct {
	Attr  string
	Types []string
}

// Names lists the type and attribute names q needs (WHERE and RETURN).
func Names(q *ast.Query) QueryNames {
	var n QueryNames
	types := map[string][]string{} // variable -> its type names
	for _, c := range q.Pattern.Components {
		for _, t := range c.Types {
			if !slices.Contains(n.Types, t.Name) {
				n.Types = append(n.Types, t.Name)
			}
			if v := c.VarName(); !slices.Contains(types[v], t.Name) {
				types[v] = append(types[v], t.Name)
			}
		}
	}
	use := func(attr *ast.Ident, on []string) {
		if builtinOf(attr.Name) != NotBuiltin {
			return
		}
		u := AttrUse{Attr: attr.Name, Types: on}
		if !slices.ContainsFunc(n.Attrs, func(x AttrUse) bool { return x.Attr == u.Attr && slices.Equal(x.Types, u.Types) }) {
			n.Attrs = append(n.Attrs, u)
		}
	}
	visit := func(e ast.Expr) bool {
		switch x := e.(type) {
		case *ast.AttrRef:
			use(x.Attr, types[x.Var.Name])
		case *ast.ListRef:
			if x.Attr != nil {
				use(x.Attr, types[x.Var.Name])
			}
		case *ast.Equivalence:
			for _, a := range x.Attrs {
				use(a.Attr, n.Types)
			}
		}
		return true
	}
	ast.Inspect(q.Where, visit)
	if q.Return != nil {
		for _, it := range q.Return.Items {
			ast.Inspect(it.Expr, visit)
		}
	}
	return n
}
