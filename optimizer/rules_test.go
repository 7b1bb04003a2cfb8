package optimizer

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/planner"
	"github.com/sase-cep/sase/source"
)

// rulesStream has types A..D; sym and id are on every event (partitionable),
// note is missing on a C and an A event (not partitionable).
const rulesStream = "type,ts,price,sym,id,note\n" +
	"A,1,10,x,1,n\nB,2,20,x,1,n\nC,3,30,y,2,\nD,4,40,x,1,n\nA,5,50,y,2,\nB,6,60,z,3,n\nD,7,70,y,2,n\n"

func rulesPlan(t *testing.T, query string) *planner.Plan {
	t.Helper()
	stream, err := source.LoadCSV(strings.NewReader(rulesStream), "rules.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stream.Name = "rules"
	src := &ast.Source{Name: "<input>", Text: query}
	q, err := grammar.ParseQuery(src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := planner.Compile(q, src, stream)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("the basic plan of %s: %v", query, err)
	}
	return p
}

// TestRules applies each rule after the rules it builds on, checks what it
// did, and compares the plan with a golden tree in testdata/explain.
func TestRules(t *testing.T) {
	scan := func(p *planner.Plan) *planner.SeqScan {
		switch s := p.Source.(type) {
		case *planner.StackScan:
			return &s.SeqScan
		case *planner.AISScan:
			return &s.SeqScan
		}
		t.Fatalf("the source is a %T", p.Source)
		return nil
	}
	ais := func(p *planner.Plan) *planner.AISScan {
		s, ok := p.Source.(*planner.AISScan)
		if !ok {
			t.Fatalf("the source is a %T, not AIS", p.Source)
		}
		return s
	}
	selection := func(p *planner.Plan) *planner.Selection {
		s, _ := planner.StageOf[*planner.Selection](p)
		return s
	}
	for _, tc := range []struct {
		name   string
		before []Rule
		rule   Rule
		query  string
		check  func(p *planner.Plan) string // "" when the plan is as the rule promises
	}{
		{"push-predicates", nil, pushPredicates{},
			"PATTERN SEQ(A a, B b) WHERE a.price > 5 AND b.sym = 'x' AND a.price < b.price",
			func(p *planner.Plan) string {
				f := scan(p).Filters
				if len(f[0]) != 1 || len(f[1]) != 1 || len(selection(p).Preds) != 1 {
					return "want one filter per state and the correlation left in Selection"
				}
				return ""
			}},
		{"use-ais", nil, useAIS{}, "PATTERN SEQ(A a, B b)",
			func(p *planner.Plan) string {
				if _, ok := p.Source.(*planner.AISScan); !ok {
					return "SSC does not use AIS"
				}
				return ""
			}},
		{"push-checks", []Rule{useAIS{}}, pushChecks{},
			"PATTERN SEQ(A a, B b, D d) WHERE a.price < b.price AND b.price < d.price",
			func(p *planner.Plan) string {
				c := ais(p).Checks
				if len(c[0]) != 1 || len(c[1]) != 1 || selection(p) != nil {
					return "want a < b checked at a, b < d at b, and no Selection"
				}
				return ""
			}},
		{"equivalence-chains", nil, equivalenceChains{},
			"PATTERN SEQ(A a, !C c, B b) WHERE a.sym = b.sym AND c.id = a.id AND b.id = a.id",
			func(p *planner.Plan) string {
				if len(p.Equivs) != 1 || p.Equivs[0].Attr != "id" || len(p.Components[1].NegPreds) != 0 {
					return "want the id chain (through the negated c) as [id], and the sym conjunct kept"
				}
				return ""
			}},
		{"partition", []Rule{useAIS{}}, pushPartition{},
			"PATTERN SEQ(A a, B b) WHERE [sym] AND [id] AND [note]",
			func(p *planner.Plan) string {
				s := ais(p)
				if s.Partition == nil || len(selection(p).Equivs) != 2 {
					return "want one partition attribute and two tests left in Selection"
				}
				return ""
			}},
		{"multi-pais", []Rule{useAIS{}, pushPartition{}}, pushMoreEquivalences{multiPAIS},
			"PATTERN SEQ(A a, B b) WHERE [sym] AND [id] AND [note]",
			func(p *planner.Plan) string {
				if len(ais(p).Multi) != 1 {
					return "want one Multi-PAIS attribute (note is missing on an A event)"
				}
				return ""
			}},
		{"dynamic", []Rule{useAIS{}, pushPartition{}}, pushMoreEquivalences{multiDynamic},
			"PATTERN SEQ(A a, B b) WHERE [sym] AND [id] AND [note]",
			func(p *planner.Plan) string {
				if len(ais(p).Dynamic) != 1 || len(selection(p).Equivs) != 1 {
					return "want one dynamic filter and [note] left in Selection"
				}
				return ""
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := rulesPlan(t, tc.query)
			for _, r := range tc.before {
				r.Apply(p)
			}
			if !tc.rule.Apply(p) {
				t.Fatalf("%s did not fire", tc.rule.Name())
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("%s broke the plan: %v", tc.rule.Name(), err)
			}
			if msg := tc.check(p); msg != "" {
				t.Error(msg)
			}
			if tc.rule.Apply(p) {
				t.Errorf("%s fired twice", tc.rule.Name())
			}
			testkit.Golden(t, filepath.Join("..", "testdata", "explain", "rule-"+tc.name+".golden"), p.Explain(nil))
		})
	}
}

// TestRulesDoNotFire lists plans a rule must leave alone.
func TestRulesDoNotFire(t *testing.T) {
	for _, tc := range []struct {
		rule  Rule
		query string
	}{
		{pushPredicates{}, "PATTERN SEQ(A a, B b) WHERE a.price < b.price"},
		{pushChecks{}, "PATTERN SEQ(A a, B b) WHERE a.price < b.price"},                         // no AIS
		{equivalenceChains{}, "PATTERN SEQ(A a, B b) WHERE a.note = b.note"},                    // note can be missing
		{equivalenceChains{}, "PATTERN SEQ(A a, !C c, B b) WHERE a.sym = b.sym"},                // c not linked
		{equivalenceChains{}, "PATTERN SEQ(A a, B+ c[], D b) WHERE a.sym = b.sym WITHIN 5"},     // a closure
		{pushPartition{}, "PATTERN SEQ(A a, B b) WHERE [sym]"},                                  // no AIS
		{pushMoreEquivalences{multiDynamic}, "PATTERN SEQ(A a, B b) WHERE [sym] AND [id]"},      // no partition yet
		{pushWindow{}, "PATTERN SEQ(A a, B b)"},                                                 // no window
		{pushChecks{}, "PATTERN SEQ(A a, B+ c[], D b) WHERE avg(c[].price) < b.price WITHIN 5"}, // reads a closure
	} {
		p := rulesPlan(t, tc.query)
		if _, isChecks := tc.rule.(pushChecks); isChecks && strings.Contains(tc.query, "c[]") {
			useAIS{}.Apply(p)
		}
		if tc.rule.Apply(p) {
			t.Errorf("%s fired on %s", tc.rule.Name(), tc.query)
		}
	}
}

// limit stands for a stage no rule knows (it keeps Window's invariant:
// its bound is the query's window).
type limit struct{ *planner.Window }

func (limit) Name() string { return "Limit" }

// TestRulesKeepUnknownStages runs every engine on plans that end with a
// stage no rule knows: each rule rewrites around it and keeps it, and the
// recep rewrite, which would replace the stages, leaves the plan alone.
func TestRulesKeepUnknownStages(t *testing.T) {
	for _, query := range []string{
		"PATTERN SEQ(A a, !C c, B b) WHERE [sym] AND [id] AND a.price > 5 AND a.price < b.price WITHIN 5",
		"PATTERN SEQ(A a, B+ c[], D b) WHERE avg(c[].price) < b.price WITHIN 5",
	} {
		for _, e := range Engines {
			p := rulesPlan(t, query)
			extra := limit{&planner.Window{W: p.Window}}
			p.Stages = append(p.Stages, extra)
			p, err := Optimize(p, e)
			if err != nil {
				t.Fatalf("%s: %s: %v", e.Name, query, err)
			}
			if n := len(p.Stages); n == 0 || p.Stages[n-1] != planner.Stage(extra) {
				t.Errorf("%s: %s: the unknown stage is gone:\n%s", e.Name, query, p.Explain(nil))
			}
			if _, isReCEP := p.Source.(*planner.ReCEP); isReCEP {
				t.Errorf("%s: %s: rewritten into ReCEP around a stage it does not know", e.Name, query)
			}
		}
	}
}

// TestStrategyPlansStay checks that no rule of any engine rewrites a
// strategy plan: its RunScan is no operator a rule knows.
func TestStrategyPlansStay(t *testing.T) {
	for _, e := range Engines {
		p, err := Optimize(rulesPlan(t, "PATTERN SEQ(A a, !C c, B b) WHERE skip-till-any-match AND [sym] AND a.price < b.price WITHIN 5"), e)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.Source.(*planner.RunScan); !ok || len(p.Rules) != 0 || len(p.Stages) != 1 {
			t.Errorf("%s rewrote a strategy plan:\n%s", e.Name, p.Explain(nil))
		}
	}
}
