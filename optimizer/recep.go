package optimizer

import (
	"slices"

	"github.com/sase-cep/sase/planner"
)

// recepRule rewrites the basic plan into ReCEP's three operators (Qiu et
// al.): EventCache, one ordered buffer per pattern element with the
// element's constant predicates and the equivalence tests' constant forms
// as filters, partitioned by the first other equivalence test;
// QueryFilter, the recursive search over timestamp ranges, which narrows
// by the negations whose predicates read only what is bound by then;
// AttributeVerify, everything else. It replaces the stack scan and the
// stages it knows (closure collection, selection, window, negation); a plan
// with a stage it does not know keeps its shape.
type recepRule struct{}

func (recepRule) Name() string { return "rewrite-into-recep" }

func (recepRule) Apply(p *planner.Plan) bool {
	preds, ok := recepShape(p)
	if !ok {
		return false
	}
	r := &planner.ReCEP{
		Cache:  planner.EventCache{Buffers: make([]planner.Buffer, len(p.Components)), HasWindow: p.HasWindow, Window: p.Window},
		Filter: planner.QueryFilter{Positives: p.Positives, HasWindow: p.HasWindow, Window: p.Window},
		Verify: planner.AttributeVerify{Closures: p.Closures()},
	}
	cache, filter, verify := &r.Cache, &r.Filter, &r.Verify
	for _, q := range p.Equivs {
		if q.Const != nil {
			continue
		}
		verify.Equivs = append(verify.Equivs, q)
		if cache.Partition == nil {
			cache.Partition = q
		}
	}
	for _, c := range p.Components {
		buf := &cache.Buffers[c.Index]
		buf.Comp = c.Index
		for _, q := range p.Equivs {
			if q.Const != nil {
				buf.Consts = append(buf.Consts, q)
			}
		}
		for _, pr := range append(c.ElemPreds, c.NegPreds...) {
			if _, ok := p.ConstantPred(pr); ok {
				buf.Filters = append(buf.Filters, pr)
			} else {
				buf.Residual = append(buf.Residual, pr)
			}
		}
	}
	for _, pr := range preds {
		if ci, ok := p.ConstantPred(pr); ok && p.Components[ci].Kind == planner.Single {
			cache.Buffers[ci].Filters = append(cache.Buffers[ci].Filters, pr)
		} else {
			verify.Preds = append(verify.Preds, pr)
		}
	}
	for _, ci := range p.Negations() {
		if narrowable(p, p.Components[ci], cache.Buffers[ci].Residual) {
			filter.Narrowed = append(filter.Narrowed, ci)
		} else {
			verify.Negations = append(verify.Negations, ci)
		}
	}
	p.Source, p.Stages = r, nil
	return true
}

// recepShape reports whether ReCEP can run the plan, a stack scan with
// only the stages it knows, and returns the predicates it places.
func recepShape(p *planner.Plan) (preds []*planner.Pred, ok bool) {
	stack, ok := p.Source.(*planner.StackScan)
	if !ok {
		return nil, false
	}
	preds = slices.Concat(stack.Filters...) // none in the recep engine, whose first rule this is
	for _, s := range p.Stages {
		switch s := s.(type) {
		case *planner.Selection:
			preds = append(preds, s.Preds...)
		case *planner.ClosureOp, *planner.Window, *planner.Negation:
		default:
			return nil, false
		}
	}
	return preds, true
}

// narrowable reports whether negation c can cut the range of the positive
// after it during the search: it is not at the end, and its predicates
// read only positives bound by then (those before it and the last one,
// which triggers the search).
func narrowable(p *planner.Plan, c *planner.Component, preds []*planner.Pred) bool {
	if c.Next < 0 {
		return false
	}
	for _, pr := range preds {
		for _, v := range pr.Vars {
			vc := p.Components[v]
			bound := v == c.Index || v == p.Last() || (vc.Kind == planner.Single && v < c.Index)
			if !bound {
				return false
			}
		}
	}
	return true
}
