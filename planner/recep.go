package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sase-cep/sase/ast"
)

// ReCEP is the source of the ReCEP plan (Qiu et al., "event caching, query
// filtering, attribute verification"): Cache keeps one ordered buffer per
// pattern element, Filter searches candidate sequences recursively over
// timestamp ranges of those buffers, Verify checks what the buffers and the
// ranges could not. It does closure collection, selection, the window and
// negation itself, and hands complete matches to the output; EXPLAIN shows
// its three parts as three operators. The optimizer's recep rule builds it
// from the basic plan.
type ReCEP struct {
	Cache  EventCache
	Filter QueryFilter
	Verify AttributeVerify
}

// Buffer is the ordered buffer of one pattern element (positive, closure or
// negated component).
type Buffer struct {
	Comp int
	// Filters are the element's constant predicates (its variable and
	// constants only; for a closure they read c[i] only), Consts the
	// equivalence tests' constant forms [attr = 'v']: an event enters the
	// buffer only if it passes them.
	Filters []*Pred
	Consts  []*Equiv
	// Residual are a closure's per-element predicates or a negated
	// component's predicates that are not filters: they read other
	// variables or earlier elements, so they are checked per candidate.
	Residual []*Pred
}

// EventCache routes each event into the buffers of the elements it may
// bind, through their filters. With Partition set, every value of that
// equivalence attribute gets its own buffers (ReCEP x PAIS); the buffers
// keep the events of the last window only.
type EventCache struct {
	Buffers   []Buffer // by component index
	Partition *Equiv
	HasWindow bool
	Window    int64
}

// QueryFilter searches, for each event entering the last positive's buffer,
// the candidate sequences: positives chosen from their buffers by binary
// search over [tx, ty] ranges, in pattern order from the first element.
// Narrowed negations cut the range of the positive after them; closures
// with fewer than K buffered events in their range cut it too.
type QueryFilter struct {
	Positives []int
	HasWindow bool
	Window    int64
	// Narrowed are the negations handled by range narrowing (their
	// residual predicates read only variables bound before the range is
	// computed); the others are checked by AttributeVerify.
	Narrowed []int
	// Checks[j] are correlation predicates checked as soon as Positives[j]
	// is bound (they read it, the trigger and earlier positives only), an
	// extension of the paper that prunes the recursion; nil when every
	// predicate is left to AttributeVerify. Pre[j] are those that read
	// Positives[j] and the trigger only: they filter Pj's buffer once per
	// trigger, before the recursion.
	Checks, Pre [][]*Pred
}

// AttributeVerify checks each candidate: closure lists (built from their
// buffers), the correlation and whole-list predicates, the equivalence
// tests the buffers do not enforce, and the negations not narrowed. With a
// closure or negation at the end of the pattern it holds the candidate
// until the stream passes ts(P1) + W.
type AttributeVerify struct {
	Preds     []*Pred
	Equivs    []*Equiv
	Closures  []int
	Negations []int
}

// ReCEP's parts as nodes of the plan tree.
type (
	cacheNode  struct{ r *ReCEP }
	filterNode struct{ r *ReCEP }
	verifyNode struct{ r *ReCEP }
)

func (r *ReCEP) Operators() []Operator {
	return []Operator{cacheNode{r}, filterNode{r}, verifyNode{r}}
}

func (r *ReCEP) Bounded() (int64, bool) { return r.Cache.Window, r.Cache.HasWindow }

func (cacheNode) Name() string  { return "EventCache" }
func (filterNode) Name() string { return "QueryFilter" }
func (verifyNode) Name() string { return "AttributeVerify" }

// ConstantPred reports whether pr reads only the current event of one
// component and constants, and which component: for a positive or negated
// v, attributes v.x; for a closure c, attributes c[i].x. Such a predicate
// can filter events before any sequence exists.
func (p *Plan) ConstantPred(pr *Pred) (int, bool) {
	if len(pr.Vars) != 1 {
		return -1, false
	}
	comp := p.Components[pr.Vars[0]]
	ok := true
	Inspect(pr.Expr, func(e Expr) bool {
		switch e := e.(type) {
		case *Attr:
			if comp.Kind == Closure {
				ok = ok && e.Index == ast.IndexI && e.Offset == 0
			} else {
				ok = ok && e.Index == 0
			}
		case *Len, *Aggregate, *EquivTest:
			ok = false
		}
		return ok
	})
	return comp.Index, ok
}

func (n cacheNode) Details(p *Plan) []string {
	var d []string
	op := &n.r.Cache
	for _, b := range op.Buffers {
		c := p.Components[b.Comp]
		d = append(d, "buffer "+p.compText(b.Comp)+": "+typeList(c))
		for _, q := range b.Consts {
			d = append(d, "  filter: "+q.Text)
		}
		for _, pr := range b.Filters {
			d = append(d, "  filter: "+pr.Text)
		}
	}
	if op.Partition != nil {
		d = append(d, "partitioned by "+op.Partition.Text+" (one set of buffers per value)")
	}
	if op.HasWindow {
		d = append(d, fmt.Sprintf("pruned to the last %d ticks", op.Window))
	}
	return d
}

func (n filterNode) Details(p *Plan) []string {
	var d []string
	op := &n.r.Filter
	last := p.Components[p.Last()].Var
	d = append(d, "trigger: each event entering the buffer of "+last)
	if part := n.r.Cache.Partition; part != nil {
		d = append(d, fmt.Sprintf("in the trigger's partition (one lacking %s: in all buffers)", part.Attr))
	}
	for _, c := range p.Components {
		switch {
		case c.Kind == Single && c.Index == p.First() && c.Index != p.Last() && op.HasWindow:
			d = append(d, fmt.Sprintf("%s in [ts(%s) - %d, ts(%s))", p.compText(c.Index), last, op.Window, last))
		case c.Kind == Single && c.Index == p.First() && c.Index != p.Last():
			d = append(d, fmt.Sprintf("%s in (-inf, ts(%s))", p.compText(c.Index), last))
		case c.Kind == Single && c.Index != p.Last():
			d = append(d, fmt.Sprintf("%s in (ts(%s), ts(%s))", p.compText(c.Index), p.Components[c.Prev].Var, last))
		case c.Kind == Closure && c.Next >= 0:
			d = append(d, fmt.Sprintf("%s: at least %d buffered in %s", p.compText(c.Index), c.K, p.interval(c)))
		case c.Kind == Negated && slices.Contains(op.Narrowed, c.Index):
			d = append(d, fmt.Sprintf("%s in %s: its first event ends the range of %s", p.compText(c.Index), p.interval(c), p.Components[c.Next].Var))
			for _, pr := range n.r.Cache.Buffers[c.Index].Residual {
				d = append(d, "  with "+pr.Text)
			}
		}
		if j := slices.Index(op.Positives, c.Index); j >= 0 && j < len(op.Checks) {
			for _, pr := range op.Pre[j] {
				d = append(d, "  filters the buffer per trigger: "+pr.Text)
			}
			for _, pr := range op.Checks[j] {
				d = append(d, "  checked once "+c.Var+" is bound: "+pr.Text)
			}
		}
	}
	return d
}

func (n verifyNode) Details(p *Plan) []string {
	var d []string
	op := &n.r.Verify
	for _, i := range op.Closures {
		c := p.Components[i]
		d = append(d, fmt.Sprintf("%s: at least %d in %s", p.compText(i), c.K, p.interval(c)))
		for _, pr := range n.r.Cache.Buffers[i].Residual {
			d = append(d, "  per element: "+pr.Text)
		}
	}
	for _, q := range op.Equivs {
		d = append(d, q.Text)
	}
	for _, pr := range op.Preds {
		d = append(d, pr.Text)
	}
	for _, i := range op.Negations {
		c := p.Components[i]
		s := fmt.Sprintf("%s in %s", p.compText(i), p.interval(c))
		if c.Next < 0 {
			s += ", once the stream passes it"
		}
		d = append(d, s)
		for _, pr := range n.r.Cache.Buffers[i].Residual {
			d = append(d, "  with "+pr.Text)
		}
	}
	return d
}

func typeList(c *Component) string {
	return strings.Join(c.TypeNames, " | ")
}

// validate: ReCEP does closure collection, selection, the window and
// negation itself, each negation and closure in exactly one part.
func (r *ReCEP) validate(p *Plan) error {
	c, f, v := &r.Cache, &r.Filter, &r.Verify
	if len(c.Buffers) != len(p.Components) {
		return fmt.Errorf("the EventCache has %d buffers for %d components", len(c.Buffers), len(p.Components))
	}
	for i, b := range c.Buffers {
		if b.Comp != i {
			return fmt.Errorf("the EventCache's buffer %d is component %d's", i, b.Comp)
		}
		if err := predsCompiled("the EventCache", b.Filters, b.Residual); err != nil {
			return err
		}
	}
	switch {
	case c.HasWindow != p.HasWindow || c.Window != p.Window || f.HasWindow != p.HasWindow || f.Window != p.Window:
		return fmt.Errorf("the EventCache's or QueryFilter's window is not the query's (it %s)", windowText(p))
	case c.Partition != nil && !slices.Contains(p.Equivs, c.Partition):
		return fmt.Errorf("the EventCache is partitioned by %s, not an equivalence test of the query", c.Partition.Text)
	case !slices.Equal(f.Positives, p.Positives):
		return fmt.Errorf("the QueryFilter's positives %v are not %v", f.Positives, p.Positives)
	case (f.Checks != nil && len(f.Checks) != len(f.Positives)) || (f.Pre != nil && len(f.Pre) != len(f.Positives)):
		return fmt.Errorf("the QueryFilter's checks are not by positive")
	case !slices.Equal(v.Closures, p.Closures()):
		return fmt.Errorf("the AttributeVerify's closures %v are not %v", v.Closures, p.Closures())
	}
	negs := slices.Sorted(slices.Values(append(slices.Clone(f.Narrowed), v.Negations...)))
	if !slices.Equal(negs, p.Negations()) {
		return fmt.Errorf("the negations %v are not each narrowed or verified once (narrowed %v, verified %v)", p.Negations(), f.Narrowed, v.Negations)
	}
	if err := predsCompiled("the QueryFilter", append(f.Checks, f.Pre...)...); err != nil {
		return err
	}
	if err := predsCompiled("the AttributeVerify", v.Preds); err != nil {
		return err
	}
	for _, s := range p.Stages {
		switch s.(type) {
		case *ClosureOp, *Selection, *Window, *Negation:
			return fmt.Errorf("ReCEP does %s itself, yet the plan has a %s stage", s.Name(), s.Name())
		}
	}
	return nil
}
