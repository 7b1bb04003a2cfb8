package planner

import (
	"fmt"
	"strings"
)

// Explain prints the plan as a tree, root (the output) first, each
// operator with its details below it. annotate, when not nil, adds text to
// an operator's line (EXPLAIN ANALYZE's counts); it gets the operator's
// index in Operators. The output is deterministic, for golden tests.
func (p *Plan) Explain(annotate func(op int) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Plan (engine %s)\n", p.Engine)
	ops := p.Operators()
	for depth := range ops {
		i := len(ops) - 1 - depth
		op := ops[i]
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
		for _, d := range op.Details(p) {
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
