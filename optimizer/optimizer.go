// Package optimizer rewrites SASE's basic plan by an ordered list of rules,
// each a small file with its own test, run to a fixpoint.
package optimizer

import (
	"fmt"
	"maps"
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

// Rules is the ordered rule list of the auto engine.
var Rules = append(paisRules(), pushMoreEquivalences{multiAuto})

func aisRules() []Rule { return []Rule{pushWindow{}, pushPredicates{}, useAIS{}, pushChecks{}} }

func paisRules() []Rule {
	return append(aisRules(), equivalenceChains{}, pushPartition{})
}

// engineRules gives each engine that `SET engine` may name its rules;
// basic is SASE's basic plan, auto the optimizer's choice, the others
// force one plan shape where it applies.
var engineRules = map[string][]Rule{
	"basic":     nil,
	"nfa":       {pushWindow{}}, // the basic plan's runtime stack, bounded by the window
	"ais":       aisRules(),
	"pais":      paisRules(),
	"multipais": append(paisRules(), pushMoreEquivalences{multiPAIS}),
	"dynamic":   append(paisRules(), pushMoreEquivalences{multiDynamic}),
	"auto":      Rules,
	"recep":     {recepRule{}, recepChecks{}},
}

// Engines lists the engine names, sorted.
var Engines = slices.Sorted(maps.Keys(engineRules))

// maxPasses caps the fixpoint loop; a rule that keeps firing is a bug.
const maxPasses = 16

// Optimize rewrites p for the engine: basic keeps SASE's basic plan, auto
// applies every rule until none fires. p.Rules records the rules that fired.
func Optimize(p *planner.Plan, engine string) (*planner.Plan, error) {
	name := strings.ToLower(engine)
	if name == "" {
		name = "auto"
	}
	rules, ok := engineRules[name]
	if !ok {
		return nil, fmt.Errorf("unknown engine %q (engines: %s)", engine, strings.Join(Engines, ", "))
	}
	p.Engine = name
	if p.Strategy != planner.NoStrategy {
		// The rules rewrite SSC; a strategy plan has a RunScan instead,
		// which every engine runs as it is (spec 4c).
		return p, nil
	}
	for pass := 0; len(rules) > 0; pass++ {
		if pass == maxPasses {
			return nil, fmt.Errorf("optimizer: rules still firing after %d passes (%s)", maxPasses, strings.Join(p.Rules, ", "))
		}
		changed := false
		for _, r := range rules {
			if r.Apply(p) {
				p.Rules = append(p.Rules, r.Name())
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	p.Notes = append(p.Notes, shapeNotes(p, name)...)
	return p, nil
}

// shapeNotes says when a forced engine's technique does not apply.
func shapeNotes(p *planner.Plan, engine string) []string {
	ssc, ok := p.Ops[0].(*planner.SSC)
	if !ok {
		return nil // recep: no SSC to describe
	}
	switch {
	case (engine == "pais" || engine == "multipais" || engine == "dynamic") && ssc.Partition == nil:
		return []string{fmt.Sprintf("engine %s: the query has no equivalence test that SS can partition on (one whose attribute every event of the positive types has); running AIS without partitions", engine)}
	case engine == "multipais" && len(ssc.Multi) == 0, engine == "dynamic" && len(ssc.Dynamic) == 0:
		return []string{fmt.Sprintf("engine %s: the query has only one equivalence test; running PAIS", engine)}
	}
	return nil
}
