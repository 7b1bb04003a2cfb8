package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sase-cep/sase/ast"
)

// The ReCEP plan (Qiu et al., "event caching, query filtering, attribute
// verification"): EventCache keeps one ordered buffer per pattern element,
// QueryFilter searches candidate sequences recursively over timestamp
// ranges of those buffers, AttributeVerify checks what the buffers and the
// ranges could not. The optimizer's recep rule builds it from the basic plan.

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

func (*EventCache) op()      {}
func (*QueryFilter) op()     {}
func (*AttributeVerify) op() {}

func (*EventCache) Name() string      { return "EventCache" }
func (*QueryFilter) Name() string     { return "QueryFilter" }
func (*AttributeVerify) Name() string { return "AttributeVerify" }

// ConstantPred reports whether pr reads only the current event of one
// component and constants, and which component: for a positive or negated
// v, attributes v.x; for a closure c, attributes c[i].x. Such a predicate
// can filter events before any sequence exists.
func (p *Plan) ConstantPred(pr *Pred) (int, bool) {
	if len(pr.Vars) != 1 || pr.Node == nil {
		return -1, false
	}
	comp := p.Components[pr.Vars[0]]
	ok := true
	ast.Inspect(pr.Node, func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.AttrRef:
			if comp.Kind == Closure {
				ok = ok && e.Index != nil && e.Index.Kind == ast.IndexI && e.Index.Offset == 0
			} else {
				ok = ok && e.Index == nil
			}
		case *ast.LenRef, *ast.ListRef, *ast.VarRef, *ast.Equivalence, *ast.Strategy:
			ok = false
		}
		return ok
	})
	return comp.Index, ok
}

// recepDetails prints the ReCEP operators for EXPLAIN.
func (p *Plan) recepDetails(op Op) []string {
	var d []string
	switch op := op.(type) {
	case *EventCache:
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
	case *QueryFilter:
		last := p.Components[p.Last()].Var
		d = append(d, "trigger: each event entering the buffer of "+last)
		if part := p.Ops[0].(*EventCache).Partition; part != nil {
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
				for _, pr := range p.recepBuffer(c.Index).Residual {
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
	case *AttributeVerify:
		for _, i := range op.Closures {
			c := p.Components[i]
			d = append(d, fmt.Sprintf("%s: at least %d in %s", p.compText(i), c.K, p.interval(c)))
			for _, pr := range p.recepBuffer(i).Residual {
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
			for _, pr := range p.recepBuffer(i).Residual {
				d = append(d, "  with "+pr.Text)
			}
		}
	}
	return d
}

func typeList(c *Component) string {
	return strings.Join(c.TypeNames, " | ")
}

// recepBuffer returns a component's buffer in the plan's EventCache.
func (p *Plan) recepBuffer(comp int) *Buffer {
	return &p.Ops[0].(*EventCache).Buffers[comp]
}
