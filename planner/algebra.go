package planner

import (
	"fmt"
	"slices"

	"github.com/sase-cep/sase/ast"
)

// AlgKind is the role of a node of a v3 pattern tree (LANGUAGE.md §9).
type AlgKind int

const (
	AlgSingle AlgKind = iota // a positive single event, maybe optional
	AlgClosure
	AlgNegated
	AlgSeq
	AlgAnd
	AlgOr
)

// AlgNode is a node of a v3 pattern, bound to the plan's components.
type AlgNode struct {
	Kind     AlgKind
	Comp     int   // leaves: the component (one per variable)
	Types    []int // leaves: this leaf's types (OR branches sharing a variable may differ)
	Min, Max int   // closures: n <= len <= Max (Max 0: no maximum)
	Optional bool
	Top      bool // the top-level SEQ, whose edges follow the window (§4)
	Items    []*AlgNode
	Node     ast.Item
}

// IsPositive reports whether n is a positive item of a SEQ: not negated,
// not a closure.
func (n *AlgNode) IsPositive() bool { return n.Kind != AlgClosure && n.Kind != AlgNegated }

// Walk calls f on n and on every node below it, parents first.
func (n *AlgNode) Walk(f func(*AlgNode)) {
	f(n)
	for _, it := range n.Items {
		it.Walk(f)
	}
}

// Nullable reports whether n has an occurrence that binds no positive
// single (LANGUAGE.md §9.5).
func (n *AlgNode) Nullable() bool {
	if n.Optional {
		return true
	}
	switch n.Kind {
	case AlgClosure, AlgNegated:
		return true
	case AlgSeq:
		return allNullable(n.Items)
	case AlgAnd:
		for _, it := range n.Items {
			if !it.Nullable() {
				return false
			}
		}
		return true
	case AlgOr:
		return slices.ContainsFunc(n.Items, (*AlgNode).Nullable)
	}
	return false
}

// allNullable reports whether every positive item of a SEQ's part is
// nullable (true when there is none).
func allNullable(items []*AlgNode) bool {
	for _, it := range items {
		if it.IsPositive() && !it.Nullable() {
			return false
		}
	}
	return true
}

// FlatAnd reports whether n is an AND of required single events.
func (n *AlgNode) FlatAnd() bool {
	return n.Kind == AlgAnd && !n.Optional && !slices.ContainsFunc(n.Items, func(it *AlgNode) bool { return it.Kind != AlgSingle || it.Optional })
}

// Algebra is the source of a v3 pattern on every engine: it builds the
// occurrences of the tree (LANGUAGE.md §9.2), then, per derivation, the
// closure lists, the window, the equivalence tests, the selection and the
// negations, and emits each binding once.
type Algebra struct {
	// Union is the pattern as a union of flat plans, nil when it has no
	// such rewrite; the optimizer chooses it (the basic engine keeps
	// the Algebra as the reference).
	Union *Union
	// Join runs a flat AND (FlatAnd) as a join instead: each event of an
	// item joins the buffered events of the others in its window, bucketed
	// by Equivs[0]'s value, and a match is out at its last event. The
	// optimizer chooses it (basic keeps the products as the reference).
	Join      bool
	Root      *AlgNode
	HasWindow bool
	Window    int64
	Equivs    []*Equiv
	Preds     []*Pred // selection
}

func (*Algebra) Name() string             { return "Algebra" }
func (s *Algebra) Operators() []Operator  { return []Operator{s} }
func (s *Algebra) Bounded() (int64, bool) { return s.Window, s.HasWindow }

func (s *Algebra) Details(p *Plan) []string {
	out := []string{"pattern " + p.Query.Pattern.String()}
	switch {
	case s.Join:
		out = append(out, "joins each event of an item with the other items' events buffered within its window (by the first equivalence test's value), and emits a match at its last event: no product of orders")
	case s.HasWindow:
		out = append(out, "runs the matches of each first ts once the stream is past it + window, from the events of that window (state: the last 2 windows)")
	default:
		out = append(out, "runs at the end of the stream (without WITHIN a match may span it)")
	}
	tree := s.Root.explain(p, "")
	if s.Join {
		tree[0] = "AND (any order, disjoint)"
	}
	out = append(out, tree...)
	if s.HasWindow {
		out = append(out, fmt.Sprintf("window %d", s.Window))
	}
	for _, q := range s.Equivs {
		out = append(out, "equivalence "+q.Text)
	}
	for _, pr := range s.Preds {
		out = append(out, "selection "+pr.Text)
	}
	for _, c := range p.Components {
		for _, pr := range c.ElemPreds {
			out = append(out, fmt.Sprintf("closure %s element: %s", c.Var, pr.Text))
		}
		for _, pr := range c.NegPreds {
			out = append(out, fmt.Sprintf("negation %s: %s", c.Var, pr.Text))
		}
	}
	return out
}

// explain prints the tree one node a line, indented.
func (n *AlgNode) explain(p *Plan, indent string) []string {
	opt := ""
	if n.Optional {
		opt = " (optional)"
	}
	switch n.Kind {
	case AlgSeq, AlgAnd, AlgOr:
		name := map[AlgKind]string{AlgSeq: "SEQ", AlgAnd: "AND (any order, disjoint; with WITHIN one product per item that may hold the first ts)", AlgOr: "OR (union)"}[n.Kind]
		out := []string{indent + name + opt}
		for _, it := range n.Items {
			out = append(out, it.explain(p, indent+"  ")...)
		}
		return out
	case AlgClosure:
		bound := fmt.Sprintf("{%d,}", n.Min)
		if n.Max > 0 {
			bound = fmt.Sprintf("{%d,%d}", n.Min, n.Max)
		}
		return []string{indent + "closure " + p.Components[n.Comp].Var + " " + bound}
	case AlgNegated:
		return []string{indent + "not " + p.Components[n.Comp].Var}
	}
	return []string{indent + "event " + p.Components[n.Comp].Var + opt}
}

func (s *Algebra) validate(p *Plan) error {
	if len(p.Stages) > 0 {
		return fmt.Errorf("the Algebra source does every stage's work, yet the plan has %d stages", len(p.Stages))
	}
	return predsCompiled("Algebra", s.Preds)
}

// varUse is where an item tree uses a variable, and how.
type varUse struct {
	kind CompKind
	leaf *ast.Component
}

// algebraComponents builds one component per variable of a v3 pattern and
// the tree over them, and reports the errors of LANGUAGE.md §9.2-9.5.
func (c *compiler) algebraComponents(q *ast.Query) *AlgNode {
	p := c.plan
	c.algebraVars(q.Pattern.Root)
	root := c.algNode(q.Pattern.Root)
	if len(*c.errs) > 0 {
		return nil
	}
	if root.Nullable() {
		c.errorf(q.Pattern, "every match must bind a positive single component, and this pattern has an occurrence that binds none (9.2): make one item required")
		return nil
	}
	if root.Kind == AlgSeq {
		root.Top = true
	}
	c.algebraShape(root, q.Within != nil)
	for _, comp := range p.Components {
		if comp.Kind == Single {
			p.Positives = append(p.Positives, comp.Index)
		}
	}
	return root
}

// algebraVars checks the variables: children of SEQ and AND share none,
// branches of one OR may share one of the same kind.
func (c *compiler) algebraVars(it ast.Item) map[string]varUse {
	switch it := it.(type) {
	case *ast.Component:
		k := Single
		switch {
		case it.Negated:
			k = Negated
		case it.Closure != nil:
			k = Closure
		}
		return map[string]varUse{it.VarName(): {k, it}}
	case *ast.Group:
		out := map[string]varUse{}
		for _, child := range it.Items {
			for v, u := range c.algebraVars(child) {
				prev, dup := out[v]
				switch {
				case !dup:
					out[v] = u
				case it.Kind != ast.GroupOr:
					c.errorf(varNode(u.leaf), "variable '%s' used by two components (only branches of one OR may share a variable)", v)
				case prev.kind != u.kind:
					c.errorf(varNode(u.leaf), "variable '%s' is %s in one OR branch and %s in another", v, kindText(u.kind), kindText(prev.kind))
				}
			}
		}
		return out
	}
	return nil
}

func varNode(n *ast.Component) ast.Node {
	if n.Var != nil {
		return n.Var
	}
	return n
}

func kindText(k CompKind) string {
	return [...]string{Single: "a positive single", Closure: "a closure", Negated: "a negated component"}[k]
}

// algNode binds a tree node; leaves share the component of their variable.
func (c *compiler) algNode(it ast.Item) *AlgNode {
	p := c.plan
	switch it := it.(type) {
	case *ast.Component:
		n := &AlgNode{Node: it, Optional: it.Optional}
		kind := Single
		switch {
		case it.Negated:
			n.Kind, kind = AlgNegated, Negated
		case it.Closure != nil:
			n.Kind, kind = AlgClosure, Closure
			n.Min, n.Max = it.Closure.K, it.Closure.Max
		}
		i, seen := c.vars[it.VarName()]
		if !seen {
			i = len(p.Components)
			c.vars[it.VarName()] = i
			p.Components = append(p.Components, &Component{Index: i, Var: it.VarName(), Kind: kind, K: n.Min, Node: it, Prev: -1, Next: -1})
		}
		comp := p.Components[i]
		comp.K = min(comp.K, n.Min)
		for _, t := range it.Types {
			if !slices.Contains(comp.TypeNames, t.Name) {
				comp.TypeNames = append(comp.TypeNames, t.Name)
			}
			if id, ok := p.Stream.Schema.TypeID(t.Name); ok {
				if !slices.Contains(n.Types, id) {
					n.Types = append(n.Types, id)
				}
				if !slices.Contains(comp.Types, id) {
					comp.Types = append(comp.Types, id)
				}
			}
		}
		n.Comp = i
		return n
	case *ast.Group:
		n := &AlgNode{Node: it, Optional: it.Optional, Kind: AlgSeq}
		switch it.Kind {
		case ast.GroupAnd:
			n.Kind = AlgAnd
		case ast.GroupOr:
			n.Kind = AlgOr
		}
		for _, child := range it.Items {
			n.Items = append(n.Items, c.algNode(child))
		}
		return n
	}
	return nil
}

// algebraShape reports where negations and closures may not stand: at the
// edge of a nested SEQ, directly inside AND or OR, next to each other, or
// (at the top level) at an edge without WITHIN, at both edges at once.
func (c *compiler) algebraShape(n *AlgNode, within bool) {
	p := c.plan
	what := func(it *AlgNode) string {
		if it.Kind == AlgClosure {
			return "a closure (" + p.Components[it.Comp].Var + ")"
		}
		return "a negated component (" + p.Components[it.Comp].Var + ")"
	}
	switch n.Kind {
	case AlgAnd, AlgOr:
		for _, it := range n.Items {
			if !it.IsPositive() {
				c.errorf(it.Node, "%s may not stand directly inside %s: its interval would depend on what surrounds the group; put it in a SEQ between two required items", what(it), map[AlgKind]string{AlgAnd: "AND", AlgOr: "OR"}[n.Kind])
			}
		}
	case AlgSeq:
		var first, last []*AlgNode
		for i, it := range n.Items {
			if it.IsPositive() {
				continue
			}
			left, right := allNullable(n.Items[:i]), allNullable(n.Items[i+1:])
			if !n.Top && (left || right) {
				c.errorf(it.Node, "%s at the edge of a nested SEQ (no positive item that is never empty on one side): its interval would depend on what surrounds the group", what(it))
			}
			if n.Top && it.Kind == AlgClosure && left {
				first = append(first, it)
			}
			if n.Top && it.Kind == AlgClosure && right {
				last = append(last, it)
			}
			for j := i + 1; j < len(n.Items); j++ {
				other := n.Items[j]
				if other.IsPositive() && !other.Nullable() {
					break
				}
				if other.IsPositive() {
					continue
				}
				a, b := p.Components[it.Comp].Var, p.Components[other.Comp].Var
				switch {
				case it.Kind == AlgClosure && other.Kind == AlgClosure:
					c.errorf(it.Node, "closures %s and %s are adjacent (or are whenever the items between them are empty)", a, b)
				case it.Kind == AlgClosure:
					c.errorf(it.Node, "closure %s is adjacent to negated component %s (or is whenever the items between them are empty)", a, b)
				case other.Kind == AlgClosure:
					c.errorf(other.Node, "closure %s is adjacent to negated component %s (or is whenever the items between them are empty)", b, a)
				}
			}
		}
		edge := append(slices.Clone(first), last...)
		if len(edge) > 0 && !within {
			c.errorf(edge[0].Node, "closure %s is (or can be) first or last in the pattern and there is no WITHIN", p.Components[edge[0].Comp].Var)
		} else if len(first) > 0 && len(last) > 0 && (len(first) > 1 || len(last) > 1 || first[0] != last[0]) {
			c.errorf(c.plan.Query.Pattern, "a pattern may not both start and end with a closure")
		}
	}
	for _, it := range n.Items {
		c.algebraShape(it, within)
	}
}

// algebraStrategy enforces §9.3: a v3 pattern runs with skip-till-any-match
// only, and naming it is an error with a closure (it asks for SASE+ runs).
func (c *compiler) algebraStrategy(q *ast.Query, root *AlgNode) {
	p := c.plan
	if p.Strategy == NoStrategy {
		return
	}
	var at ast.Node = q.Pattern
	for _, conj := range ast.Conjuncts(q.Where) {
		if s, ok := conj.(*ast.Strategy); ok {
			at = s
		}
	}
	switch {
	case p.Strategy != AnyMatch:
		c.errorf(at, "a pattern that uses the v3 algebra (nested groups, AND, OR, ?, *, {n}, {n,m}) runs with skip-till-any-match only, not '%s'", c.text(at))
	case len(p.Closures()) > 0:
		c.errorf(at, "a named strategy with a closure asks for SASE+ runs, which are not defined for a v3 pattern; leave the strategy out (skip-till-any-match is the default)")
	}
	p.Strategy = NoStrategy // any-match without a closure is §9's own semantics
}

// algebraPlan makes the Algebra source, which does every stage's work.
func (c *compiler) algebraPlan(root *AlgNode) {
	p := c.plan
	p.Source = &Algebra{Root: root, HasWindow: p.HasWindow, Window: p.Window, Equivs: slices.Clone(p.Equivs), Preds: c.sel, Union: c.union(p.Query, root)}
}
