package planner

import (
	"fmt"
	"slices"

	"github.com/sase-cep/sase/ast"
)

// maxBranches caps the flat plans a v3 pattern is rewritten into: past it
// the Algebra source runs the pattern.
const maxBranches = 16

// Union runs a v3 pattern as the union of the flat SEQs it means (ORs
// distributed, optional items expanded: LANGUAGE.md §9.3), each a flat
// plan that the optimizer gives to its engine. Each branch binds its own
// set of variables, so no binding comes from two branches: the union
// keeps no state of its own.
type Union struct {
	Branches  []*Branch
	HasWindow bool
	Window    int64
}

// Branch is one flat plan of a Union.
type Branch struct {
	Plan *Plan
	// Comps maps each component of the branch's plan to the union plan's.
	Comps []int
	// Rest are the union's selection conjuncts that read a variable the
	// branch leaves unbound (true for a comparison, LANGUAGE.md §9.3):
	// they run on the union's binding.
	Rest []*Pred
	// Longest are the closures with a maximum ({n,m}): the flat plan
	// binds their lists as T^n does, and a longer one is no match.
	Longest []Longest
}

// Longest is a closure's maximum length.
type Longest struct{ Comp, Max int }

func (*Union) Name() string            { return "Union" }
func (s *Union) Operators() []Operator { return []Operator{s} }

// Bounded: the union's state is its branches'.
func (s *Union) Bounded() (int64, bool) {
	for _, br := range s.Branches {
		if !br.Plan.Bounded() {
			return 0, false
		}
	}
	return s.Window, s.HasWindow
}

// Details shows each branch as it runs: its flat pattern, what the union
// checks on its matches, then its plan's operators, source first.
func (s *Union) Details(p *Plan) []string {
	out := []string{"pattern " + p.Query.Pattern.String(), fmt.Sprintf("union of %d flat plans, each binding its own variables (no binding twice)", len(s.Branches))}
	for i, br := range s.Branches {
		out = append(out, fmt.Sprintf("branch %d: %s", i+1, br.Plan.Query.Pattern.String()))
		for _, pr := range br.Rest {
			out = append(out, "  selection with unbound variables "+pr.Text)
		}
		for _, l := range br.Longest {
			out = append(out, fmt.Sprintf("  closure %s at most %d events", p.Components[l.Comp].Var, l.Max))
		}
		ops := br.Plan.Source.Operators()
		for _, st := range br.Plan.Stages {
			ops = append(ops, st)
		}
		for _, op := range ops {
			out = append(out, "  "+op.Name())
			for _, d := range op.Details(br.Plan) {
				out = append(out, "    "+d)
			}
		}
		for _, n := range br.Plan.Notes {
			out = append(out, "  note: "+n)
		}
	}
	return out
}

func (s *Union) validate(p *Plan) error {
	if len(p.Stages) > 0 {
		return fmt.Errorf("the Union source does every stage's work, yet the plan has %d stages", len(p.Stages))
	}
	for i, br := range s.Branches {
		if err := br.Plan.Validate(); err != nil {
			return fmt.Errorf("union branch %d: %w", i+1, err)
		}
		if err := predsCompiled("Union", br.Rest); err != nil {
			return err
		}
	}
	return nil
}

// union rewrites a v3 pattern into flat plans, or returns nil when it
// cannot: an AND (equal ts and any interleaving are not flat SEQs), a
// closure that may be empty, two branches that bind the
// same variables (they could give one binding twice), a conjunct that a
// negation or closure owns reading a variable a branch leaves unbound,
// too many branches, or a branch that does not compile.
func (c *compiler) union(q *ast.Query, root *AlgNode) *Union {
	p := c.plan
	branches, ok := expand(root)
	if !ok {
		return nil
	}
	u := &Union{HasWindow: p.HasWindow, Window: p.Window}
	var bound [][]int
	for _, leaves := range branches {
		br := &Branch{}
		var in, binds []int
		comps := make([]*ast.Component, len(leaves))
		for i, n := range leaves {
			comps[i] = n.Node.(*ast.Component)
			in = append(in, n.Comp)
			if n.Kind != AlgNegated {
				binds = append(binds, n.Comp)
			}
			if n.Kind == AlgClosure && n.Max > 0 {
				br.Longest = append(br.Longest, Longest{n.Comp, n.Max})
			}
		}
		if !slices.ContainsFunc(leaves, func(n *AlgNode) bool { return n.Kind == AlgSingle }) {
			return nil
		}
		slices.Sort(binds)
		for _, other := range bound {
			if slices.Equal(other, binds) {
				return nil
			}
		}
		bound = append(bound, binds)
		var where ast.Expr
		for _, conj := range ast.Conjuncts(q.Where) {
			switch conj.(type) {
			case *ast.Strategy:
				continue // any-match, the flat default
			case *ast.Equivalence:
			default:
				vars, elems := c.mentions(conj)
				if !subset(owners(p, vars, elems), in) {
					continue // it belongs to a negation or closure the branch has not
				}
				if !subset(vars, in) {
					i := slices.IndexFunc(c.sel, func(pr *Pred) bool { return pr.pos == conj.NodeSpan().Start })
					if i < 0 {
						return nil
					}
					br.Rest = append(br.Rest, c.sel[i])
					continue
				}
			}
			if where == nil {
				where = conj
			} else {
				where = &ast.BinaryExpr{Span: ast.Span{Start: where.NodeSpan().Start, End: conj.NodeSpan().End}, Op: ast.OpAnd, X: where, Y: conj}
			}
		}
		flat := &ast.Query{Span: q.Span, Pattern: &ast.Pattern{Span: q.Pattern.Span, Form: ast.FormSeq, Components: comps}, Where: where, Within: q.Within}
		plan, err := Compile(flat, p.Src, p.Stream)
		if err != nil {
			return nil
		}
		for _, comp := range plan.Components {
			br.Comps = append(br.Comps, c.vars[comp.Var])
		}
		br.Plan = plan
		u.Branches = append(u.Branches, br)
	}
	return u
}

// owners are the negated variables a conjunct mentions and the closures
// whose element it reads: the components it belongs to (compiler.where).
func owners(p *Plan, vars, elems []int) []int {
	out := slices.Clone(elems)
	for _, v := range vars {
		if p.Components[v].Kind == Negated {
			out = append(out, v)
		}
	}
	return out
}

func subset(xs, of []int) bool {
	for _, x := range xs {
		if !slices.Contains(of, x) {
			return false
		}
	}
	return true
}

// expand lists the flat SEQs (their leaves, in order) a tree of SEQ, OR,
// optional items and leaves means; ok is false for any other tree, or
// past maxBranches.
func expand(n *AlgNode) (out [][]*AlgNode, ok bool) {
	switch n.Kind {
	case AlgAnd:
		return nil, false
	case AlgClosure:
		if n.Min < 1 { // a flat closure has an element
			return nil, false
		}
		out = [][]*AlgNode{{n}}
	case AlgSingle, AlgNegated:
		out = [][]*AlgNode{{n}}
	case AlgOr:
		for _, it := range n.Items {
			sub, ok := expand(it)
			if !ok {
				return nil, false
			}
			out = append(out, sub...)
		}
	case AlgSeq:
		out = [][]*AlgNode{nil}
		for _, it := range n.Items {
			sub, ok := expand(it)
			if !ok || len(out)*len(sub) > maxBranches {
				return nil, false
			}
			var next [][]*AlgNode
			for _, pre := range out {
				for _, s := range sub {
					next = append(next, append(slices.Clip(pre), s...))
				}
			}
			out = next
		}
	}
	if n.Optional {
		out = append(out, nil)
	}
	return out, len(out) <= maxBranches
}
