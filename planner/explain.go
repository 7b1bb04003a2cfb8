package planner

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
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

// Analyzed is what a run measured of one operator, for EXPLAIN ANALYZE in
// JSON.
type Analyzed struct {
	In, Out  int64
	Time     time.Duration
	Counters map[string]int64 // the engine's own: instances, max_buffer, ...
}

// ExplainJSON prints the plan as one JSON object (docs/LANGUAGE.md has its
// schema): the operators in execution order, each fed by the one before
// it. analyzed, when not nil, adds each operator's counts.
func (p *Plan) ExplainJSON(analyzed func(op int) Analyzed) string {
	type counts struct {
		In       int64            `json:"in"`
		Out      int64            `json:"out"`
		TimeNS   int64            `json:"time_ns"`
		Counters map[string]int64 `json:"counters,omitempty"`
	}
	type operator struct {
		ID      int      `json:"id"`
		Name    string   `json:"name"`
		Details []string `json:"details"`
		Input   *int     `json:"input"`
		Analyze *counts  `json:"analyze,omitempty"`
	}
	type split struct {
		Kind            string   `json:"kind"`
		By              string   `json:"by,omitempty"`
		Overlap         int64    `json:"overlap,omitempty"`
		Why             string   `json:"why,omitempty"`
		Keys            []string `json:"keys"`
		MatchesPerEvent *float64 `json:"matches_per_event"`
		RowsOfEvents    bool     `json:"rows_of_events"`
		EventsPerKey    *float64 `json:"events_per_key"`
	}
	out := struct {
		Engine    string     `json:"engine"`
		Operators []operator `json:"operators"`
		Rules     []string   `json:"rules"`
		Notes     []string   `json:"notes"`
		Split     split      `json:"split"`
	}{Engine: p.Engine, Rules: nonNil(p.Rules), Notes: nonNil(p.Notes)}
	sp := &p.Split
	out.Split = split{Kind: sp.KindName(), Overlap: sp.Overlap, Why: sp.Why, Keys: nonNil(sp.Keys), RowsOfEvents: sp.RowsOfEvents}
	if sp.Kind == SplitKey {
		out.Split.By = sp.By.Text
	}
	// Three digits, not the estimates' noise; null when unknown.
	estimate := func(x float64) *float64 {
		if x < 0 {
			return nil
		}
		x, _ = strconv.ParseFloat(num(x), 64)
		return &x
	}
	out.Split.MatchesPerEvent, out.Split.EventsPerKey = estimate(sp.MatchesPerEvent), estimate(sp.EventsPerKey)
	for i, op := range p.Operators() {
		o := operator{ID: i, Name: op.Name(), Details: nonNil(op.Details(p))}
		if i > 0 {
			o.Input = &[]int{i - 1}[0]
		}
		if analyzed != nil {
			a := analyzed(i)
			o.Analyze = &counts{In: a.In, Out: a.Out, TimeNS: a.Time.Nanoseconds(), Counters: a.Counters}
		}
		out.Operators = append(out.Operators, o)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a < in a condition stays readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic(fmt.Sprintf("planner: EXPLAIN json: %v", err)) // strings and numbers only
	}
	return b.String()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ExplainDOT prints the plan as a Graphviz digraph: one box per operator
// with its details, an edge from each to the operator it feeds, the output
// on top as in the text tree. annotate is as for Explain.
func (p *Plan) ExplainDOT(annotate func(op int) string) string {
	var b strings.Builder
	title := DotEscape("Plan (engine " + p.Engine + ")")
	for _, r := range p.Rules {
		title += `\lRule: ` + DotEscape(r)
	}
	for _, n := range p.Notes {
		title += `\lNote: ` + DotEscape(n)
	}
	fmt.Fprintf(&b, "digraph plan {\n  rankdir=BT;\n  labelloc=t;\n  labeljust=l;\n  label=\"%s\\l\";\n", title)
	b.WriteString("  node [shape=box, fontname=\"monospace\"];\n")
	ops := p.Operators()
	for i, op := range ops {
		label := DotEscape(op.Name())
		if annotate != nil {
			if a := annotate(i); a != "" {
				label += "  " + DotEscape(a)
			}
		}
		label += `\l`
		for _, d := range op.Details(p) {
			label += DotEscape("  "+d) + `\l`
		}
		fmt.Fprintf(&b, "  op%d [label=\"%s\"];\n", i, label)
	}
	for i := 1; i < len(ops); i++ {
		fmt.Fprintf(&b, "  op%d -> op%d;\n", i-1, i)
	}
	b.WriteString("}\n")
	return b.String()
}

// DotEscape quotes text for a DOT string: a '\' or '"' escaped, a line
// break as a left-justified one.
func DotEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\l`).Replace(s)
}
