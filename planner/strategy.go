package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sase-cep/sase/ast"
)

// Strategy is an event selection strategy (docs/STRATEGIES.md). NoStrategy is the
// default mode: a query that names none keeps docs/LANGUAGE.md's semantics exactly.
type Strategy int

const (
	NoStrategy Strategy = iota
	AnyMatch
	NextMatch
	PartitionContiguity
	StrictContiguity
)

var strategyNames = [...]string{"", "skip-till-any-match", "skip-till-next-match", "partition-contiguity", "strict-contiguity"}

func (s Strategy) String() string { return strategyNames[s] }

// strategy records the strategy a WHERE conjunct names: case-insensitive,
// with '-' or '_'; naming the same one twice is fine, two different ones
// are an error (docs/STRATEGIES.md, Naming a strategy).
func (c *compiler) strategy(s *ast.Strategy) {
	norm := strings.ToLower(strings.ReplaceAll(s.Name, "_", "-"))
	var st Strategy
	for i, name := range strategyNames {
		if i > 0 && name == norm {
			st = Strategy(i)
		}
	}
	p := c.plan
	switch {
	case st == NoStrategy:
		c.errorf(s, "unknown event selection strategy '%s' (strategies: %s)", s.Name, strings.Join(strategyNames[1:], ", "))
	case p.Strategy != NoStrategy && p.Strategy != st:
		c.errorf(s, "a query names one selection strategy, not two: %s and %s", p.Strategy, st)
	default:
		p.Strategy = st
	}
}

// RunScan evaluates a strategy query by runs (docs/STRATEGIES.md, Runs): it replaces SSC,
// closure collection, selection and window, and feeds complete matches to
// negation and transformation. Every engine runs strategy plans this way.
type RunScan struct {
	Strategy Strategy
	// States are S1..Sm, the positive singles and closures in pattern order.
	States []*RunState
	// Partition holds the top-level equivalence tests: a run's events
	// agree on them (an event lacking the attribute is in every partition).
	Partition []*Equiv
	HasWindow bool
	Window    int64
}

// RunState is one state of a run with the conjuncts checked there.
type RunState struct {
	Comp int // component index
	// Begin is checked when a single's event is selected, or when a
	// closure's first element is taken (conjuncts reading it as c[1] only).
	Begin []*Pred
	// Take are a closure's per-element predicates, checked on each element
	// against the elements taken before it.
	Take []*Pred
	// End is checked on a closure's whole list when it ends: at proceed,
	// or when a trailing closure's run finishes.
	End []*Pred
}

func (*RunScan) Name() string             { return "RunScan" }
func (s *RunScan) Operators() []Operator  { return []Operator{s} }
func (s *RunScan) Bounded() (int64, bool) { return s.Window, s.HasWindow }

// runScan places each selection conjunct of a strategy query at the
// latest state it mentions (docs/STRATEGIES.md,
// Where each condition is checked) and checks what a
// strategy rules out.
func (c *compiler) runScan() *RunScan {
	p := c.plan
	scan := &RunScan{Strategy: p.Strategy, Partition: p.Equivs, HasWindow: p.HasWindow, Window: p.Window}
	stateOf := make([]*RunState, len(p.Components))
	for _, comp := range p.Components {
		if comp.Kind == Negated {
			continue
		}
		st := &RunState{Comp: comp.Index}
		stateOf[comp.Index] = st
		scan.States = append(scan.States, st)
		if comp.Kind != Closure {
			continue
		}
		st.Take = comp.ElemPreds
		for _, pr := range comp.ElemPreds {
			// An element is taken before any later component is bound.
			if v := pr.Vars[len(pr.Vars)-1]; v > comp.Index {
				c.errorAt(pr.pos, "per-element predicate of %s reads %s, a component after the closure; under a selection strategy it is checked when each element is taken, before %s is bound", comp.Var, p.Components[v].Var, p.Components[v].Var)
			}
		}
	}
	for _, pr := range c.sel {
		st := scan.States[0] // a conjunct with no variable is checked on S1
		if len(pr.Vars) > 0 {
			st = stateOf[pr.Vars[len(pr.Vars)-1]]
		}
		switch {
		case p.Components[st.Comp].Kind == Single, readsFirstOnly(pr.Expr, st.Comp):
			st.Begin = append(st.Begin, pr)
		default:
			st.End = append(st.End, pr)
		}
	}
	return scan
}

// readsFirstOnly reports whether e reads closure comp only as comp[1].x,
// so that it can be checked when the first element is taken.
func readsFirstOnly(e Expr, comp int) bool {
	ok := true
	Inspect(e, func(x Expr) bool {
		switch x := x.(type) {
		case *Attr:
			if x.Comp == comp && (x.Index != ast.IndexConst || x.Offset != 1) {
				ok = false
			}
		case *Len:
			ok = ok && x.Comp != comp
		case *Aggregate:
			ok = ok && x.Comp != comp
		case *EquivTest:
			ok = false // nested: over the whole match, checked when it is complete
		}
		return ok
	})
	return ok
}

// validate: a run scan does closure collection, selection and the window
// itself; only negation may follow it.
func (s *RunScan) validate(p *Plan) error {
	var comps []int
	for _, st := range s.States {
		comps = append(comps, st.Comp)
	}
	var want []int
	for _, c := range p.Components {
		if c.Kind != Negated {
			want = append(want, c.Index)
		}
	}
	switch {
	case !slices.Equal(comps, want):
		return fmt.Errorf("the RunScan's states %v are not the positive components %v", comps, want)
	case s.HasWindow != p.HasWindow || s.Window != p.Window:
		return fmt.Errorf("the RunScan has window %v/%d, the query %s", s.HasWindow, s.Window, windowText(p))
	}
	for _, st := range s.States {
		if err := predsCompiled("the RunScan", st.Begin, st.Take, st.End); err != nil {
			return err
		}
	}
	for _, stage := range p.Stages {
		if _, ok := stage.(*Negation); !ok {
			return fmt.Errorf("a RunScan does %s itself", stage.Name())
		}
	}
	return negationsStaged(p)
}

// Details are the strategy, and where each conjunct is checked.
func (op *RunScan) Details(p *Plan) []string {
	d := []string{"strategy: " + op.Strategy.String() + " (runs, spec 4c; every engine runs strategy plans this way)"}
	switch op.Strategy {
	case AnyMatch:
		d = append(d, "runs: every run is copied on each event it can use; closure lists enumerated lazily at proceed or finish")
	case NextMatch:
		d = append(d, "runs: one per start event; irrelevant events are skipped")
	case PartitionContiguity:
		d = append(d, "runs: one per start event; an unusable event of the run's partition finishes it")
	case StrictContiguity:
		d = append(d, "runs: one per start event; any unusable event finishes it")
	}
	for _, q := range op.Partition {
		d = append(d, "partition: "+q.Text)
	}
	if op.HasWindow {
		d = append(d, fmt.Sprintf("window: every selected event within %d of the run's first", op.Window))
	}
	for j, st := range op.States {
		c := p.Components[st.Comp]
		if c.Kind == Single {
			d = append(d, fmt.Sprintf("S%d %s: select", j+1, p.compText(st.Comp)))
		} else {
			d = append(d, fmt.Sprintf("S%d %s: take at least %d", j+1, p.compText(st.Comp), c.K))
		}
		for _, pr := range st.Begin {
			d = append(d, "  begin: "+pr.Text)
		}
		for _, pr := range st.Take {
			d = append(d, "  take: "+pr.Text)
		}
		for _, pr := range st.End {
			d = append(d, "  end: "+pr.Text)
		}
		if c.Kind == Closure && j+1 < len(op.States) {
			d = append(d, fmt.Sprintf("  proceed: to S%d before take, once %s is closable", j+2, c.Var))
		}
	}
	return d
}
