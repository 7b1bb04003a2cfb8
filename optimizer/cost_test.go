package optimizer_test

import (
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/optimizer"
	"github.com/sase-cep/sase/planner"
)

// TestAutoChoosesByCost checks auto's plan family on the bench workloads:
// AIS for the long pattern, whose search exec bounds by the earliest full
// chain as ReCEP's is, on a loaded stream and on a live one (pattern
// only); ReCEP where a selective predicate between the first and the last
// positive filters the first's buffer before its search while AIS checks
// it only at the end of each suffix (7899 matches in 300K events: recep
// 37 ms, ais 207 ms), and where AIS checks predicates by the evaluator
// and ReCEP on float columns (the ReCEP paper's Exp. 1); AIS where the
// searches are alike; AIS for a
// strategy, which ReCEP does not run.
func TestAutoChoosesByCost(t *testing.T) {
	uniform := bench.Stocks(20_000, 0)()
	walk := bench.Stocks(20_000, 55)()
	live := &event.Stream{Name: "live", Schema: uniform.Schema, Live: true}
	w2 := "PATTERN SEQ(stock a, stock b, stock c) WHERE [symbol] AND a.price > 500 AND b.price > a.price AND c.price > b.price WITHIN 120"
	for _, c := range []struct {
		name   string
		stream *event.Stream
		query  string
		recep  bool
		basis  string // the note's reason, "" for no note
	}{
		{"long on 1K", bench.Stocks(1000, 0)(), bench.LongSeq(30, 200), false, "stream statistics: 200 events per window"},
		{"long on 20K", uniform, bench.LongSeq(30, 200), false, "stream statistics: 200 events per window"},
		{"long live", live, bench.LongSeq(30, 200), false, "pattern only"},
		{"recep exp1", uniform, "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WHERE a.price > 50 AND a.price > 1.1 * b.price AND b.price < 0.9 * c.price WITHIN 120", true, "stream statistics: 120 events per window"},
		{"first to last", uniform, "PATTERN SEQ(stock1 a, stock2 b, stock3 c, stock4 d) WHERE a.price > d.price + 95 WITHIN 120", true, "stream statistics: 120 events per window"},
		{"W1", uniform, bench.W1, false, "stream statistics: 120 events per window"},
		{"W1 live", live, bench.W1, false, "pattern only"},
		{"W2", walk, w2, false, "stream statistics: 120 events per window"},
		{"fig8", bench.Partitioned(3000, 100, 0)(), "PATTERN SEQ(A a, B b, C c) WHERE [a1] WITHIN 10000", false, "stream statistics: 3000 events per window"},
		{"fig10", bench.Partitioned(3000, 100, 20)(), "PATTERN SEQ(A a, B b, C c) WHERE [a1] AND [a2] WITHIN 10000", false, "stream statistics: 3000 events per window"},
		{"strategy", walk, strings.Replace(w2, "WHERE", "WHERE skip-till-next-match AND", 1), false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := &ast.Source{Name: "<query>", Text: c.query}
			q, err := grammar.ParseQuery(src)
			if err != nil {
				t.Fatal(err)
			}
			p, err := planner.Compile(q, src, c.stream)
			if err != nil {
				t.Fatal(err)
			}
			if p, err = optimizer.Optimize(p, optimizer.Auto); err != nil {
				t.Fatal(err)
			}
			if _, isReCEP := p.Source.(*planner.ReCEP); isReCEP != c.recep {
				t.Errorf("source %T, want ReCEP %v", p.Source, c.recep)
			}
			chosen := "auto chose ais: "
			if c.recep {
				chosen = "auto chose recep: "
			}
			switch {
			case c.basis == "" && len(p.Notes) > 0:
				t.Errorf("notes %q, want none", p.Notes)
			case c.basis != "" && (len(p.Notes) != 1 || !strings.HasPrefix(p.Notes[0], chosen) || !strings.Contains(p.Notes[0], "("+c.basis)):
				t.Errorf("notes %q, want one starting %q, based on %q", p.Notes, chosen, c.basis)
			}
		})
	}
}

// BenchmarkOptimizeRules optimizes the rules of sase bench rules on 1M
// stock events, as a rulebook of thousands compiles them: the estimate
// samples the stream once a rule.
func BenchmarkOptimizeRules(b *testing.B) {
	stream := bench.Stocks(1_000_000, 0)()
	texts := bench.RulesAbove(100, 90)
	plans := make([]*planner.Plan, len(texts))
	for b.Loop() {
		b.StopTimer()
		for i, text := range texts {
			src := &ast.Source{Name: "<query>", Text: text}
			q, err := grammar.ParseQuery(src)
			if err != nil {
				b.Fatal(err)
			}
			if plans[i], err = planner.Compile(q, src, stream); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		for _, p := range plans {
			if _, err := optimizer.Optimize(p, optimizer.Auto); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/rule")
}
