package planner

import (
	"fmt"
	"slices"
	"strings"
)

// The operators of SASE's plans: two sources for sequence scan and
// construction (SSC), the stages after them, and the output. Each carries
// its EXPLAIN details and its invariants.

// SeqScan is what both SSC sources share: an NFA whose states 1..n are the
// positive singles, and construction of the sequences by a search back
// from each accepting event.
type SeqScan struct {
	Comps []int // the positive singles, the NFA's states 1..n
	// Window bounds the stacks and the search when pushed down
	// (WindowPushed); without it a Window stage checks each sequence.
	WindowPushed bool
	Window       int64
	// Filters[j] are the simple predicates of state j+1 (one variable and
	// constants), checked before an event enters the state.
	Filters [][]*Pred
}

// StackScan is SASE's basic SSC: a runtime stack of state instances with
// predecessor pointers, searched depth first from each accepting instance.
type StackScan struct{ SeqScan }

// AISScan is SSC over Active Instance Stacks: a stack per state whose
// instances point to the most recent instance of the previous stack (RIP),
// so construction walks RIP ranges.
type AISScan struct {
	SeqScan
	// Partition is the equivalence test pushed into SS (PAIS): one set of
	// stacks per value of the attribute. PartitionWhy says why it was chosen.
	Partition    *Equiv
	PartitionWhy string
	// Multi are further equivalence tests checked in SS by cross-attribute
	// transition filtering (Multi-PAIS); Dynamic are those checked during
	// SC's search (dynamic filtering).
	Multi   []*Equiv
	Dynamic []*Equiv
	// Checks[j] are predicates over several positive singles, checked
	// during construction as soon as state j+1, the earliest state they
	// read, is bound (construction binds the states from last to first).
	Checks [][]*Pred
}

// ClosureOp collects each closure's list between its neighbours.
type ClosureOp struct{ Comps []int }

// Selection keeps the sequences that satisfy every predicate.
type Selection struct {
	Preds  []*Pred
	Equivs []*Equiv // over the positive singles
}

// Window keeps the sequences whose first and last events are within W.
type Window struct{ W int64 }

// Negation rejects the sequences with a qualifying negated event in its
// interval.
type Negation struct{ Comps []int }

// Transformation turns each match into an output row; it is the plan's
// Output.
type Transformation struct{ Columns []Column }

func (*StackScan) Name() string      { return "SSC" }
func (*AISScan) Name() string        { return "SSC" }
func (*ClosureOp) Name() string      { return "Closure" }
func (*Selection) Name() string      { return "Selection" }
func (*Window) Name() string         { return "Window" }
func (*Negation) Name() string       { return "Negation" }
func (*Transformation) Name() string { return "Transformation" }

func (s *StackScan) Operators() []Operator { return []Operator{s} }
func (s *AISScan) Operators() []Operator   { return []Operator{s} }

// Bounded: the scan's state follows the window once it is pushed into it.
func (s *SeqScan) Bounded() (int64, bool) { return s.Window, s.WindowPushed }

func (s *StackScan) Details(p *Plan) []string {
	d := s.head(p, "runtime stack of state instances with predecessor pointers")
	return append(d, s.filters(p)...)
}

func (s *AISScan) Details(p *Plan) []string {
	d := s.head(p, "active instance stacks, one per state, with RIP pointers")
	if s.Partition != nil {
		d = append(d, "partition (PAIS): "+s.Partition.Text+", "+s.PartitionWhy)
	}
	for _, q := range s.Multi {
		d = append(d, "cross-attribute transition filter (Multi-PAIS): "+q.Text)
	}
	for _, q := range s.Dynamic {
		d = append(d, "dynamic filter during construction: "+q.Text)
	}
	d = append(d, s.filters(p)...)
	for j, preds := range s.Checks {
		for _, pr := range preds {
			d = append(d, "checked in construction once "+p.Components[s.Comps[j]].Var+" is bound: "+pr.Text)
		}
	}
	return d
}

func (s *SeqScan) head(p *Plan, stacks string) []string {
	d := []string{"sequence: SEQ(" + p.varsText(s.Comps) + ")", "stacks: " + stacks}
	if s.WindowPushed {
		d = append(d, fmt.Sprintf("window: %d (stacks pruned, search bounded)", s.Window))
	}
	return d
}

func (s *SeqScan) filters(p *Plan) []string {
	var d []string
	for j, preds := range s.Filters {
		for _, pr := range preds {
			d = append(d, "transition filter of "+p.Components[s.Comps[j]].Var+": "+pr.Text)
		}
	}
	return d
}

func (op *ClosureOp) Details(p *Plan) []string {
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
}

func (op *Selection) Details(*Plan) []string {
	var d []string
	for _, q := range op.Equivs {
		d = append(d, q.Text)
	}
	for _, pr := range op.Preds {
		d = append(d, pr.Text)
	}
	return d
}

func (op *Window) Details(p *Plan) []string {
	return []string{fmt.Sprintf("ts(%s) - ts(%s) <= %d", p.Components[p.Last()].Var, p.Components[p.First()].Var, op.W)}
}

func (op *Negation) Details(p *Plan) []string {
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
}

func (op *Transformation) Details(*Plan) []string {
	names := make([]string, len(op.Columns))
	for i, col := range op.Columns {
		names[i] = col.Name
	}
	return []string{"columns: " + strings.Join(names, ", ")}
}

// ---- invariants (Plan.Validate) ----

func (s *SeqScan) validate(p *Plan, name string) error {
	if !slices.Equal(s.Comps, p.Positives) {
		return fmt.Errorf("%s states %v are not the positive singles %v", name, s.Comps, p.Positives)
	}
	if s.Filters != nil && len(s.Filters) != len(s.Comps) {
		return fmt.Errorf("%s has filters for %d states, not %d", name, len(s.Filters), len(s.Comps))
	}
	if err := predsCompiled(name, s.Filters...); err != nil {
		return err
	}
	// Without a window in the scan, a Window stage applies the query's.
	_, staged := StageOf[*Window](p)
	switch {
	case s.WindowPushed && (!p.HasWindow || s.Window != p.Window):
		return fmt.Errorf("%s has window %d pushed, the query %s", name, s.Window, windowText(p))
	case s.WindowPushed && staged:
		return fmt.Errorf("%s has the window pushed and a Window stage too", name)
	case p.HasWindow && !s.WindowPushed && !staged:
		return fmt.Errorf("the query's window %d is neither in %s nor in a Window stage", p.Window, name)
	}
	// The scan binds the positive singles only: stages do the rest.
	if cl, ok := StageOf[*ClosureOp](p); len(p.Closures()) > 0 && (!ok || !slices.Equal(cl.Comps, p.Closures())) {
		return fmt.Errorf("the closures %v are not all collected by a Closure stage", p.Closures())
	}
	return negationsStaged(p)
}

// negationsStaged is the invariant of a source that leaves negation to a
// stage.
func negationsStaged(p *Plan) error {
	if ng, ok := StageOf[*Negation](p); len(p.Negations()) > 0 && (!ok || !slices.Equal(ng.Comps, p.Negations())) {
		return fmt.Errorf("the negations %v are not all checked by a Negation stage", p.Negations())
	}
	return nil
}

func (s *StackScan) validate(p *Plan) error { return s.SeqScan.validate(p, "SSC (runtime stack)") }

func (s *AISScan) validate(p *Plan) error {
	const name = "SSC (active instance stacks)"
	if err := s.SeqScan.validate(p, name); err != nil {
		return err
	}
	if s.Checks != nil && len(s.Checks) != len(s.Comps) {
		return fmt.Errorf("%s has checks for %d states, not %d", name, len(s.Checks), len(s.Comps))
	}
	if err := predsCompiled(name, s.Checks...); err != nil {
		return err
	}
	if s.Partition == nil && len(s.Multi)+len(s.Dynamic) > 0 {
		return fmt.Errorf("%s checks further equivalence tests without a partition", name)
	}
	seen := map[*Equiv]bool{}
	for _, q := range append(append([]*Equiv{s.Partition}, s.Multi...), s.Dynamic...) {
		switch {
		case q == nil:
		case !slices.Contains(p.Equivs, q):
			return fmt.Errorf("%s uses %s, not an equivalence test of the query", name, q.Text)
		case seen[q]:
			return fmt.Errorf("%s uses %s twice", name, q.Text)
		}
		seen[q] = true
	}
	return nil
}

func (op *ClosureOp) validate(p *Plan) error {
	return compsOfKind("the Closure stage", op.Comps, p, Closure)
}

func (op *Negation) validate(p *Plan) error {
	return compsOfKind("the Negation stage", op.Comps, p, Negated)
}

func compsOfKind(name string, comps []int, p *Plan, k CompKind) error {
	if len(comps) == 0 {
		return fmt.Errorf("%s has no component", name)
	}
	for _, i := range comps {
		if i < 0 || i >= len(p.Components) || p.Components[i].Kind != k {
			return fmt.Errorf("%s names component %d, which is not of its kind", name, i)
		}
	}
	return nil
}

func (op *Selection) validate(p *Plan) error {
	if len(op.Preds) == 0 && len(op.Equivs) == 0 {
		return fmt.Errorf("the Selection checks nothing")
	}
	for _, q := range op.Equivs {
		if !slices.Contains(p.Equivs, q) {
			return fmt.Errorf("the Selection checks %s, not an equivalence test of the query", q.Text)
		}
	}
	return predsCompiled("the Selection", op.Preds)
}

func (op *Window) validate(p *Plan) error {
	if !p.HasWindow || op.W != p.Window {
		return fmt.Errorf("the Window stage has %d, the query %s", op.W, windowText(p))
	}
	return nil
}

// validate checks that the output's columns are the query's and that each
// reads what its kind says.
func (op *Transformation) validate(p *Plan) error {
	if len(op.Columns) != len(p.Columns) {
		return fmt.Errorf("the Transformation has %d columns, the query %d", len(op.Columns), len(p.Columns))
	}
	names := map[string]bool{}
	for i, col := range op.Columns {
		q := p.Columns[i]
		if col.Name != q.Name || col.Kind != q.Kind || col.Comp != q.Comp {
			return fmt.Errorf("the Transformation's column %d is %s, the query's %s", i+1, col.Name, q.Name)
		}
		if names[col.Name] {
			return fmt.Errorf("two columns are named %s", col.Name)
		}
		names[col.Name] = true
		var want CompKind
		switch col.Kind {
		case ColValue:
			if col.Eval == nil {
				return fmt.Errorf("column %s has no evaluator", col.Name)
			}
			continue
		case ColEvent:
			want = Single
		case ColList:
			want = Closure
		}
		if col.Comp < 0 || col.Comp >= len(p.Components) || p.Components[col.Comp].Kind != want {
			return fmt.Errorf("column %s reads component %d, which is not of its kind", col.Name, col.Comp)
		}
	}
	return nil
}

func predsCompiled(name string, preds ...[]*Pred) error {
	for _, list := range preds {
		for _, pr := range list {
			if pr.Eval == nil {
				return fmt.Errorf("%s: predicate %s is not compiled", name, pr.Text)
			}
		}
	}
	return nil
}

func windowText(p *Plan) string {
	if !p.HasWindow {
		return "has no WITHIN"
	}
	return fmt.Sprintf("has WITHIN %d", p.Window)
}
