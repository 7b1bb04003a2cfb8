package planner

import (
	"fmt"
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

func (*RunScan) op()          {}
func (*RunScan) Name() string { return "RunScan" }

// buildRuns lays out a strategy plan: RunScan, negation, transformation.
// Each selection conjunct goes to the latest state it mentions (docs/STRATEGIES.md, Where each condition is checked).
func (c *compiler) buildRuns() {
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
				c.errorf(pr.Node, "per-element predicate of %s reads %s, a component after the closure; under a selection strategy it is checked when each element is taken, before %s is bound", comp.Var, p.Components[v].Var, p.Components[v].Var)
			}
		}
	}
	for _, pr := range p.Ops[0].(*Selection).Preds {
		st := scan.States[0] // a conjunct with no variable is checked on S1
		if len(pr.Vars) > 0 {
			st = stateOf[pr.Vars[len(pr.Vars)-1]]
		}
		switch {
		case p.Components[st.Comp].Kind == Single, c.readsFirstOnly(pr.Node, st.Comp):
			st.Begin = append(st.Begin, pr)
		default:
			st.End = append(st.End, pr)
		}
	}
	ops := []Op{scan}
	if ng := p.Negations(); len(ng) > 0 {
		ops = append(ops, &Negation{Comps: ng})
	}
	p.Ops = append(ops, &Transformation{Columns: p.Columns})
}

// readsFirstOnly reports whether e reads closure comp only as comp[1].x,
// so that it can be checked when the first element is taken.
func (c *compiler) readsFirstOnly(e ast.Expr, comp int) bool {
	ok := true
	is := func(id *ast.Ident) bool { i, found := c.vars[id.Name]; return found && i == comp }
	ast.Inspect(e, func(x ast.Expr) bool {
		switch x := x.(type) {
		case *ast.AttrRef:
			if is(x.Var) && (x.Index == nil || x.Index.Kind != ast.IndexConst || x.Index.Offset != 1) {
				ok = false
			}
		case *ast.LenRef:
			ok = ok && !is(x.Var)
		case *ast.ListRef:
			ok = ok && !is(x.Var)
		case *ast.VarRef:
			ok = ok && !is(x.Var)
		case *ast.Equivalence:
			ok = false // nested: over the whole match, checked when it is complete
		}
		return ok
	})
	return ok
}

// runDetails is EXPLAIN's text for a RunScan: the strategy, and where each
// conjunct is checked.
func (p *Plan) runDetails(op *RunScan) []string {
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
