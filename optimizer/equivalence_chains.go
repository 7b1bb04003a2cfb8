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
	sel, ok := planner.StageOf[*planner.Selection](p)
	if !ok || len(p.Closures()) > 0 || p.Stream.Live {
		return false
	}
	// Candidate links: x.attr = y.attr between two different variables,
	// in Selection (positives) or in a negated component's predicates.
	type link struct {
		pred *planner.Pred
		a, b int
		neg  int // the negated component that holds it, or -1
	}
	bySlot := map[int][]link{}
	var attrs []planner.Field
	collect := func(preds []*planner.Pred, neg int) {
		for _, pr := range preds {
			x, y, ok := sameAttrEquality(pr)
			if !ok || len(pr.Vars) != 2 {
				continue
			}
			if _, seen := bySlot[x.Slot]; !seen {
				attrs = append(attrs, x.Field)
			}
			bySlot[x.Slot] = append(bySlot[x.Slot], link{pr, x.Comp, y.Comp, neg})
		}
	}
	collect(sel.Preds, -1)
	for _, n := range p.Negations() {
		collect(p.Components[n].NegPreds, n)
	}
	for _, attr := range attrs {
		links := bySlot[attr.Slot]
		if !alwaysPresentOn(p, attr.Slot) {
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
		q := planner.EquivOn(attr)
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

// sameAttrEquality matches x.attr = y.attr on two different components'
// events, for an attribute in the schema's slots (not ts or seq).
func sameAttrEquality(pr *planner.Pred) (x, y *planner.Attr, ok bool) {
	b, isBin := pr.Expr.(*planner.Binary)
	if !isBin || b.Op != ast.OpEq {
		return nil, nil, false
	}
	x, xok := b.X.(*planner.Attr)
	y, yok := b.Y.(*planner.Attr)
	if !xok || !yok || x.Index != 0 || y.Index != 0 || x.Builtin != planner.NotBuiltin || y.Builtin != planner.NotBuiltin ||
		x.Slot != y.Slot || x.Comp == y.Comp {
		return nil, nil, false
	}
	return x, y, true
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
