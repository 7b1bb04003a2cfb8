package planner

import (
	"fmt"
	"strings"
)

// Explain prints the plan as a tree, root (Transformation) first, each
// operator with its details below it. annotate, when not nil, adds text to
// an operator's line (EXPLAIN ANALYZE's counts); it gets the operator's
// index in Ops. The output is deterministic, for golden tests.
func (p *Plan) Explain(annotate func(op int) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Plan (engine %s)\n", p.Engine)
	for depth := 0; depth < len(p.Ops); depth++ {
		i := len(p.Ops) - 1 - depth
		op := p.Ops[i]
		indent := strings.Repeat("   ", max(depth-1, 0))
		branch := ""
		if depth > 0 {
			branch = "└─ "
		}
		line := indent + branch + op.Name()
		if annotate != nil {
			if a := annotate(i); a != "" {
				line += "  " + a
			}
		}
		b.WriteString(line + "\n")
		detailIndent := indent
		if depth > 0 {
			detailIndent += "   "
		}
		bar := "│  "
		if i == 0 {
			bar = "   "
		}
		for _, d := range p.details(op) {
			b.WriteString(strings.TrimRight(detailIndent+bar+d, " ") + "\n")
		}
	}
	if len(p.Rules) > 0 {
		fmt.Fprintf(&b, "Rules: %s\n", strings.Join(p.Rules, ", "))
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	return b.String()
}

func (p *Plan) compText(i int) string { return p.Components[i].Node.String() }

func (p *Plan) varsText(idx []int) string {
	parts := make([]string, len(idx))
	for k, i := range idx {
		parts[k] = p.compText(i)
	}
	return strings.Join(parts, ", ")
}

func (p *Plan) details(op Op) []string {
	switch op := op.(type) {
	case *RunScan:
		return p.runDetails(op)
	case *SSC:
		d := []string{"sequence: SEQ(" + p.varsText(op.Comps) + ")"}
		if op.AIS {
			d = append(d, "stacks: active instance stacks, one per state, with RIP pointers")
		} else {
			d = append(d, "stacks: runtime stack of state instances with predecessor pointers")
		}
		if op.WindowPushed {
			d = append(d, fmt.Sprintf("window: %d (stacks pruned, search bounded)", op.Window))
		}
		if op.Partition != nil {
			d = append(d, "partition (PAIS): "+op.Partition.Text+", "+op.PartitionWhy)
		}
		for _, q := range op.Multi {
			d = append(d, "cross-attribute transition filter (Multi-PAIS): "+q.Text)
		}
		for _, q := range op.Dynamic {
			d = append(d, "dynamic filter during construction: "+q.Text)
		}
		for j, preds := range op.Filters {
			for _, pr := range preds {
				d = append(d, "transition filter of "+p.Components[op.Comps[j]].Var+": "+pr.Text)
			}
		}
		for j, preds := range op.Checks {
			for _, pr := range preds {
				d = append(d, "checked in construction once "+p.Components[op.Comps[j]].Var+" is bound: "+pr.Text)
			}
		}
		return d
	case *ClosureOp:
		var d []string
		for _, i := range op.Comps {
			c := p.Components[i]
			d = append(d, fmt.Sprintf("%s: at least %d in %s", p.compText(i), c.K, p.interval(c)))
			for _, pr := range c.ElemPreds {
				d = append(d, "  per element: "+pr.Text)
			}
			for _, q := range p.Equivs {
				d = append(d, "  per element: "+q.Text)
			}
		}
		return d
	case *Selection:
		var d []string
		for _, q := range op.Equivs {
			d = append(d, q.Text)
		}
		for _, pr := range op.Preds {
			d = append(d, pr.Text)
		}
		return d
	case *Window:
		return []string{fmt.Sprintf("ts(%s) - ts(%s) <= %d", p.Components[p.Last()].Var, p.Components[p.First()].Var, op.W)}
	case *Negation:
		var d []string
		for _, i := range op.Comps {
			c := p.Components[i]
			s := fmt.Sprintf("%s in %s", p.compText(i), p.interval(c))
			if c.Next < 0 {
				s += ", emitted once the stream passes it"
			}
			d = append(d, s)
			for _, q := range p.Equivs {
				d = append(d, "  with "+q.Text)
			}
			for _, pr := range c.NegPreds {
				d = append(d, "  with "+pr.Text)
			}
		}
		return d
	case *EventCache, *QueryFilter, *AttributeVerify:
		return p.recepDetails(op)
	case *Transformation:
		names := make([]string, len(op.Columns))
		for i, col := range op.Columns {
			names[i] = col.Name
		}
		return []string{"columns: " + strings.Join(names, ", ")}
	}
	return nil
}

// interval describes where a closure's elements or a negated component's
// events lie (docs/LANGUAGE.md, What a match is).
func (p *Plan) interval(c *Component) string {
	ts := func(i int) string { return "ts(" + p.Components[i].Var + ")" }
	first, last := ts(p.First()), ts(p.Last())
	w := fmt.Sprint(p.Window)
	switch {
	case c.Prev >= 0 && c.Next >= 0:
		return fmt.Sprintf("(%s, %s)", ts(c.Prev), ts(c.Next))
	case c.Prev < 0 && p.HasWindow:
		return fmt.Sprintf("[%s - %s, %s)", last, w, ts(c.Next))
	case c.Prev < 0:
		return fmt.Sprintf("(-inf, %s)", ts(c.Next))
	case p.HasWindow:
		return fmt.Sprintf("(%s, %s + %s]", ts(c.Prev), first, w)
	}
	return fmt.Sprintf("(%s, +inf)", ts(c.Prev))
}
