package ast

// Inspect calls f for e and, while f returns true, for each sub-expression
// in source order.
func Inspect(e Expr, f func(Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	switch e := e.(type) {
	case *BinaryExpr:
		Inspect(e.X, f)
		Inspect(e.Y, f)
	case *UnaryExpr:
		Inspect(e.X, f)
	case *Call:
		for _, a := range e.Args {
			Inspect(a, f)
		}
	case *Strategy:
		Inspect(e.Body, f)
	}
}

// Conjuncts splits e on its top-level ANDs; a SASE+ strategy form
// name(vars) { body } contributes the strategy and the conjuncts of body.
func Conjuncts(e Expr) []Expr {
	switch x := e.(type) {
	case nil:
		return nil
	case *BinaryExpr:
		if x.Op == OpAnd {
			return append(Conjuncts(x.X), Conjuncts(x.Y)...)
		}
	case *Strategy:
		if x.Body != nil {
			word := &Strategy{Span: x.Span, Name: x.Name, Vars: x.Vars}
			return append([]Expr{word}, Conjuncts(x.Body)...)
		}
	}
	return []Expr{e}
}
