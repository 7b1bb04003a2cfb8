// Package optimizer rewrites SASE's basic plan by an ordered list of rules,
// each a small file with its own test, run to a fixpoint.
package optimizer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sase-cep/sase/planner"
)

// Rule is one rewrite. Apply changes the plan in place and reports whether
// it changed anything.
type Rule interface {
	Name() string
	Apply(p *planner.Plan) bool
}

// Rules is the ordered rule list of the auto engine when it keeps AIS
// (chooseByCost).
var Rules = append(paisRules(), pushMoreEquivalences{multiAuto})

func aisRules() []Rule { return []Rule{pushWindow{}, pushPredicates{}, useAIS{}, pushChecks{}} }

func recepRules() []Rule { return []Rule{recepRule{}, recepChecks{}} }

func paisRules() []Rule {
	return append(aisRules(), equivalenceChains{}, pushPartition{})
}

// Engine is a plan shape that `SET engine` may name: a rule list, run to a
// fixpoint over SASE's basic plan.
type Engine struct {
	Name  string
	Doc   string // one line: what the plan does
	Rules []Rule
	// Requires names what a query needs for the engine's technique to
	// apply; without it the engine runs a simpler shape and says so.
	Requires string
	// Bounded reports whether the engine keeps its state bounded by the
	// window, which a live stream needs.
	Bounded bool
	// Choose, when set, picks the rules for the plan instead of Rules, and
	// says why in a note; est is the basic plan's estimate, computed once
	// a compile (it samples the stream), or nil for an algebra plan.
	Choose func(p *planner.Plan, est *estimate) (rules []Rule, note string)
}

// The engines; Auto is the default.
var (
	Basic     = &Engine{Name: "basic", Doc: "SASE's basic plan: SSC with a runtime stack, then selection, window, negation, transformation", Rules: nil}
	NFA       = &Engine{Name: "nfa", Doc: "the basic plan with the window pushed into SSC", Rules: []Rule{pushWindow{}}, Bounded: true}
	AIS       = &Engine{Name: "ais", Doc: "active instance stacks with simple predicates, window and correlation predicates pushed into SS/SC", Rules: aisRules(), Bounded: true}
	PAIS      = &Engine{Name: "pais", Doc: "ais with one equivalence test partitioning the stacks", Rules: paisRules(), Requires: "an equivalence test", Bounded: true}
	MultiPAIS = &Engine{Name: "multipais", Doc: "pais with further equivalence tests as cross-attribute transition filters", Rules: append(paisRules(), pushMoreEquivalences{multiPAIS}), Requires: "two equivalence tests", Bounded: true}
	Dynamic   = &Engine{Name: "dynamic", Doc: "pais with further equivalence tests checked during construction", Rules: append(paisRules(), pushMoreEquivalences{multiDynamic}), Requires: "two equivalence tests", Bounded: true}
	ReCEP     = &Engine{Name: "recep", Doc: "ReCEP: ordered per-element buffers, recursive search, attribute verification", Rules: recepRules(), Bounded: true}
	Auto      = &Engine{Name: "auto", Doc: "ais, pais and dynamic filtering, or recep where its estimated search is much smaller", Rules: Rules, Bounded: true, Choose: chooseByCost}
)

// Engines lists every engine, sorted by name.
var Engines = sortedEngines(Basic, NFA, AIS, PAIS, MultiPAIS, Dynamic, ReCEP, Auto)

func sortedEngines(es ...*Engine) []*Engine {
	slices.SortFunc(es, func(a, b *Engine) int { return strings.Compare(a.Name, b.Name) })
	return es
}

// EngineNames lists the engines' names, sorted.
func EngineNames() []string {
	names := make([]string, len(Engines))
	for i, e := range Engines {
		names[i] = e.Name
	}
	return names
}

// LookupEngine finds an engine by name, case-insensitively; "" is Auto.
func LookupEngine(name string) (*Engine, error) {
	if name == "" {
		return Auto, nil
	}
	for _, e := range Engines {
		if strings.EqualFold(e.Name, name) {
			return e, nil
		}
	}
	return nil, fmt.Errorf("unknown engine %q (engines: %s)", name, strings.Join(EngineNames(), ", "))
}

// maxPasses caps the fixpoint loop; a rule that keeps firing is a bug.
const maxPasses = 16

// Optimize rewrites p for the engine: basic keeps SASE's basic plan, the
// others apply their rules until none fires. Each rule rewrites the
// operators it knows and leaves the others alone, so a strategy plan (a
// RunScan) stays as it is on every engine (docs/STRATEGIES.md). The plan
// must be valid before and after every rule that fires (Plan.Validate).
// p.Rules records the rules that fired.
func Optimize(p *planner.Plan, e *Engine) (*planner.Plan, error) {
	p.Engine = e.Name
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("optimizer: the basic plan is invalid: %w", err)
	}
	a, v3 := p.Source.(*planner.Algebra)
	if v3 && a.Union != nil && e != Basic {
		return union(p, a.Union, e)
	}
	var est *estimate
	if !v3 {
		est = newEstimate(p) // of the basic plan, which the rules rewrite
	}
	if v3 && a.Root.FlatAnd() && e != Basic {
		a.Join = true
		p.Rules = append(p.Rules, "join-flat-and")
	}
	rules := e.Rules
	if e.Choose != nil {
		var note string
		if rules, note = e.Choose(p, est); note != "" {
			p.Notes = append(p.Notes, note)
		}
	}
	for pass := 0; len(rules) > 0; pass++ {
		if pass == maxPasses {
			return nil, fmt.Errorf("optimizer: rules still firing after %d passes (%s)", maxPasses, strings.Join(p.Rules, ", "))
		}
		changed := false
		for _, r := range rules {
			if !r.Apply(p) {
				continue
			}
			p.Rules = append(p.Rules, r.Name())
			changed = true
			if err := p.Validate(); err != nil {
				return nil, fmt.Errorf("optimizer: rule %s: %w", r.Name(), err)
			}
		}
		if !changed {
			break
		}
	}
	p.Notes = append(p.Notes, shapeNotes(p, e)...)
	decideSplit(p, e, est)
	return p, nil
}

// shapeNotes says when a forced engine's technique does not apply.
func shapeNotes(p *planner.Plan, e *Engine) []string {
	ais, ok := p.Source.(*planner.AISScan)
	if !ok {
		return nil // a run scan or ReCEP: no stacks to describe
	}
	switch {
	case (e == PAIS || e == MultiPAIS || e == Dynamic) && ais.Partition == nil:
		return []string{fmt.Sprintf("engine %s: the query has no equivalence test that SS can partition on (one whose attribute every event of the positive types has); running AIS without partitions", e.Name)}
	case e == MultiPAIS && len(ais.Multi) == 0, e == Dynamic && len(ais.Dynamic) == 0:
		return []string{fmt.Sprintf("engine %s: the query has only one equivalence test; running PAIS", e.Name)}
	}
	return nil
}

// union runs a v3 pattern as its flat plans, each optimized for e as a
// flat query would be; the basic engine keeps the Algebra source, the
// reference the union is tested against.
func union(p *planner.Plan, u *planner.Union, e *Engine) (*planner.Plan, error) {
	for _, br := range u.Branches {
		if _, err := Optimize(br.Plan, e); err != nil {
			return nil, err
		}
	}
	p.Source = u
	p.Notes = append(p.Notes, fmt.Sprintf("the v3 pattern runs as the union of %d flat plans on %s", len(u.Branches), e.Name))
	decideSplit(p, e, nil)
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("optimizer: the union plan is invalid: %w", err)
	}
	return p, nil
}
