package exec_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/source"
)

// TestStrategyConformance runs every case of strategies.jsonl (docs/STRATEGIES.md) on
// every engine: a strategy plan is run by the run scan whatever the engine.
// The v1 cases that expected "not supported yet" for a strategy were moved
// out of cases.jsonl; they are here as strat-was-*.
func TestStrategyConformance(t *testing.T) {
	t.Parallel()
	for _, c := range readCases(t, "../testdata/conformance/strategies.jsonl") {
		prepare := prepareOnce(c)
		for _, engine := range engines {
			t.Run(engine+"/"+c.Name, func(t *testing.T) {
				t.Parallel() // a case shares nothing with another
				checkCase(t, c, prepare, engine)
			})
		}
	}
}

// matchesOn runs query on stream and returns its matches as canonical
// strings (variables to seq numbers), sorted.
func matchesOn(t *testing.T, stream *event.Stream, query, engine string) []string {
	t.Helper()
	got, err := randquery.Matches(context.Background(), stream, query, engine)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return got
}

// within reports whether the multiset sub is contained in sup (both sorted).
func within(sub, sup []string) bool {
	j := 0
	for _, x := range sub {
		for j < len(sup) && sup[j] < x {
			j++
		}
		if j == len(sup) || sup[j] != x {
			return false
		}
		j++
	}
	return true
}

// randomStrategyQuery is a random query with %s for the strategy word, and
// whether its pattern ends with a closure.
func randomStrategyQuery(rng *rand.Rand) (string, bool) {
	preds := []string{"a.price > 500", "b.price > a.price", "b.volume < 500", "a.volume > 300"}
	elem := []string{"", " AND k[i].price > k[i-1].price", " AND k[i].price > min(k[..i-1].price)", " AND k[i].volume < 700"}
	patterns := []struct {
		pat      string
		trailing bool
	}{
		{"SEQ(stock a, stock b, stock c)", false},
		{"SEQ(stock a, stock b)", false},
		{"SEQ(stock+ k[], stock a, stock b)", false},
		{"SEQ(stock a, stock^2 k[], stock b)", false},
		{"SEQ(stock a, stock b, !stock n, stock c)", false},
		{"SEQ(stock a, stock b, stock+ k[])", true},
	}
	pt := patterns[rng.IntN(len(patterns))]
	where := "%s"
	if rng.IntN(2) == 0 {
		where += " AND [symbol]"
	}
	for _, p := range preds {
		if rng.IntN(3) == 0 {
			where += " AND " + p
		}
	}
	if strings.Contains(pt.pat, "k[]") {
		where += elem[rng.IntN(len(elem))]
		if rng.IntN(3) == 0 {
			where += " AND k[1].price %% 3 = 0"
		}
		if rng.IntN(4) == 0 && !pt.trailing { // a list that grows past it fails: no prefix relation
			where += " AND count(k[]) <= 3"
		}
	}
	if strings.Contains(pt.pat, "!stock n") && rng.IntN(2) == 0 {
		where += " AND n.price > b.price"
	}
	return fmt.Sprintf("PATTERN %s WHERE %s WITHIN %d", pt.pat, where, 3+rng.IntN(8)), pt.trailing
}

// TestStrategyProperties checks on random stock streams (docs/STRATEGIES.md):
// strict-contiguity ⊆ partition-contiguity ⊆ skip-till-next-match ⊆
// skip-till-any-match as multisets for patterns not ending with a closure;
// for a trailing closure, each stricter match's list is a prefix of a
// looser one's for the same start; and without a closure,
// skip-till-any-match gives the default mode's matches. It runs 100
// streams, 300 with -long.
func TestStrategyProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 6))
	chain := []string{"strict-contiguity", "partition-contiguity", "skip-till-next-match", "skip-till-any-match"}
	for iter := range testkit.Size(100, 300) {
		cfg := source.StockConfig{Events: 120, Symbols: 1 + rng.IntN(3), MaxPrice: 1000, MaxVolume: 1000, Seed: int64(iter), IncreaseProbability: 40 + rng.IntN(40)}
		stream := source.GenerateStocks("stocks", cfg)
		query, trailing := randomStrategyQuery(rng)
		results := make([][]string, len(chain))
		for i, s := range chain {
			results[i] = matchesOn(t, stream, fmt.Sprintf(query, s), "auto")
		}
		for i := 0; i+1 < len(chain); i++ {
			ok := within(results[i], results[i+1])
			if trailing {
				ok = prefixesOf(results[i], results[i+1])
			}
			if !ok {
				t.Fatalf("%s: %s gives matches that %s does not\n%s: %v\n%s: %v", query, chain[i], chain[i+1], chain[i], results[i], chain[i+1], results[i+1])
			}
		}
		if !strings.Contains(query, "k[]") {
			v1 := matchesOn(t, stream, fmt.Sprintf(query, "1 = 1"), "auto")
			if !slices.Equal(v1, results[3]) {
				t.Fatalf("%s: skip-till-any-match differs from the default mode\nany: %v\nv1:  %v", query, results[3], v1)
			}
		}
	}
}

// prefixesOf reports whether every match of sub has a match in sup with
// the same single events and a list that extends its list k.
func prefixesOf(sub, sup []string) bool {
	type match struct {
		A, B int64
		K    []int64
	}
	parse := func(s string) match {
		var m match
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			panic(err)
		}
		return m
	}
	lists := map[[2]int64][][]int64{}
	for _, y := range sup {
		m := parse(y)
		lists[[2]int64{m.A, m.B}] = append(lists[[2]int64{m.A, m.B}], m.K)
	}
	for _, x := range sub {
		m := parse(x)
		if !slices.ContainsFunc(lists[[2]int64{m.A, m.B}], func(k []int64) bool {
			return len(m.K) <= len(k) && slices.Equal(m.K, k[:len(m.K)])
		}) {
			return false
		}
	}
	return true
}

// withStrategy adds a strategy word to a query as a WHERE conjunct.
func withStrategy(query, strategy string) string {
	if i := strings.Index(query, " WHERE "); i >= 0 {
		return query[:i] + " WHERE " + strategy + " AND " + query[i+len(" WHERE "):]
	}
	for _, next := range []string{" WITHIN ", " RETURN "} {
		if i := strings.Index(query, next); i >= 0 {
			return query[:i] + " WHERE " + strategy + query[i:]
		}
	}
	return query + " WHERE " + strategy
}

// TestStrategyRandomCases runs the differential test's random queries
// (negation anywhere, ANY, closures, several equivalence tests, missing
// attributes) under each strategy and checks (docs/STRATEGIES.md): every strategy's
// matches are within skip-till-any-match's, the chain strict ⊆ partition
// ⊆ next holds when the pattern does not end with a closure, and without
// a closure skip-till-any-match gives the default mode's matches. A run
// that stops with an overflow error (randquery.Overflows) must stop so on
// more workers too; the strategies' runs evaluate their conditions on
// different candidates, so the relations are checked between runs that
// did not stop.
func TestStrategyRandomCases(t *testing.T) {
	chain := []string{"strict-contiguity", "partition-contiguity", "skip-till-next-match", "skip-till-any-match"}
	ran, last, stopped := 0, uint64(0), 0
	for seed := range randomSeeds() {
		last = seed
		c := randomCaseOf(seed, false)
		stream, err := loadCase(c) // one load for the case's runs
		if err != nil {
			t.Fatalf("seed %d: %v\nstream:\n%s", seed, err, c.StreamCSV)
		}
		results := make([][]string, len(chain))
		compiled := make([]*sase.Query, len(chain)) // once for all its runs
		ordered := make([][]string, len(chain))     // one worker's matches, in its order
		errs := make([]error, len(chain))           // the overflow a run stopped with
		for i, s := range chain {
			if compiled[i], err = randquery.Parse(withStrategy(c.Query, s)).Checked(stream, "auto"); err != nil {
				break
			}
			if ordered[i], err = randquery.Run(context.Background(), compiled[i], stream.All()); runtimeError(err) {
				errs[i], err = err, nil
				stopped++
			} else if err != nil {
				break
			}
			results[i] = slices.Sorted(slices.Values(ordered[i]))
		}
		if err != nil {
			if strings.Contains(err.Error(), "a component after the closure") {
				continue // SD19: a per-element predicate reads a later component
			}
			t.Fatalf("seed %d: %v\nquery: %s", seed, err, c.Query)
		}
		ran++
		for i, s := range chain {
			sc := c
			sc.Query = withStrategy(c.Query, s)
			checkWorkers(t, seed, sc, compiled[i], stream, "auto", ordered[i], errs[i])
		}
		pattern, _, _ := strings.Cut(c.Query, " W")
		pattern, _, _ = strings.Cut(pattern, " RETURN ")
		trailing := strings.HasSuffix(pattern, "[])")
		for i := range 3 {
			if errs[i] != nil || errs[3] != nil || i < 2 && errs[i+1] != nil {
				continue
			}
			if !within(results[i], results[3]) {
				t.Fatalf("seed %d: %s gives matches skip-till-any-match does not\nquery: %s\nstream:\n%s\n%v\n%v", seed, chain[i], c.Query, c.StreamCSV, results[i], results[3])
			}
			if i < 2 && !trailing && !within(results[i], results[i+1]) {
				t.Fatalf("seed %d: %s gives matches %s does not\nquery: %s\nstream:\n%s\n%v\n%v", seed, chain[i], chain[i+1], c.Query, c.StreamCSV, results[i], results[i+1])
			}
		}
		if !strings.Contains(c.Query, "[]") && errs[3] == nil {
			v1, err := randquery.Matches(context.Background(), stream, c.Query, "auto")
			if runtimeError(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(v1, results[3]) {
				t.Fatalf("seed %d: skip-till-any-match differs from the default mode\nquery: %s\nstream:\n%s\nany: %v\nv1:  %v", seed, c.Query, c.StreamCSV, results[3], v1)
			}
		}
	}
	t.Logf("%d random cases, seeds to %d; %d strategies' runs stopped with an overflow", ran, last, stopped)
	if *diffSeed == 0 && *diffFrom == 1 && ran >= 100 && stopped == 0 {
		t.Errorf("seeds 1 to %d: no run stopped by an overflow", last) // a wrapped int stops none
	}
}

// TestStrategyPruning runs strategy queries whose negation and any-match
// closures read the event store on a stream long enough for the window to
// prune it: skip-till-next-match's matches, which never read the store,
// must still be among skip-till-any-match's, and without a closure
// skip-till-any-match must equal the basic plan's default mode.
func TestStrategyPruning(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var csv strings.Builder
	csv.WriteString("type,ts,price,sym\n")
	ts := 0
	for range testkit.Size(5000, 20000) { // the windows prune every few events
		ts += r.IntN(3)
		fmt.Fprintf(&csv, "%s,%d,%d,%s\n", []string{"A", "B", "C", "D"}[r.IntN(4)], ts, r.IntN(20), []string{"x", "y"}[r.IntN(2)])
	}
	for _, q := range []string{
		"PATTERN SEQ(C+ c[], A a, B b) WHERE %s AND c[i].price > c[i-1].price WITHIN 5",
		"PATTERN SEQ(A a, D+ d[], B b, !C n) WHERE %s AND [sym] WITHIN 4",
		"PATTERN SEQ(A a, B b, C^2 c[]) WHERE %s AND avg(c[].price) > 8 WITHIN 5",
		"PATTERN SEQ(!C n, A a, B b) WHERE %s AND n.price > a.price WITHIN 6",
		"PATTERN SEQ(A a, B b, !C n) WHERE %s AND [sym] WITHIN 6",
	} {
		t.Run(q, func(t *testing.T) {
			t.Parallel() // the queries share only the stream's text
			strategyPruning(t, q, csv.String())
		})
	}
}

// strategyPruning is TestStrategyPruning's query q (%s for the strategy)
// on csv.
func strategyPruning(t *testing.T, q, csv string) {
	c := conformanceCase{Name: "pruning", StreamCSV: csv}
	results := map[string][]string{}
	for _, s := range []string{"skip-till-next-match", "skip-till-any-match"} {
		c.Query = fmt.Sprintf(q, s)
		got, err := runCase(c, "auto")
		if err != nil {
			t.Fatal(err)
		}
		results[s] = got
	}
	if !within(results["skip-till-next-match"], results["skip-till-any-match"]) {
		t.Errorf("%s: skip-till-next-match gives matches skip-till-any-match does not", q)
	}
	if !strings.Contains(q, "[]") {
		c.Query = fmt.Sprintf(q, "1 = 1")
		v1, err := runCase(c, "basic")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(v1, results["skip-till-any-match"]) {
			t.Errorf("%s: skip-till-any-match gives %d matches, the default mode %d", q, len(results["skip-till-any-match"]), len(v1))
		}
	}
}

// TestRunScanTiming checks when matches leave the run scan: a trailing
// closure's match once the stream passes ts(first) + W, even when no event
// of its partition comes (docs/STRATEGIES.md, Window, partitions, negation), and the scan's counts for EXPLAIN
// ANALYZE: every event in, every complete match out.
func TestRunScanTiming(t *testing.T) {
	csv := "type,ts,k\nA,1,1\nB,2,1\nB,3,1\nA,4,2\nC,6,2\nC,7,2\nC,20,2\nC,30,2\n"
	stream, err := source.LoadCSV(strings.NewReader(csv), "timing.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, strategy := range []string{"skip-till-next-match", "partition-contiguity", "skip-till-any-match"} {
		query := "PATTERN SEQ(A a, B+ b[]) WHERE " + strategy + " AND [k] WITHIN 5"
		q, err := bench.Compile(stream, query, "auto")
		if err != nil {
			t.Fatal(err)
		}
		var read int64
		var at []int64 // events read when each match came out
		events := func(yield func(*event.Event) bool) {
			for _, e := range stream.Events {
				read++
				if !yield(e) {
					return
				}
			}
		}
		stats, err := q.Run(context.Background(), events, func([]sase.Cell) bool {
			at = append(at, read)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		// a=#0 with b=[#1,#2] (any-match: also [#1] and [#2]) is due once
		// ts passes 1+5: at #6 (ts 7), though #6 is of partition 2.
		for _, n := range at {
			if n != 6 {
				t.Errorf("%s: a match came out after %d events, want 6 (%v)", strategy, n, at)
			}
		}
		if len(at) == 0 || stats.Operators[0].In != int64(len(stream.Events)) || stats.Operators[0].Out != int64(len(at)) {
			t.Errorf("%s: %d matches, run scan in=%d out=%d", strategy, len(at), stats.Operators[0].In, stats.Operators[0].Out)
		}
	}
}
