package optimizer

import (
	"slices"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/planner"
)

// equivalenceChains recognises SASE's hand-written equivalence tests,
// chains of x.attr = y.attr, and turns a chain that links every positive
// single and every negated component into one test [attr], which PAIS can
// then push into SS. It is exact only when no closure exists (a test would
// also filter closure elements) and every event of those components has
// the attribute (a comparison with an absent value holds, so a chain
// through an event lacking it would not be transitive).
type equivalenceChains struct{}

func (equivalenceChains) Name() string { return "recognise-equivalence-chains" }

func (equivalenceChains) Apply(p *planner.Plan) bool {
	sel := selection(p)
	if sel == nil || len(p.Closures()) > 0 || p.Stream.Live {
		return false
	}
	// Candidate links: x.attr = y.attr between two different variables,
	// in Selection (positives) or in a negated component's predicates.
	type link struct {
		pred *planner.Pred
		a, b int
		neg  int // the negated component that holds it, or -1
	}
	byAttr := map[string][]link{}
	var attrs []string
	collect := func(preds []*planner.Pred, neg int) {
		for _, pr := range preds {
			x, y, attr, ok := sameAttrEquality(pr.Node)
			if !ok || len(pr.Vars) != 2 {
				continue
			}
			if _, seen := byAttr[attr]; !seen {
				attrs = append(attrs, attr)
			}
			byAttr[attr] = append(byAttr[attr], link{pr, varIndex(p, x), varIndex(p, y), neg})
		}
	}
	collect(sel.Preds, -1)
	for _, n := range p.Negations() {
		collect(p.Components[n].NegPreds, n)
	}
	for _, attr := range attrs {
		links := byAttr[attr]
		slot, ok := p.Stream.Schema.AttrSlot(attr)
		if !ok || !alwaysPresentOn(p, slot) {
			continue
		}
		parent := make([]int, len(p.Components))
		for i := range parent {
			parent[i] = i
		}
		find := func(i int) int {
			for parent[i] != i {
				i = parent[i]
			}
			return i
		}
		for _, l := range links {
			parent[find(l.a)] = find(l.b)
		}
		root := find(p.Positives[0])
		covered := true
		for _, c := range p.Components {
			if find(c.Index) != root {
				covered = false
			}
		}
		if !covered {
			continue
		}
		q := &planner.Equiv{Attr: attr, Slot: slot, Text: "[" + ast.QuoteName(attr) + "]"}
		p.Equivs = append(p.Equivs, q)
		sel.Equivs = append(sel.Equivs, q)
		for _, l := range links {
			if l.neg < 0 {
				sel.Preds = slices.DeleteFunc(sel.Preds, func(pr *planner.Pred) bool { return pr == l.pred })
			} else {
				n := p.Components[l.neg]
				n.NegPreds = slices.DeleteFunc(n.NegPreds, func(pr *planner.Pred) bool { return pr == l.pred })
			}
		}
		return true
	}
	return false
}

// sameAttrEquality matches x.attr = y.attr on single events.
func sameAttrEquality(e ast.Expr) (x, y, attr string, ok bool) {
	b, isBin := e.(*ast.BinaryExpr)
	if !isBin || b.Op != ast.OpEq {
		return "", "", "", false
	}
	l, lok := b.X.(*ast.AttrRef)
	r, rok := b.Y.(*ast.AttrRef)
	if !lok || !rok || l.Index != nil || r.Index != nil || l.Attr.Name != r.Attr.Name || l.Var.Name == r.Var.Name {
		return "", "", "", false
	}
	switch l.Attr.Name {
	case "ts", "timestamp", "seq":
		return "", "", "", false
	}
	return l.Var.Name, r.Var.Name, l.Attr.Name, true
}

func varIndex(p *planner.Plan, name string) int {
	for _, c := range p.Components {
		if c.Var == name {
			return c.Index
		}
	}
	return -1
}

// alwaysPresentOn reports whether every event of every component's types
// has the attribute.
func alwaysPresentOn(p *planner.Plan, slot int) bool {
	for _, c := range p.Components {
		for _, t := range c.Types {
			if !p.Stream.Schema.Types[t].AlwaysHas(slot) {
				return false
			}
		}
	}
	return true
}
