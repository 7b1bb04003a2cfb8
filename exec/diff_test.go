package exec_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/exec"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/planner"
)

var (
	diffSeed = flag.Uint64("diff.seed", 0, "replay one differential-test seed")
	diffFrom = flag.Uint64("diff.from", 1, "the first seed a random differential test draws (a long run goes on where the last one stopped)")
	diffTime = flag.Duration("diff.time", 0, "how long each random differential test runs (default 1s, 10s with -long)")
)

// diffBudget is how long TestDifferential and TestStrategyRandomCases
// each draw random cases (seeds 1, 2, ...): -diff.time, else 1 s, or 10 s
// with -long. At load 2, 1 s draws 34 and 202 cases, more seeds than 2 s
// drew (27 and 127) before a case loaded its stream and parsed its query
// once for all its runs.
func diffBudget() time.Duration {
	if *diffTime > 0 {
		return *diffTime
	}
	return time.Duration(testkit.Size(1, 10)) * time.Second
}

// TestDifferential runs random queries on random streams through every
// engine and compares the matches with the basic plan's, as multisets.
// Its streams hold the ends of int64 at times, and its queries arithmetic
// that may overflow (randquery.Overflows): see compareEngines.
func TestDifferential(t *testing.T) {
	ran, last := 0, uint64(0)
	var n tally
	for seed := range randomSeeds() {
		for _, c := range []conformanceCase{randomCase(seed), nestedCase(seed)} {
			n.add(compareEngines(t, seed, c))
		}
		ran, last = ran+1, seed
	}
	t.Logf("%d random cases (a flat and a nested one each, seeds to %d) agree on %s; %d runs split over workers, %d of them into several time segments; "+
		"runs stopped by an overflow: %d as basic's did, %d of the others in RETURN with basic's error, %d where basic's did not or the other way round",
		ran, last, strings.Join(sase.EngineNames(), ", "), n.split, n.segmented, n.bothStopped, n.returnStopped, n.oneStopped)
	if *diffSeed == 0 && n.segmented == 0 {
		t.Error("no run was cut into time segments")
	}
	// Seeds 1 to 30 hold both kinds (2 and 13 the first): a wrapped int
	// that every engine computes alike stops none.
	if *diffSeed == 0 && *diffFrom == 1 && ran >= 30 && (n.bothStopped == 0 || n.returnStopped == 0) {
		t.Errorf("seeds 1 to %d: no run stopped by an overflow in a condition as basic's did (%d) or in RETURN (%d)", last, n.bothStopped, n.returnStopped)
	}
}

// tally counts what compareEngines saw of a case's runs on the engines
// but basic: how many split over workers, how many of those into time
// segments; how many stopped with an overflow as basic did (the error
// basic's, when the conditions let both run and RETURN stopped them), and
// how many stopped where basic did not or the other way round.
type tally struct {
	split, segmented                       int
	bothStopped, returnStopped, oneStopped int
}

func (n *tally) add(m tally) {
	n.split, n.segmented = n.split+m.split, n.segmented+m.segmented
	n.bothStopped, n.returnStopped, n.oneStopped = n.bothStopped+m.bothStopped, n.returnStopped+m.returnStopped, n.oneStopped+m.oneStopped
}

// runtimeError says whether err is one a query's evaluation stopped on
// (an overflow, a division by zero).
func runtimeError(err error) bool {
	var rt *planner.RuntimeError
	return errors.As(err, &rt)
}

// randomSeeds yields the seeds of a random differential test: -diff.seed
// alone, else -diff.from (1), the next, ... until diffBudget has passed.
func randomSeeds() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		if *diffSeed != 0 {
			yield(*diffSeed)
			return
		}
		deadline := time.Now().Add(diffBudget())
		for seed := *diffFrom; time.Now().Before(deadline); seed++ {
			if !yield(seed) {
				return
			}
		}
	}
}

// replay is the command that runs test t again on seed alone.
func replay(t *testing.T, seed uint64) string {
	return fmt.Sprintf("go test ./exec -run '^%s$' -diff.seed %d", t.Name(), seed)
}

// compareEngines runs a case on every engine and compares the matches
// with basic's, then with workers (checkWorkers), and tallies the runs.
// The case's stream is loaded, and its query parsed, once for all its
// runs.
//
// A run may stop with an overflow error (LANGUAGE.md, Expressions): in a
// condition where the plan evaluates it, so two plans that evaluate
// their conditions on different candidates (the window or an
// equivalence test checked first) may stop on different ones, or one
// stop and one not; the matches of two runs that do not stop must be the
// same. RETURN reads the matches alone: two engines that agree on them
// stop there with the same error, or both go on.
func compareEngines(t *testing.T, seed uint64, c conformanceCase) (n tally) {
	t.Helper()
	stream, err := loadCase(c)
	if err != nil {
		t.Fatalf("seed %d: %v\nstream:\n%s", seed, err, c.StreamCSV)
	}
	parsed := randquery.Parse(c.Query)
	want, wantErr := parsed.Matches(context.Background(), stream, "basic")
	if wantErr != nil && !runtimeError(wantErr) {
		t.Fatalf("seed %d: basic: %v\nquery: %s\nstream:\n%s", seed, wantErr, c.Query, c.StreamCSV)
	}
	wantReturn := returnError(t, parsed, stream, "basic", wantErr)
	for _, engine := range sase.EngineNames() {
		if engine == "basic" {
			continue
		}
		cq, err := parsed.Checked(stream, engine)
		if err != nil {
			t.Fatalf("seed %d: %s: %v\nquery: %s", seed, engine, err, c.Query)
		}
		one, err := randquery.Run(context.Background(), cq, stream.All()) // one worker's matches, in its order
		switch {
		case err != nil && !runtimeError(err):
			t.Fatalf("seed %d: %s: %v\nquery: %s", seed, engine, err, c.Query)
		case err != nil && wantErr != nil:
			n.bothStopped++
		case err != nil || wantErr != nil:
			n.oneStopped++
		default:
			if got := slices.Sorted(slices.Values(one)); !slices.Equal(got, want) {
				t.Fatalf("seed %d (replay: %s): %s differs from basic\nquery: %s\nstream:\n%s\n%s: %d %v\nbasic: %d %v",
					seed, replay(t, seed), engine, c.Query, c.StreamCSV, engine, len(one), one, len(want), want)
			}
			if got := returnError(t, parsed, stream, engine, nil); got != wantReturn {
				t.Fatalf("seed %d (replay: %s): %s's RETURN differs from basic's\nquery: %s\nstream:\n%s\n%s: %s\nbasic: %s",
					seed, replay(t, seed), engine, c.Query, c.StreamCSV, engine, got, wantReturn)
			} else if got != "" {
				n.returnStopped++
			}
		}
		s, g := checkWorkers(t, seed, c, cq, stream, engine, one, err)
		n.split, n.segmented = n.split+s, n.segmented+g
	}
	return n
}

// returnError runs the query with its RETURN on engine and returns the
// error it stopped with ("" if none), when the run without RETURN did
// not stop (stopped nil).
func returnError(t *testing.T, parsed *randquery.Parsed, stream *event.Stream, engine string, stopped error) string {
	t.Helper()
	if stopped != nil {
		return ""
	}
	cq, err := parsed.Compile(stream, engine, true)
	if err == nil {
		_, err = cq.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true })
	}
	if err == nil {
		return ""
	}
	if !runtimeError(err) {
		t.Fatalf("%s with RETURN: %v", engine, err)
	}
	return err.Error()
}

// checkWorkers runs the case's query, compiled by the caller on its
// stream for engine without RETURN, with 2, 3 and 7 workers and requires
// want, one worker's matches (randquery.Run), in the same order; it
// returns how many of the runs split, and how many of those into several
// time segments. A run split by time cuts the small stream into segments
// of a few items (by seed), most shorter than the window, so that it has
// many cuts. When one worker stopped with an overflow (wantErr), or a
// split run does, the other may not: a split run evaluates its
// conditions on other candidates (a partition's alone, say), as another
// plan does (compareEngines).
func checkWorkers(t *testing.T, seed uint64, c conformanceCase, cq *sase.Query, stream *event.Stream, engine string, want []string, wantErr error) (split, segmented int) {
	t.Helper()
	defer exec.SetSegments([]int{1, 2, 3, 5, 8, 40}[seed%6], 0)()
	for _, workers := range []int{2, 3, 7} {
		got, sp, err := runCompiled(cq, stream, workers)
		switch {
		case err != nil && !runtimeError(err):
			t.Fatalf("seed %d: %s, %d workers: %v\nquery: %s", seed, engine, workers, err, c.Query)
		case err != nil || wantErr != nil:
			continue
		}
		if sp.Workers > 1 {
			split++
		}
		if sp.Segments > 1 {
			segmented++
		}
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d (replay: %s): %s with %d workers (%s) differs from one worker\nquery: %s\nstream:\n%s\n%d workers: %d %v\n1 worker:  %d %v",
				seed, replay(t, seed), engine, workers, sp, c.Query, c.StreamCSV, workers, len(got), got, len(want), want)
		}
		checkCount(t, c, cq, stream, engine, workers, len(want))
	}
	return split, segmented
}

// randomCase is the shared generator's case for a seed: a small stream and
// a valid query using every feature of the language; one stream in five is
// long enough for window pruning.
func randomCase(seed uint64) conformanceCase { return randomCaseOf(seed, true) }

// nestedCase is the generator's v3 pattern (LANGUAGE.md §9) for a seed
// on a small stream.
func nestedCase(seed uint64) conformanceCase {
	c := randquery.Generate(rand.New(rand.NewPCG(seed, 0x9e57)), randquery.Nested(), randquery.Overflows())
	return conformanceCase{Name: fmt.Sprintf("nested-%d", seed), StreamCSV: c.StreamCSV, Query: c.Query}
}

// randomCaseOf is randomCase, with long streams only when allowed: the
// strategy properties run skip-till-any-match, whose matches with a
// closure grow as 2^n (docs/STRATEGIES.md, When to use each), so they keep streams short.
func randomCaseOf(seed uint64, long bool) conformanceCase {
	opts := []randquery.Option{randquery.Overflows()}
	if long {
		opts = append(opts, randquery.Long())
	}
	c := randquery.Generate(rand.New(rand.NewPCG(seed, 0x5a5e)), opts...)
	return conformanceCase{Name: fmt.Sprintf("diff-%d", seed), StreamCSV: c.StreamCSV, Query: c.Query}
}

// TestPruningKeepsAnswers runs queries whose negation and closures read
// back in time on a stream long enough for the window to prune the event
// store, and compares with the basic plan, which never prunes.
func TestPruningKeepsAnswers(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 7))
	var csv strings.Builder
	csv.WriteString("type,ts,price,sym\n")
	ts := 0
	for i := 0; i < 1500; i++ {
		ts += r.IntN(3)
		fmt.Fprintf(&csv, "%s,%d,%d,%s\n", []string{"A", "B", "C", "D"}[r.IntN(4)], ts, r.IntN(20), []string{"x", "y"}[r.IntN(2)])
	}
	stream, err := loadCase(conformanceCase{Name: "pruning", StreamCSV: csv.String()}) // one load for every run
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"PATTERN SEQ(!C n, A a, B b) WHERE n.price > a.price WITHIN 6",
		"PATTERN SEQ(A a, B b, !C n) WHERE [sym] WITHIN 6",
		"PATTERN SEQ(C+ c[], A a, B b) WHERE c[i].price > c[i-1].price WITHIN 5",
		"PATTERN SEQ(A a, B b, C^2 c[]) WHERE avg(c[].price) > 8 WITHIN 5",
		"PATTERN SEQ(A a, D+ d[], B b) WHERE [sym] WITHIN 4",
	} {
		want, err := randquery.Matches(context.Background(), stream, q, "basic")
		if err != nil {
			t.Fatal(err)
		}
		for _, engine := range sase.EngineNames() {
			got, err := randquery.Matches(context.Background(), stream, q, engine)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s gives %d matches, basic %d", q, engine, len(got), len(want))
			}
		}
	}
}

// TestRuntimeError checks that a division by zero stops the query with an
// error that points at the operator.
func TestRuntimeError(t *testing.T) {
	c := conformanceCase{Name: "div", StreamCSV: "type,ts,x\nA,1,0\nB,2,5\n", Query: "PATTERN SEQ(A a, B b) WHERE b.x / a.x > 1"}
	for _, engine := range sase.EngineNames() {
		_, err := runCase(c, engine)
		want := "<query>:1:33: division by zero at run time in b.x / a.x\n    PATTERN SEQ(A a, B b) WHERE b.x / a.x > 1\n                                    ^"
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want\n%s", engine, err, want)
		}
	}
}

// TestPartitionWildcards runs PAIS on a stream where some events lack the
// partition attribute: they belong to every partition, and a sequence made
// of them alone is found once.
func TestPartitionWildcards(t *testing.T) {
	c := conformanceCase{Name: "wild", Query: "PATTERN SEQ(A a, B b, C c) WHERE [sym] WITHIN 10",
		StreamCSV: "type,ts,sym\nA,1,x\nA,2,\nB,3,\nB,4,y\nC,5,x\nC,6,\nC,7,y\nA,8,\nB,9,z\nC,10,\n"}
	want := []string{
		`{"a":0,"b":2,"c":4}`, `{"a":0,"b":2,"c":5}`, `{"a":1,"b":2,"c":4}`, `{"a":1,"b":2,"c":5}`,
		`{"a":1,"b":2,"c":6}`, `{"a":1,"b":3,"c":5}`, `{"a":1,"b":3,"c":6}`, `{"a":1,"b":3,"c":9}`, `{"a":1,"b":8,"c":9}`,
		`{"a":0,"b":2,"c":9}`, `{"a":1,"b":2,"c":9}`, `{"a":7,"b":8,"c":9}`,
	}
	slices.Sort(want)
	for _, engine := range sase.EngineNames() {
		got, err := runCase(c, engine)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %v\nwant %v", engine, got, want)
		}
	}
}

// TestDynamicFilterConstant: a further equivalence test with a constant,
// checked by dynamic filtering, holds for the accepting event too (found
// by TestDifferential, seed 90).
func TestDynamicFilterConstant(t *testing.T) {
	c := conformanceCase{Name: "dyn", Query: "PATTERN SEQ(B b) WHERE [id] AND [sym = 'y']",
		StreamCSV: "type,ts,sym,id\nB,1,y,1\nB,2,x,1\nB,3,y,2\nA,4,y,2\n"}
	want := []string{`{"b":0}`, `{"b":2}`}
	for _, engine := range sase.EngineNames() {
		if got, err := runCase(c, engine); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: got %v, %v; want %v", engine, got, err, want)
		}
	}
}
