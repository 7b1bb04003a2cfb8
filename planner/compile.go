package planner

import (
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
)

// Compile checks a query against a stream and builds its basic plan. Errors
// are an ast.ErrorList with positions in src.
func Compile(q *ast.Query, src *ast.Source, stream *event.Stream) (*Plan, error) {
	p := &Plan{Query: q, Src: src, Stream: stream, Engine: "basic"}
	var errs ast.ErrorList
	c := &compiler{plan: p, errs: &errs, vars: map[string]int{}, elem: -1}
	if q.Pattern.Root != nil {
		return c.algebra(q)
	}
	c.components(q.Pattern)
	if len(errs) > 0 {
		return nil, errs.Err()
	}
	c.window(q)
	c.where(q.Where)
	c.output(q.Return)
	var runs *RunScan
	if p.Strategy != NoStrategy {
		runs = c.runScan() // it has checks of its own
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	c.lower()
	if runs != nil {
		p.Source = runs
	} else {
		c.basicPlan()
	}
	if ng := p.Negations(); len(ng) > 0 {
		p.Stages = append(p.Stages, &Negation{Comps: ng})
	}
	p.Output = &Transformation{Columns: p.Columns}
	return p, nil
}

// algebra compiles a v3 pattern (LANGUAGE.md §9) to its Algebra source.
func (c *compiler) algebra(q *ast.Query) (*Plan, error) {
	p := c.plan
	root := c.algebraComponents(q)
	if err := c.errs.Err(); err != nil {
		return nil, err
	}
	c.window(q)
	c.where(q.Where)
	c.output(q.Return)
	c.algebraStrategy(q, root)
	if err := c.errs.Err(); err != nil {
		return nil, err
	}
	c.lower()
	c.algebraPlan(root)
	p.Output = &Transformation{Columns: p.Columns}
	return p, nil
}

// lower compiles every checked expression to its closure.
func (c *compiler) lower() {
	p := c.plan
	for _, pr := range c.preds {
		pr.Eval = p.lowerCond(pr.Expr)
	}
	p.Where = c.preds
	for i := range p.Columns {
		if col := &p.Columns[i]; col.Kind == ColValue {
			col.Eval = p.lowerExpr(col.Expr)
		}
	}
}

func (c *compiler) components(pat *ast.Pattern) {
	p := c.plan
	schema := p.Stream.Schema
	for i, n := range pat.Components {
		comp := &Component{Index: i, Var: n.VarName(), Node: n, Prev: -1, Next: -1}
		switch {
		case n.Negated:
			comp.Kind = Negated
		case n.Closure != nil:
			comp.Kind = Closure
			comp.K = n.Closure.K
			if comp.K < 1 {
				c.errorf(n.Closure, "a closure needs at least one event (k >= 1)")
			}
		default:
			comp.Kind = Single
			p.Positives = append(p.Positives, i)
		}
		if n.Any && n.Var == nil {
			c.errorf(n, "ANY(...) needs a variable")
		}
		for _, t := range n.Types {
			comp.TypeNames = append(comp.TypeNames, t.Name)
			if id, ok := schema.TypeID(t.Name); ok && !slices.Contains(comp.Types, id) {
				comp.Types = append(comp.Types, id)
			}
		}
		if prev, dup := c.vars[comp.Var]; dup {
			at := ast.Node(n)
			if n.Var != nil {
				at = n.Var
			}
			c.errorf(at, "variable '%s' used by two components (%s and %s)", comp.Var, p.Components[prev].Node, n)
		} else {
			c.vars[comp.Var] = i
		}
		p.Components = append(p.Components, comp)
	}
	if len(p.Positives) == 0 {
		c.errorf(pat, "the pattern needs at least one positive single component")
		return
	}
	comps := p.Components
	for i := 1; i < len(comps); i++ {
		a, b := comps[i-1], comps[i]
		switch {
		case a.Kind == Closure && b.Kind == Closure:
			c.errorf(b.Node, "closures %s and %s are adjacent", a.Var, b.Var)
		case a.Kind == Closure && b.Kind == Negated:
			c.errorf(b.Node, "closure %s is adjacent to negated component %s", a.Var, b.Var)
		case a.Kind == Negated && b.Kind == Closure:
			c.errorf(b.Node, "closure %s is adjacent to negated component %s", b.Var, a.Var)
		}
	}
	first, last := comps[0], comps[len(comps)-1]
	if first.Kind == Closure && last.Kind == Closure {
		c.errorf(pat, "the pattern may not both start and end with a closure")
	}
	prev := -1
	for _, comp := range comps {
		comp.Prev = prev
		if comp.Kind == Single {
			prev = comp.Index
		}
	}
	next := -1
	for i := len(comps) - 1; i >= 0; i-- {
		comps[i].Next = next
		if comps[i].Kind == Single {
			next = i
		}
	}
}

// firstAndLast returns the first and last of comps, none when empty.
func firstAndLast(comps []*Component) []*Component {
	if len(comps) == 0 {
		return nil
	}
	return []*Component{comps[0], comps[len(comps)-1]}
}

func (c *compiler) window(q *ast.Query) {
	p := c.plan
	comps := p.Components
	if q.Within == nil {
		if q.Pattern.Root != nil {
			comps = nil // the algebra's edges are checked on its tree
		}
		for _, comp := range firstAndLast(comps) {
			if comp.Kind == Closure {
				c.errorf(comp.Node, "closure %s is first or last in the pattern and there is no WITHIN", comp.Var)
			}
		}
		if p.Stream.Live && len(comps) == 1 && comps[0].Kind == Single {
			// One event a match (a filter) spans no time: a window of 0
			// holds it to that, so that every engine keeps no state.
			p.HasWindow = true
			return
		}
		if p.Stream.Live {
			c.errorf(q.Pattern, "a query on live stream %s needs WITHIN, so that its state stays bounded", p.Stream.Name)
		}
		return
	}
	d := q.Within
	p.HasWindow = true
	num, den := uint64(1), uint64(1)
	if d.Unit != "" {
		if p.Stream.Unit == 0 {
			c.errorf(d, "WITHIN %s names a time unit, but stream %s has unit-less timestamps (write WITHIN %s, or load the stream WITH (time_unit = 'ms'))", d, p.Stream.Name, d.Raw)
			return
		}
		unit, _ := event.LookupTimeUnit(d.Unit) // the parser checked it
		num, den = uint64(unit.Duration), uint64(p.Stream.Unit)
	}
	w, ok := windowTicks(d, num, den)
	if !ok {
		c.errorf(d, "WITHIN %s is more than the largest window, %d ticks", d, int64(math.MaxInt64))
		return
	}
	p.Window = w
}

// windowTicks converts d to ticks, num/den ticks per unit of d, rounding
// down; ok is false when that does not fit in an int64. An integer is
// converted exactly (a float64 would round 2^63-1 up to 2^63, which wraps
// to a negative window).
func windowTicks(d *ast.Duration, num, den uint64) (int64, bool) {
	if v, err := strconv.ParseUint(d.Raw, 10, 64); err == nil {
		hi, lo := bits.Mul64(v, num)
		if hi >= den {
			return 0, false
		}
		q, _ := bits.Div64(hi, lo, den)
		return int64(q), q <= math.MaxInt64
	}
	w := math.Floor(d.Value * float64(num) / float64(den))
	if w >= 0x1p63 {
		return 0, false
	}
	return int64(w), true
}

// mentions lists what a conjunct refers to: the components, and the
// closures whose element i it reads.
func (c *compiler) mentions(e ast.Expr) (vars, elems []int) {
	add := func(list []int, id *ast.Ident) []int {
		if i, ok := c.vars[id.Name]; ok && !slices.Contains(list, i) {
			list = append(list, i)
		}
		return list
	}
	ast.Inspect(e, func(x ast.Expr) bool {
		switch x := x.(type) {
		case *ast.AttrRef:
			vars = add(vars, x.Var)
			if x.Index != nil && x.Index.Kind == ast.IndexI {
				elems = add(elems, x.Var)
			}
		case *ast.LenRef:
			vars = add(vars, x.Var)
		case *ast.VarRef:
			vars = add(vars, x.Var)
		case *ast.ListRef:
			vars = add(vars, x.Var)
			if x.Running {
				elems = add(elems, x.Var)
			}
		case *ast.Equivalence:
			for _, comp := range c.plan.Components {
				if comp.Kind != Negated && !slices.Contains(vars, comp.Index) {
					vars = append(vars, comp.Index)
				}
			}
		}
		return true
	})
	slices.Sort(vars)
	return vars, elems
}

func (c *compiler) where(where ast.Expr) {
	p := c.plan
	for _, conj := range ast.Conjuncts(where) {
		switch x := conj.(type) {
		case *ast.Strategy:
			c.strategy(x)
			continue
		case *ast.Equivalence:
			p.Equivs = append(p.Equivs, c.equivs(x)...)
			continue
		}
		vars, elems := c.mentions(conj)
		var negs []int
		for _, v := range vars {
			if p.Components[v].Kind == Negated {
				negs = append(negs, v)
			}
		}
		pred := &Pred{Text: c.text(conj), Vars: vars, pos: conj.NodeSpan().Start}
		switch {
		case len(negs) > 1:
			names := make([]string, len(negs))
			for i, v := range negs {
				names[i] = p.Components[v].Var
			}
			c.errorf(conj, "a conjunct mentions more than one negated variable: %s", strings.Join(names, ", "))
		case len(negs) == 1 && len(elems) > 0:
			c.errorf(conj, "a conjunct may not mention both negated %s and the element i of closure %s", p.Components[negs[0]].Var, p.Components[elems[0]].Var)
		case len(negs) == 1:
			pred.Expr = c.cond(conj)
			p.Components[negs[0]].NegPreds = append(p.Components[negs[0]].NegPreds, pred)
		case len(elems) > 1:
			c.errorf(conj, "a per-element predicate may read element i of one closure only")
		case len(elems) == 1:
			c.elem = elems[0]
			pred.Expr = c.cond(conj)
			c.elem = -1
			p.Components[elems[0]].ElemPreds = append(p.Components[elems[0]].ElemPreds, pred)
		default:
			pred.Expr = c.cond(conj)
			c.sel = append(c.sel, pred)
		}
		if pred.Expr != nil {
			c.preds = append(c.preds, pred)
		}
	}
}

func (c *compiler) output(ret *ast.Return) {
	p := c.plan
	if ret == nil || ret.Star {
		for _, comp := range p.Components {
			switch comp.Kind {
			case Single:
				p.Columns = append(p.Columns, Column{Name: comp.Var, Kind: ColEvent, Comp: comp.Index})
			case Closure:
				p.Columns = append(p.Columns, Column{Name: comp.Var, Kind: ColList, Comp: comp.Index})
			}
		}
		return
	}
	seen := map[string]bool{}
	for _, it := range ret.Items {
		col := Column{Name: c.text(it.Expr)}
		if it.Alias != nil {
			col.Name = it.Alias.Name
		}
		if ref, ok := it.Expr.(*ast.VarRef); ok {
			comp, ok := c.component(ref.Var)
			if !ok {
				continue
			}
			switch comp.Kind {
			case Single:
				col.Kind, col.Comp = ColEvent, comp.Index
			case Closure:
				col.Kind, col.Comp = ColList, comp.Index
			default:
				c.errorf(ref, "negated variable %s is never bound, so it cannot be returned", comp.Var)
			}
		} else {
			vars, _ := c.mentions(it.Expr)
			for _, v := range vars {
				if p.Components[v].Kind == Negated {
					c.errorf(it.Expr, "negated variable %s is never bound, so it cannot be returned", p.Components[v].Var)
				}
			}
			col.Expr, _ = c.expr(it.Expr)
		}
		if seen[col.Name] {
			c.errorf(it, "two columns are named %s; name one with AS", col.Name)
		}
		seen[col.Name] = true
		p.Columns = append(p.Columns, col)
	}
}

// basicPlan lays out SASE's basic plan: SSC with a runtime stack,
// closure collection, selection, window (negation and the output follow).
func (c *compiler) basicPlan() {
	p := c.plan
	p.Source = &StackScan{SeqScan{Comps: p.Positives}}
	if cl := p.Closures(); len(cl) > 0 {
		p.Stages = append(p.Stages, &ClosureOp{Comps: cl})
	}
	// The optimizer moves some tests out of Selection, not out of the plan.
	if sel := (&Selection{Preds: c.sel, Equivs: slices.Clone(p.Equivs)}); len(sel.Preds) > 0 || len(sel.Equivs) > 0 {
		p.Stages = append(p.Stages, sel)
	}
	if p.HasWindow {
		p.Stages = append(p.Stages, &Window{W: p.Window})
	}
}
