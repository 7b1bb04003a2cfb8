package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/rulebook"
)

// RuleSizes are the rulebooks of `sase bench rules`, on RuleEvents
// uniform stock events.
var (
	RuleSizes  = []int{1, 10, 100, 1_000, 10_000}
	RuleEvents = 1_000_000
)

// Rules is a rulebook of n random rules of issue 31's shape: SEQ(stockX
// a, stockY b) WHERE a.price > P AND b.price < a.price - D WITHIN w, on
// the uniform stream's 10 symbols (prices 1 to 100).
func Rules(n int) []string { return RulesAbove(n, 0) }

// RulesAbove is Rules with P from minP to 99: with minP 90 a start's
// filter passes one event of its type in 20, and matches are rare.
func RulesAbove(n, minP int) []string {
	r := rand.New(rand.NewPCG(uint64(n), 31))
	qs := make([]string, n)
	for i := range qs {
		qs[i] = fmt.Sprintf("PATTERN SEQ(stock%d a, stock%d b) WHERE a.price > %d AND b.price < a.price - %d WITHIN %d",
			1+r.IntN(10), 1+r.IntN(10), minP+r.IntN(100-minP), r.IntN(20), 5+r.IntN(50))
	}
	return qs
}

// RulesResult is one run of a rulebook: as one pass, or split among
// Workers passes in parallel, or each rule alone (Alone; Done of the
// rules ran before the time limit), or on a live stream (Live).
type RulesResult struct {
	Rules   int
	Alone   bool
	Live    bool
	Workers int // the rulebook's passes
	Done    int
	// Matches are each rule's, for the rules that ran.
	Matches []int64
	Result
}

// EventsPerSecond is the stream's events per second for the whole
// rulebook: for rules run alone, the stream's events times the share of
// the rules that ran, over the time.
func (r RulesResult) EventsPerSecond() float64 {
	return float64(r.Events) * float64(r.Done) / float64(r.Rules) / r.Elapsed.Seconds()
}

// CPUPerEvent is the CPU time per event of the stream for the whole
// rulebook.
func (r RulesResult) CPUPerEvent() time.Duration {
	done := float64(r.Events) * float64(r.Done) / float64(r.Rules)
	if done == 0 {
		return 0
	}
	return time.Duration(float64(r.CPU) / done)
}

// MeasureRules compiles the queries on stream and runs them as one
// rulebook split among workers passes (rulebook.Split), or each alone
// over the whole stream (as a script's queries ran before rulebooks)
// until limit.
func MeasureRules(stream *event.Stream, queries []string, alone bool, workers int, limit time.Duration) (RulesResult, error) {
	rules := make([]rulebook.Rule, len(queries))
	for i, text := range queries {
		q, err := sase.Compile(text, stream)
		if err != nil {
			return RulesResult{}, err
		}
		rules[i] = rulebook.Rule{Query: q}
	}
	res := RulesResult{Rules: len(rules), Alone: alone, Workers: 1, Matches: make([]int64, len(rules))}
	sinks := make([]sase.Sink, len(rules))
	for i := range sinks {
		sinks[i] = func([]sase.Cell) bool { res.Matches[i]++; return true }
	}
	// Both ways read the events through the same counting iterator (a
	// rulebook cut by the limit says how many it read), so that each pays
	// its cost alike: a one-rule rulebook and its rule alone run the same
	// code.
	var read int64
	counted := func(yield func(*event.Event) bool) {
		for e := range stream.All() {
			read++
			if !yield(e) {
				return
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	stop, start := watch(), time.Now()
	if alone {
		for i, r := range rules {
			if _, err := r.Query.Run(ctx, counted, sinks[i]); err != nil {
				if ctx.Err() != nil {
					res.Stopped = true
					break
				}
				return res, err
			}
			res.Done++
		}
		for range stream.All() {
			res.Events++
		}
	} else {
		split := rulebook.New(stream.Schema, rules).Split(workers)
		res.Workers = split.Workers()
		for _, r := range split.Run(ctx, counted, sinks) {
			if r.Err != nil && ctx.Err() == nil {
				return res, r.Err
			}
		}
		res.Done, res.Stopped, res.Events = len(rules), ctx.Err() != nil, read
	}
	res.Elapsed = time.Since(start)
	res.PeakHeap, res.CPU = stop()
	res.Matches = res.Matches[:res.Done]
	for _, m := range res.Matches {
		res.Result.Matches += m
	}
	return res, nil
}

// LiveRules readies queries as the rulebook of a live stream piped in
// as csv, on workers passes (SET workers): run runs it until the stream
// ends or ctx is done, and returns each rule's matches and the events the
// stream used. The session runs it, above this package: cmd/sase passes
// it in.
type LiveRules func(csv []byte, queries []string, workers int) (run func(ctx context.Context) (matches []int64, events int64, err error), err error)

// WithLiveRules adds the rules suite's live rows, run by run.
func WithLiveRules(run LiveRules) Option {
	return func(c *runConfig) { c.liveRules = run }
}

// MeasureLiveRules runs queries as the rulebook of a live stream of csv
// on workers passes, until limit, from the stream's start (the rules
// compiled): its time and CPU are the stream's decoding too, which a
// loaded book's are not, and the passes' indexes, built at the first
// event.
func MeasureLiveRules(live LiveRules, csv []byte, queries []string, workers int, limit time.Duration) (RulesResult, error) {
	run, err := live(csv, queries, workers)
	if err != nil {
		return RulesResult{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	stop, start := watch(), time.Now()
	matches, events, err := run(ctx)
	res := RulesResult{Rules: len(queries), Live: true, Workers: workers, Done: len(queries), Matches: matches}
	res.Elapsed = time.Since(start)
	res.PeakHeap, res.CPU = stop()
	if res.Stopped = ctx.Err() != nil; err != nil && !res.Stopped {
		return res, err
	}
	res.Events = events
	for _, m := range matches {
		res.Result.Matches += m
	}
	return res, nil
}

// RuleLiveEvents is how many events of a stream of events the live rows
// of a rulebook of n rules read, the first: as many rule-events as a
// loaded row reads in a few seconds, so that a row reads all of them
// within liveLimit, and says exactly how many it read (a run cut at the
// limit counts what its stream had handed out, read or not).
func RuleLiveEvents(events, n int) int { return min(events, 1_000_000_000/n) }

// liveLimit is the time limit of a live row, if the suite's is less: a
// book of 10,000 rules on one pass reads its 100,000 events in about 11 s
// at P from 0 (it read 10,000 in 22-28 s an item at a time, before live
// passes read batches).
const liveLimit = time.Minute

// measureLive runs the live rows of queries, on the first events of the
// rules suite's stream, each of workers liveRounds times, alternated, and
// the loaded book on those events, whose matches theirs are.
func measureLive(live LiveRules, queries []string, workers []int, events int, limit time.Duration) ([]RulesResult, RulesResult, error) {
	csv, err := StocksCSV(events)
	if err != nil {
		return nil, RulesResult{}, err
	}
	loaded, err := MeasureRules(Stocks(events, 0)(), queries, false, 1, limit)
	if err != nil {
		return nil, loaded, err
	}
	var runs []RulesResult
	for range liveRounds {
		for _, w := range workers {
			r, err := MeasureLiveRules(live, csv, queries, w, limit)
			if err != nil {
				return nil, loaded, err
			}
			runs = append(runs, r)
		}
	}
	return runs, loaded, nil
}

// liveRounds is how many times the live rows run each rulebook, workers
// 1 and 2 alternated, so that a load that comes and goes on a shared
// machine weighs on both alike.
const liveRounds = 2

// RuleMinPs are the rules suite's shapes: P from 0 (dense: a start's
// filter passes half its type's events, and matches dominate) and from
// 90 (selective).
var RuleMinPs = []int{0, 90}

// RuleWorkersAt are the rulebook sizes whose rows add the rulebook on 2
// workers, as workers = auto runs them on 2 cores (AutoRules; the others
// would add their time to the suite's for little).
var RuleWorkersAt = []int{1_000, 10_000}

// runRules prints the rules table: each rulebook as one pass (and, at
// the sizes workersAt lists, split among 2 in parallel, and with live,
// on a live stream on 1 and 2 passes), then each rule alone, with
// whether each rule's matches agree.
func runRules(w io.Writer, sizes, workersAt []int, events int, limit time.Duration, live LiveRules) ([]RulesResult, error) {
	fmt.Fprintf(w, "== rules (rulebooks of random SEQ(stockX a, stockY b) WHERE a.price > P AND b.price < a.price - D WITHIN w, D < 20, 5 <= w < 55; %d uniform stock events; time limit %s per run; alone: each rule's own pass, extrapolated from the rules that ran; live: the book on the stream's first 1G/rules events piped in as CSV, decoding included, W1 and W2 alternated, time limit %s at least)\n", events, limit, liveLimit)
	widths := []int{6, 6, 11, 10, 10, 8, 9, 9, 9, 12}
	row := tableRow(w, widths)
	if err := row("P", "rules", "run", "matches", "time", "events/s", "CPU/event", "CPU/rule", "peak heap", "same matches"); err != nil {
		return nil, err
	}
	stream := Stocks(events, 0)()
	var out []RulesResult
	for _, minP := range RuleMinPs {
		for _, n := range sizes {
			queries := RulesAbove(n, minP)
			workers := []int{1}
			if slices.Contains(workersAt, n) {
				workers = append(workers, 2)
			}
			var runs []RulesResult
			for _, w := range workers {
				book, err := MeasureRules(stream, queries, false, w, limit)
				if err != nil {
					return nil, fmt.Errorf("rules: %w", err)
				}
				runs = append(runs, book)
			}
			var lives []RulesResult
			var prefix RulesResult // the loaded book on the live rows' events, whose matches theirs are
			if live != nil && len(workers) > 1 {
				var err error
				if lives, prefix, err = measureLive(live, queries, workers, RuleLiveEvents(events, n), max(limit, liveLimit)); err != nil {
					return nil, fmt.Errorf("rules, live: %w", err)
				}
			}
			alone, err := MeasureRules(stream, queries, true, 1, limit)
			if err != nil {
				return nil, fmt.Errorf("rules: %w", err)
			}
			for _, r := range append(append(runs, lives...), alone) {
				same := sameMatches(runs[0], alone) // the alone row's: the one pass's
				switch {
				case r.Live:
					same = sameMatches(r, prefix)
				case !r.Alone:
					same = sameMatches(r, alone)
				}
				run := "rulebook"
				if r.Live {
					run = fmt.Sprintf("live W%d", r.Workers)
				} else if r.Workers > 1 {
					run = fmt.Sprintf("rulebook W%d", r.Workers)
				}
				if r.Alone {
					run = "alone"
					if r.Stopped {
						run = fmt.Sprintf("alone %d", r.Done)
					}
				}
				if err := row(fmt.Sprintf(">= %d", minP), strconv.Itoa(n), run, strconv.FormatInt(r.Result.Matches, 10), r.Elapsed.Round(time.Millisecond).String(),
					si(r.EventsPerSecond()), r.CPUPerEvent().String(), (r.CPUPerEvent() / time.Duration(n)).String(), megabytes(r.PeakHeap), same); err != nil {
					return nil, err
				}
				out = append(out, r)
			}
		}
	}
	_, err := fmt.Fprintln(w)
	return out, err
}

// sameMatches says whether each rule's matches through the rulebook are
// those alone found, for the rules that ran alone.
func sameMatches(book, alone RulesResult) string {
	if book.Stopped {
		return "(cut)"
	}
	for i, m := range alone.Matches {
		if book.Matches[i] != m {
			return fmt.Sprintf("NO (rule %d)", i)
		}
	}
	return "yes"
}
