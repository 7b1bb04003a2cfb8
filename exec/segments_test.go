package exec_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/exec"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/internal/teststream"
)

// segmentStream is a stream of 240 events with runs of equal ts (so that
// cuts fall between ties) and a few gaps, some lacking sym.
func segmentStream() string {
	rng := rand.New(rand.NewPCG(5, 8))
	var csv strings.Builder
	csv.WriteString("type,ts,price,sym\n")
	ts := 0
	for i := range 240 {
		ts += rng.IntN(2)
		if i%70 == 69 {
			ts += 30 // quiet: every waiting match is released at once
		}
		fmt.Fprintf(&csv, "%s,%d,%d,%s\n", []string{"A", "B", "C", "D"}[rng.IntN(4)], ts, rng.IntN(10), []string{"x", "y", ""}[rng.IntN(3)])
	}
	return csv.String()
}

// TestSegments runs queries that do not partition, with negation and
// closures at either end, under every strategy and engine, cut into time
// segments shorter and longer than the window (3 ticks: about 6 events;
// 20: about 40): the same matches in the same order as one worker's run,
// and EXPLAIN ANALYZE counts the segments.
func TestSegments(t *testing.T) {
	csv := segmentStream()
	queries := []string{
		"PATTERN SEQ(A a, B b, C c) WITHIN %d",
		"PATTERN SEQ(!C n, A a, B b) WHERE n.price > a.price WITHIN %d",
		"PATTERN SEQ(A a, B b, !C n) WITHIN %d",
		"PATTERN SEQ(!D n, A a, B b, !C m) WITHIN %d",
		"PATTERN SEQ(A a, !D n, B b) WHERE a.price < b.price WITHIN %d",
		"PATTERN SEQ(C+ c[], A a, B b) WHERE c[i].price >= c[i-1].price WITHIN %d",
		"PATTERN SEQ(A a, B b, C+ c[]) WHERE c[i].price > c[i-1].price WITHIN %d",
		"PATTERN SEQ(D+ d[], A a, !B n, C c, !D e) WHERE d[i].price < d[i-1].price WITHIN %d",
		"PATTERN SEQ(!D n, A a, C c, D+ e[]) WHERE e[i].price < e[i-1].price WITHIN %d",
		"PATTERN SEQ(ANY(A, B) a, D d) WHERE a.price = d.price WITHIN %d",
		"PATTERN SEQ(A a, B b, C c) WHERE [sym] WITHIN %d", // splits by time under the strategies
	}
	strategies := []string{"", "skip-till-any-match", "skip-till-next-match", "partition-contiguity", "strict-contiguity"}
	type run struct {
		c        conformanceCase
		query    *sase.Query // compiled once for the run's seven
		engine   string
		strategy string
		want     []string // one worker's matches
	}
	stream, err := loadCase(conformanceCase{Name: "seg", StreamCSV: csv}) // one load for every run
	if err != nil {
		t.Fatal(err)
	}
	var runs []*run
	for _, window := range []int{3, 20} {
		for _, q := range queries {
			for _, s := range strategies {
				c := conformanceCase{Name: "seg", StreamCSV: csv, Query: fmt.Sprintf(q, window)}
				if s != "" {
					c.Query = withStrategy(c.Query, s)
				}
				for _, engine := range engines {
					if engine == "basic" || s != "" && engine != "auto" {
						continue // every engine runs a strategy plan the same way
					}
					runs = append(runs, &run{c: c, engine: engine, strategy: s})
				}
			}
		}
	}
	// One worker's runs, then each cut's (the segment sizes are the
	// package's, so a cut's runs go together), each run in parallel.
	t.Run("one worker", func(t *testing.T) {
		for _, r := range runs {
			t.Run(r.engine+"/"+r.c.Query, func(t *testing.T) {
				t.Parallel()
				var err error
				if r.query, err = randquery.Parse(r.c.Query).Compile(stream, r.engine, false); err != nil {
					t.Fatalf("%s, %s: %v", r.c.Query, r.engine, err)
				}
				if r.want, _, err = runCompiled(r.query, stream, 1); err != nil {
					t.Fatalf("%s, %s: %v", r.c.Query, r.engine, err)
				}
			})
		}
	})
	found := map[string]bool{} // the queries without a strategy: any engine's matches
	for _, r := range runs {
		if r.strategy == "" {
			found[r.c.Query] = found[r.c.Query] || len(r.want) > 0
		}
	}
	for query, ok := range found {
		if !ok {
			t.Errorf("%s finds no match: the case tests nothing", query)
		}
	}
	if t.Failed() {
		return
	}
	for _, k := range []struct{ items, ratio int }{{1, 0}, {5, 0}, {16, 8}} {
		restore := exec.SetSegments(k.items, k.ratio)
		t.Run(fmt.Sprintf("segments of %d", k.items), func(t *testing.T) {
			for _, r := range runs {
				t.Run(r.engine+"/"+r.c.Query, func(t *testing.T) {
					t.Parallel()
					for _, workers := range []int{2, 7} {
						got, sp, err := runCompiled(r.query, stream, workers)
						if err != nil {
							t.Fatalf("%s, %s, %d workers: %v", r.c.Query, r.engine, workers, err)
						}
						if sp.Workers < 2 || sp.Segmented && sp.Segments < 2 || !sp.Segmented && !strings.Contains(r.c.Query, "[sym]") {
							t.Fatalf("%s, %s, %d workers, segments of %d: split %s into %d segments", r.c.Query, r.engine, workers, k.items, sp, sp.Segments)
						}
						if !slices.Equal(got, r.want) {
							t.Fatalf("%s, %s, %d workers (%s, segments of %d items): got %d %v\nwant %d %v", r.c.Query, r.engine, workers, sp, k.items, len(got), got, len(r.want), r.want)
						}
					}
				})
			}
		})
		restore()
	}
}

// TestSegmentOverlap: a time segment reads again the window before its
// cut, twice the window when a match released by time reads back before
// its first event (a negation or closure at both ends), and a live stream
// does not split by time; a run splits as EXPLAIN says.
func TestSegmentOverlap(t *testing.T) {
	stream := teststream.CSV(t, "s", "type,ts,sym\nA,1,x\nB,2,x\nC,3,y\n")
	for _, c := range []struct {
		query, want string
		live        bool
	}{
		{"PATTERN SEQ(A a, B b) WITHIN 10", "Parallel: 4 workers, time segments of the loaded stream overlapping by 10", false},
		{"PATTERN SEQ(!C n, A a, B b) WITHIN 10", "Parallel: 4 workers, time segments of the loaded stream overlapping by 10", false},
		{"PATTERN SEQ(A a, B b, C+ c[]) WITHIN 10", "Parallel: 4 workers, time segments of the loaded stream overlapping by 10", false},
		{"PATTERN SEQ(C+ c[], A a, !B b) WITHIN 10", "Parallel: 4 workers, time segments of the loaded stream overlapping by 20", false},
		{"PATTERN SEQ(A a, B b) WITHIN 10", "Parallel: one worker (no equivalence test to partition on; a live stream is not cut into time segments)", true},
		{"PATTERN SEQ(A a, B b)", "Parallel: one worker (no equivalence test to partition on; without WITHIN a match may span the whole stream, so no time segments)", false},
		{"PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 10", "Parallel: 4 workers, partitioned by [sym]", true},
	} {
		q, err := sase.Compile(c.query, stream)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.Split(4, c.live).String(); got != c.want {
			t.Errorf("%s (live %v): %s, want %s", c.query, c.live, got, c.want)
		}
		// A run splits as EXPLAIN says.
		opts := []sase.RunOption{sase.WithWorkers(4)}
		if c.live {
			opts = append(opts, sase.WithLive(sase.NewLive(nil)))
		}
		stats, err := q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true }, opts...)
		if err != nil || stats.Split == nil || stats.Split.String() != c.want {
			t.Errorf("%s (live %v): ran %v, %v", c.query, c.live, stats.Split, err)
		}
	}
}

// TestSegmentTicks: ticks in a loaded stream cut into segments release
// the waiting matches as in one run, and count as no event.
func TestSegmentTicks(t *testing.T) {
	csv := segmentStream()
	stream := teststream.CSV(t, "s", csv)
	withTicks := func(yield func(*event.Event) bool) {
		for i, e := range stream.Events {
			if i > 0 && e.TS > stream.Events[i-1].TS+1 && !yield(event.Tick(stream.Events[i-1].TS+1)) {
				return
			}
			if !yield(e) {
				return
			}
		}
	}
	defer exec.SetSegments(3, 0)()
	for _, query := range []string{
		"PATTERN SEQ(A a, B b, !C c) WITHIN 4",
		"PATTERN SEQ(A a, B+ b[]) WITHIN 4",
		"PATTERN SEQ(A a, B b, !C c) WHERE skip-till-next-match WITHIN 4",
	} {
		for _, engine := range engines {
			if engine == "basic" {
				continue
			}
			e, err := sase.LookupEngine(engine)
			if err != nil {
				t.Fatal(err)
			}
			q, err := sase.Compile(query, stream, sase.WithEngine(e))
			if err != nil {
				t.Fatal(err)
			}
			var runs [][]string
			binding := randquery.Binder(q.Columns())
			for _, workers := range []int{1, 2} {
				var got []string
				stats, err := q.Run(context.Background(), withTicks, func(row []sase.Cell) bool {
					got = append(got, binding(row))
					return true
				}, sase.WithWorkers(workers))
				if err != nil {
					t.Fatal(err)
				}
				if stats.Events != int64(len(stream.Events)) {
					t.Errorf("%s on %s, %d workers: %d events, want %d", query, engine, workers, stats.Events, len(stream.Events))
				}
				runs = append(runs, got)
			}
			if len(runs[0]) == 0 || !slices.Equal(runs[0], runs[1]) {
				t.Errorf("%s on %s: two workers %d %v\none worker %d %v", query, engine, len(runs[1]), runs[1], len(runs[0]), runs[0])
			}
		}
	}
}

// TestSegmentAnalyze: EXPLAIN ANALYZE of a segmented run shows how many
// segments it had and each worker's events (the overlap it read again
// included) and matches, which add up to the run's; on recep each
// worker's longest buffer, the run's the longest of them (not their sum).
func TestSegmentAnalyze(t *testing.T) {
	stream := teststream.CSV(t, "s", segmentStream())
	defer exec.SetSegments(40, 0)()
	for _, engine := range []string{"auto", "recep"} {
		e, err := sase.LookupEngine(engine)
		if err != nil {
			t.Fatal(err)
		}
		q, err := sase.Compile("PATTERN SEQ(A a, B b, !C n) WITHIN 5", stream, sase.WithEngine(e))
		if err != nil {
			t.Fatal(err)
		}
		stats, err := q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true }, sase.WithTiming(), sase.WithWorkers(2))
		if err != nil {
			t.Fatal(err)
		}
		text := q.ExplainAnalyze(stats)
		m := regexp.MustCompile(`\nParallel: 2 workers, time segments of the loaded stream overlapping by 5\n   segments: (\d+)\n(?:   worker \d: events=\d+ matches=\d+( max buffer=\d+)?\n){2}$`).FindStringSubmatch(text)
		if m == nil || (m[2] != "") != (engine == "recep") {
			t.Fatalf("%s: EXPLAIN ANALYZE:\n%s", engine, text)
		}
		var events, matches, longest int64
		for _, w := range regexp.MustCompile(`events=(\d+) matches=(\d+)(?: max buffer=(\d+))?`).FindAllStringSubmatch(text, -1) {
			e, _ := strconv.ParseInt(w[1], 10, 64)
			n, _ := strconv.ParseInt(w[2], 10, 64)
			b, _ := strconv.ParseInt(w[3], 10, 64)
			events, matches, longest = events+e, matches+n, max(longest, b)
		}
		if segments, _ := strconv.Atoi(m[1]); segments < len(stream.Events)/40 || matches != stats.Matches || matches == 0 ||
			stats.Events != int64(len(stream.Events)) || events <= stats.Events {
			t.Errorf("%s: %s segments; workers' shares %d events, %d matches; the run's %d events, %d matches", engine, m[1], events, matches, stats.Events, stats.Matches)
		}
		if engine == "recep" && (longest == 0 || !strings.Contains(text, fmt.Sprintf("max buffer=%d)", longest))) {
			t.Errorf("recep: the run's max buffer is not its workers' longest, %d:\n%s", longest, text)
		}
	}
}
