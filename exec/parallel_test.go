package exec_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/exec"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/source"
)

// runCompiled runs a query, compiled once by the caller for several
// runs, on its stream with a number of workers and returns its matches
// (bindings, as randquery.Matches) in the order it emitted them, and how
// the run split: the same, in the same order, for any number of workers
// (docs/LANGUAGE.md, workers). Each run makes runners of its own and
// reads the plan only, as a split run's workers do at once.
func runCompiled(cq *sase.Query, stream *event.Stream, workers int) ([]string, runSplit, error) {
	split := cq.Split(workers, false)
	var out []string
	binding := randquery.Binder(cq.Columns())
	stats, err := cq.Run(context.Background(), stream.All(), func(row []sase.Cell) bool {
		out = append(out, binding(row))
		return true
	}, sase.WithWorkers(workers))
	return out, runSplit{split, stats.Segments}, err
}

// checkCount runs a case's query, compiled by the caller on its stream
// for engine, with a number of workers into a sink that only counts
// (Chunks without an encoder, which a split run's workers count without
// a call per row), and requires want matches: in the sink, the summary
// and the workers' shares.
func checkCount(t *testing.T, c conformanceCase, cq *sase.Query, stream *event.Stream, engine string, workers, want int) {
	t.Helper()
	n := 0
	count := &sase.Chunks{Put: func(_ [][]byte, rows int) bool { n += rows; return true }}
	stats, err := cq.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true }, sase.WithWorkers(workers), sase.WithChunks(count))
	if err != nil {
		t.Fatalf("%s, %s, %d workers, counted: %v", c.Query, engine, workers, err)
	}
	shares := int64(0)
	for _, w := range stats.Workers {
		shares += w.Matches
	}
	if n != want || stats.Matches != int64(want) || len(stats.Workers) > 0 && shares != int64(want) {
		t.Fatalf("%s, %s, %d workers, counted: %d matches (summary %d, workers' %d), want %d\nstream:\n%s", c.Query, engine, workers, n, stats.Matches, shares, want, c.StreamCSV)
	}
}

// runSplit is how a run split, and into how many time segments.
type runSplit struct {
	sase.Split
	Segments int
}

// TestWorkersOrder runs partitioned queries on streams where many events
// lack the attribute, so that one event completes matches in several
// partitions and time releases several partitions' matches at once, on
// every engine and strategy with 2, 3 and 7 workers: the same matches in
// the same order as one worker's run.
func TestWorkersOrder(t *testing.T) {
	t.Parallel()
	csv := symStream(rand.New(rand.NewPCG(11, 3)), 120, []string{"A", "B", "C", "D"}, []string{"x", "y", "z", "w", "", ""})
	queries := []string{
		"PATTERN SEQ(A a, B b, C c) WHERE [sym] WITHIN 6",
		"PATTERN SEQ(A a, B b, !C n) WHERE [sym] WITHIN 5",
		"PATTERN SEQ(!D n, A a, B b) WHERE [sym] AND b.price > a.price WITHIN 5",
		"PATTERN SEQ(A a, !D n, B b) WHERE [sym] WITHIN 5",
		"PATTERN SEQ(A a, B b, C+ c[]) WHERE [sym] WITHIN 4",
		// Under skip-till-any-match a run whose a lacks the attribute and
		// one keyed by it finish at one item (their windows end together)
		// with matches of one partition value.
		"PATTERN SEQ(A a, D+ d[]) WHERE [sym] WITHIN 4",
		"PATTERN SEQ(A a, C+ c[], B b) WHERE [sym] WITHIN 4",
		"PATTERN SEQ(C+ c[], A a, B b) WHERE [sym] AND c[i].price > c[i-1].price WITHIN 4",
		"PATTERN SEQ(ANY(A, B) a, D d) WHERE [sym] AND a.sym = d.sym WITHIN 5",
		"PATTERN SEQ(A a, B b) WHERE a.sym = b.sym AND a.price < b.price WITHIN 5",
	}
	strategies := []string{"", "skip-till-any-match", "skip-till-next-match", "partition-contiguity", "strict-contiguity"}
	var split atomic.Int64
	t.Run("queries", func(t *testing.T) {
		for _, q := range queries {
			t.Run(q, func(t *testing.T) {
				t.Parallel() // each query runs on its own
				stream, err := loadCase(conformanceCase{Name: "order", StreamCSV: csv})
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range strategies {
					c := conformanceCase{Name: "order", StreamCSV: csv, Query: q}
					if s != "" {
						c.Query = withStrategy(q, s)
					}
					parsed := randquery.Parse(c.Query) // once for every engine
					for _, engine := range engines {
						cq, err := parsed.Compile(stream, engine, false)
						if err != nil {
							t.Fatalf("%s, %s: %v", c.Query, engine, err)
						}
						want, _, err := runCompiled(cq, stream, 1)
						if err != nil {
							t.Fatalf("%s, %s: %v", c.Query, engine, err)
						}
						for _, workers := range []int{2, 3, 7} {
							got, sp, err := runCompiled(cq, stream, workers)
							if err != nil {
								t.Fatalf("%s, %s, %d workers: %v", c.Query, engine, workers, err)
							}
							if sp.Workers > 1 {
								split.Add(1)
							}
							if !slices.Equal(got, want) {
								t.Fatalf("%s, %s, %d workers (%s): got %d %v\nwant %d %v", c.Query, engine, workers, sp, len(got), got, len(want), want)
							}
							checkCount(t, c, cq, stream, engine, workers, len(want))
						}
					}
				}
			})
		}
	})
	if split.Load() == 0 {
		t.Fatal("no run split over workers")
	}
}

// symStream is a CSV stream of n events of the types, at times that step
// by 0 or 1, with a price of 0-9 and a sym of syms ("": none).
func symStream(rng *rand.Rand, n int, types, syms []string) string {
	var csv strings.Builder
	csv.WriteString("type,ts,price,sym\n")
	ts := 0
	for range n {
		ts += rng.IntN(2)
		fmt.Fprintf(&csv, "%s,%d,%d,%s\n", types[rng.IntN(len(types))], ts, rng.IntN(10), syms[rng.IntN(len(syms))])
	}
	return csv.String()
}

// TestWorkersReturnOrder: with RETURN of values, a split run's worker
// tells a match's partition from its binding (worker.own), once for the
// matches that share their last event when that event has the attribute.
// Where many events lack it, one such event completes matches of several
// partitions on one worker, which the merge orders by partition: the same
// rows in the same order as one worker's, on every engine, on 2, 3 and 7
// workers.
func TestWorkersReturnOrder(t *testing.T) {
	csv := symStream(rand.New(rand.NewPCG(5, 8)), 400, []string{"A", "B", "C"}, []string{"x", "y", "z", "w", "v", "", ""})
	stream, err := loadCase(conformanceCase{StreamCSV: csv})
	if err != nil {
		t.Fatal(err)
	}
	run := func(q *sase.Query, workers int) []string {
		var out []string
		_, err := q.Run(context.Background(), stream.All(), func(row []sase.Cell) bool {
			out = append(out, fmt.Sprint(row))
			return true
		}, sase.WithWorkers(workers))
		if err != nil {
			t.Fatalf("%d workers: %v", workers, err)
		}
		return out
	}
	for _, query := range []string{
		"PATTERN SEQ(A a, B b, C c) WHERE [sym] WITHIN 6 RETURN a.sym, a.price, b.price, c.ts",
		"PATTERN SEQ(A a, B b) WHERE [sym] AND a.price <= b.price WITHIN 5 RETURN b.ts, a.sym",
	} {
		for _, engine := range engines {
			q, err := randquery.Parse(query).Compile(stream, engine, true)
			if err != nil {
				t.Fatalf("%s, %s: %v", query, engine, err)
			}
			want := run(q, 1)
			for _, workers := range []int{2, 3, 7} {
				if sp := q.Split(workers, false); sp.Workers != workers && engine != "basic" { // the reference runs on one
					t.Fatalf("%s, %s: %d workers run as %s", query, engine, workers, sp)
				}
				if got := run(q, workers); !slices.Equal(got, want) {
					t.Fatalf("%s, %s, %d workers: got %d rows %v\nwant %d %v", query, engine, workers, len(got), got, len(want), want)
				}
			}
		}
	}
}

// TestWorkersStop: a run-time error in a worker stops the query with the
// error of the first failing event in stream order; a consumer that stops
// and a cancelled ctx stop every worker. Partitioned runs and runs cut
// into time segments alike.
func TestWorkersStop(t *testing.T) {
	var csv strings.Builder
	csv.WriteString("type,ts,x,sym\n")
	for i := range 5000 {
		x := 1 + i%7
		if i == 3001 || i == 4002 {
			x = 0
		}
		fmt.Fprintf(&csv, "A,%d,%d,%d\nB,%d,5,%d\n", 2*i, x, i%5, 2*i+1, i%5)
	}
	stream, err := source.LoadCSV(strings.NewReader(csv.String()), "stop.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer exec.SetSegments(1000, 0)()
	for _, query := range []string{
		"PATTERN SEQ(A a, B b) WHERE [sym] AND b.x / a.x > 0 WITHIN 1",
		"PATTERN SEQ(A a, B b) WHERE b.x / a.x > 0 WITHIN 1",
	} {
		cq, err := sase.Compile(query, stream)
		if err != nil {
			t.Fatal(err)
		}
		run := func(ctx context.Context, workers int, sink sase.Sink) (int, *sase.Stats, error) {
			n := 0
			stats, err := cq.Run(ctx, stream.All(), func(row []sase.Cell) bool { n++; return sink(row) }, sase.WithWorkers(workers))
			return n, stats, err
		}
		all := func([]sase.Cell) bool { return true }
		n1, s1, err1 := run(context.Background(), 1, all)
		n3, s3, err3 := run(context.Background(), 3, all)
		if err1 == nil || err3 == nil || err1.Error() != err3.Error() || n1 != n3 || n1 != 3001 {
			t.Errorf("%s: run-time error: one worker %d matches, %v; three %d, %v", query, n1, err1, n3, err3)
		}
		if s3.Split == nil || s3.Split.Workers != 3 || s3.Split.Segmented == strings.Contains(query, "[sym]") {
			t.Errorf("%s: split %v", query, s3.Split)
		}
		if !strings.Contains(query, "[sym]") && s1.Events != s3.Events {
			t.Errorf("%s: stopped at the error after %d events on one worker, %d on three", query, s1.Events, s3.Events)
		}
		// A count sink, which the workers count in bulk: the matches
		// before the error in stream order.
		counted := func(workers int) (int, error) {
			n := 0
			count := &sase.Chunks{Put: func(_ [][]byte, rows int) bool { n += rows; return true }}
			_, err := cq.Run(context.Background(), stream.All(), all, sase.WithWorkers(workers), sase.WithChunks(count))
			return n, err
		}
		c1, cerr1 := counted(1)
		c3, cerr3 := counted(3)
		if cerr1 == nil || cerr3 == nil || cerr1.Error() != cerr3.Error() || c1 != c3 || c1 != 3001 {
			t.Errorf("%s: run-time error, counted: one worker %d matches, %v; three %d, %v", query, c1, cerr1, c3, cerr3)
		}
		limit := func(row []sase.Cell) bool { return false }
		if n, stats, err := run(context.Background(), 3, limit); n != 1 || err != nil || stats.Matches != 1 {
			t.Errorf("%s: a sink that stops at once: %d matches, %v", query, n, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		stop := func([]sase.Cell) bool { cancel(); return true }
		if _, _, err := run(ctx, 3, stop); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: cancelled: %v", query, err)
		}
	}
}

// TestWorkersBalance: a partitioned run assigns a stream's first keys to
// the workers by their events so far, not by hash, so that a few keys
// of equal weight split evenly (by hash, 10 keys over 2 workers split
// 4 and 6): here 10 keys, each as often, over 2 and 5 workers.
func TestWorkersBalance(t *testing.T) {
	var csv strings.Builder
	csv.WriteString("type,ts,sym\n")
	for i := range 1000 {
		fmt.Fprintf(&csv, "A,%d,s%d\n", i, i%10)
	}
	stream, err := source.LoadCSV(strings.NewReader(csv.String()), "balance.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cq, err := sase.Compile("PATTERN SEQ(A a, A b) WHERE [sym] WITHIN 30", stream)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{2, 5} {
		stats, err := cq.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true }, sase.WithWorkers(workers))
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range stats.Workers {
			if want := int64(1000 / workers); w.Events != want || w.Matches != stats.Matches/int64(workers) {
				t.Errorf("%d workers: worker %d has %d events, %d matches; want %d, %d", workers, i+1, w.Events, w.Matches, want, stats.Matches/int64(workers))
			}
		}
	}
}

// TestWorkersV3: a v3 pattern (OR, AND, optional, nested, closure with a
// maximum) with a top-level equivalence test splits by it when every
// event has the attribute, on a union of flat plans and on the algebra
// alike, and gives one worker's matches in one worker's order; on a
// stream where an event lacks it, it runs on one worker.
func TestWorkersV3(t *testing.T) {
	stream := func(syms []string) string {
		rng := rand.New(rand.NewPCG(5, 8))
		var csv strings.Builder
		csv.WriteString("type,ts,price,sym\n")
		ts := 0
		for range 150 {
			ts += rng.IntN(2)
			fmt.Fprintf(&csv, "%s,%d,%d,%s\n", []string{"A", "B", "C", "D", "N"}[rng.IntN(5)], ts, rng.IntN(10), syms[rng.IntN(len(syms))])
		}
		return csv.String()
	}
	everywhere, lacking := stream([]string{"x", "y", "z", "w"}), stream([]string{"x", "y", "z", ""})
	onEverywhere, err := loadCase(conformanceCase{Name: "v3", StreamCSV: everywhere})
	if err != nil {
		t.Fatal(err)
	}
	onLacking, err := loadCase(conformanceCase{Name: "v3", StreamCSV: lacking})
	if err != nil {
		t.Fatal(err)
	}
	queries := []string{
		"PATTERN SEQ(A a, OR(B b, C c), D d) WHERE [sym] WITHIN 6",
		"PATTERN OR(SEQ(A a, !N n, B b), SEQ(A a, C c)) WHERE [sym] WITHIN 5",
		"PATTERN SEQ(A a, B? b, C c) WHERE [sym] AND b.price > a.price WITHIN 5",
		"PATTERN SEQ(A a, B{1,2} b[], C c) WHERE [sym] WITHIN 5",
		"PATTERN AND(A a, B b) WHERE [sym] WITHIN 3",
		"PATTERN SEQ(A a, AND(B b, C c), D d) WHERE [sym] WITHIN 12",
		"PATTERN AND(SEQ(A a, !N n, C c), B x) WHERE [sym] WITHIN 5",
	}
	for _, q := range queries {
		parsed := randquery.Parse(q) // once for every engine
		for _, engine := range []string{"auto", "pais", "recep"} {
			c := conformanceCase{Name: "v3", StreamCSV: everywhere, Query: q}
			cq, err := parsed.Compile(onEverywhere, engine, false)
			if err != nil {
				t.Fatalf("%s, %s: %v", q, engine, err)
			}
			want, _, err := runCompiled(cq, onEverywhere, 1)
			if err != nil {
				t.Fatalf("%s, %s: %v", q, engine, err)
			}
			if len(want) == 0 {
				t.Fatalf("%s, %s: no match to compare", q, engine)
			}
			for _, workers := range []int{2, 3} {
				got, sp, err := runCompiled(cq, onEverywhere, workers)
				if err != nil {
					t.Fatalf("%s, %s, %d workers: %v", q, engine, workers, err)
				}
				if sp.Workers != workers || sp.By == nil {
					t.Fatalf("%s, %s, %d workers: %s, want a split by [sym]", q, engine, workers, sp)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s, %s, %d workers: got %d %v\nwant %d %v", q, engine, workers, len(got), got, len(want), want)
				}
				checkCount(t, c, cq, onEverywhere, engine, workers, len(want))
			}
			cq, err = parsed.Compile(onLacking, engine, false)
			if err != nil {
				t.Fatalf("%s, %s, an event lacking sym: %v", q, engine, err)
			}
			if _, sp, err := runCompiled(cq, onLacking, 2); err != nil || sp.Workers != 1 {
				t.Fatalf("%s, %s, an event lacking sym: %s (%v), want one worker", q, engine, sp, err)
			}
		}
	}
}
