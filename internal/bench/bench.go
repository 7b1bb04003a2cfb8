// Package bench measures the engines on the workloads of the SASE and
// ReCEP papers and on the project's reference queries. `sase bench` prints
// its tables; the Go benchmarks in package exec reuse its workloads.
package bench

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/source"
)

// Case is one query on one stream, run on several engines.
type Case struct {
	Name    string
	Stream  func() *event.Stream
	Query   string
	Engines []string
	// Floor, when set, is a hand-written loop for this query alone: Run
	// prints it first, and each engine's time as a multiple of it.
	Floor func(*event.Stream) (Result, error)
	// Paper, when set, is the time a paper reports for this query on
	// this stream: each engine's row shows how many times faster it ran
	// (on this machine, against the paper's).
	Paper   time.Duration
	Workers []int // the workers each engine runs on (none: 1)
	// Sinks are what takes the matches: "" a Go callback (through a
	// split run's ordered merge, match by match), or a format's writer
	// into a file, as `sase --format F > file` (a split run's workers
	// encode or count the matches; output.ChunksOf): the writes are part
	// of the cost, which io.Discard left out. None: the callback.
	Sinks []output.Format
}

// Stocks returns the built-in generator's stream: uniform mode when
// increase is 0, else a random walk with that increase probability and
// prices up to 1000.
func Stocks(events, increase int) func() *event.Stream {
	return StocksOf(events, increase, source.DefaultStockConfig().Symbols)
}

// StocksCSV is Stocks(events, 0)'s stream as CSV, for a live stream.
func StocksCSV(events int) ([]byte, error) {
	cfg := source.DefaultStockConfig()
	cfg.Events = events
	var b bytes.Buffer
	err := source.WriteStocksCSV(&b, cfg)
	return b.Bytes(), err
}

// StocksOf is Stocks with a number of symbols.
func StocksOf(events, increase, symbols int) func() *event.Stream {
	cfg := source.DefaultStockConfig()
	cfg.Events, cfg.Symbols = events, symbols
	if increase > 0 {
		cfg.IncreaseProbability, cfg.MaxPrice = increase, 1000
	}
	return func() *event.Stream { return source.GenerateStocks("stocks", cfg) }
}

// kleene is SASE's tests/KleeneClosure/QueryType query (docs/STRATEGIES.md, How sase runs strategies) under a
// strategy, with one of its per-element predicates.
func kleene(strategy, pred string) string {
	return "PATTERN SEQ(stock+ a[], stock b) WHERE " + strategy + " AND [symbol] AND a[1].price % 500 = 0 AND b.volume < 150" + pred + " WITHIN 500"
}

// Partitioned returns a stream in the shape of SASE's Figures 8 and 10:
// types A, B, C among seven other types, ts = seq, and attributes a1 with
// v1 distinct values and a2 with v2 (0 for none).
func Partitioned(events, v1, v2 int) func() *event.Stream {
	return func() *event.Stream {
		r := rand.New(rand.NewPCG(uint64(v1), uint64(v2)))
		schema := event.NewSchema()
		types := []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"}
		a1, a2 := schema.AddAttr("a1"), schema.AddAttr("a2")
		for _, t := range types {
			id := schema.AddType(t)
			schema.Declare(id, a1)
			schema.Declare(id, a2)
		}
		evs := make([]event.Event, events)
		vals := make([]event.Value, 2*events)
		s := &event.Stream{Name: "partitioned", Source: "generated", Schema: schema, Events: make([]*event.Event, events)}
		for i := range evs {
			e := &evs[i]
			e.Type, e.TS, e.Seq = r.IntN(len(types)), int64(i), int64(i)
			e.Attrs = vals[2*i : 2*i+2 : 2*i+2]
			e.Attrs[a1] = event.IntValue(int64(r.IntN(v1)))
			if v2 > 0 {
				e.Attrs[a2] = event.IntValue(int64(r.IntN(v2)))
			}
			schema.Observe(e)
			s.Events[i] = e
		}
		return s
	}
}

// W1 is the workload the floor (W1Floor) is written for.
const W1 = "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120"

// W2 is a partitioned query with predicates between adjacent components;
// W2r is W2 without them, so that every sequence in a partition's window
// is a match.
const (
	W2  = "PATTERN SEQ(stock a, stock b, stock c) WHERE [symbol] AND a.price > 500 AND b.price > a.price AND c.price > b.price WITHIN 120"
	W2r = "PATTERN SEQ(stock a, stock b, stock c) WHERE [symbol] AND a.price > 500 WITHIN 120"
	// W2off is W2 with an int constant added to one side of each
	// predicate: the search's int checks with offsets.
	W2off = "PATTERN SEQ(stock a, stock b, stock c) WHERE [symbol] AND a.price > 500 AND b.price > a.price - 5 AND c.price + 5 > b.price WITHIN 120"
	// W2w800 is W2 with a window of 800.
	W2w800 = "PATTERN SEQ(stock a, stock b, stock c) WHERE [symbol] AND a.price > 500 AND b.price > a.price AND c.price > b.price WITHIN 800"
)

// Exp1 is the ReCEP paper's Experiment 1 (recepbench.Query(3, 120)), on
// the uniform stream; the paper's ReCEP took Exp1Paper on its machine.
const (
	Exp1      = "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WHERE a.price > 50 AND a.price > 1.1 * b.price AND b.price < 0.9 * c.price WITHIN 120"
	Exp1Paper = 1438 * time.Millisecond
)

var all = []string{"ais", "pais", "multipais", "dynamic", "recep", "auto"}

// LongSeq is SEQ(stock1 c0, stock2 c1, ..., stock10 c9, stock1 c10, ...):
// n components cycling through the uniform stream's ten types, on which
// AIS's backward search visits about e^(events per type in a window)
// suffixes per trigger and ReCEP's bounded one few beyond the matches.
func LongSeq(n int, window int64) string {
	comps := make([]string, n)
	for i := range comps {
		comps[i] = fmt.Sprintf("stock%d c%d", i%10+1, i)
	}
	return fmt.Sprintf("PATTERN SEQ(%s) WITHIN %d", strings.Join(comps, ", "), window)
}

// Nested are the v3 pattern shapes (LANGUAGE.md §9) on a uniform stock
// stream, with the flat SEQ they build on as the yardstick: an OR of two
// flat SEQs, AND of 2 and of 4 items, an optional item, a bounded closure.
var Nested = []struct{ Name, Query string }{
	{"flat SEQ of 3", "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 50"},
	{"OR of two SEQs of 3", "PATTERN OR(SEQ(stock1 a, stock2 b, stock3 c), SEQ(stock4 d, stock5 e, stock6 f)) WITHIN 50"},
	{"AND of 2", "PATTERN AND(stock1 a, stock2 b) WITHIN 50"},
	{"AND of 4", "PATTERN AND(stock1 a, stock2 b, stock3 c, stock4 d) WITHIN 20"},
	{"SEQ with an optional middle", "PATTERN SEQ(stock1 a, stock2? b, stock3 c) WITHIN 50"},
	{"closure {2,4}", "PATTERN SEQ(stock1 a, stock2{2,4} b[], stock3 c) WITHIN 50"},
}

// nested is the suite of Nested on 5,000 events, then an OR of three
// SEQs of 3 on 1M events and AND of 3 and of 5 items with [symbol] on 1M
// (LANGUAGE.md §9; issue 27's goal), each with a floor of flat SEQs run
// one after the other (measureSeqs): the OR's branches, the AND's
// orders; the pattern's time shows as a multiple of it.
func nested() []Case {
	var out []Case
	for _, n := range Nested {
		out = append(out, Case{Name: n.Name + " 5K", Stream: Stocks(5000, 0), Query: n.Query, Engines: []string{"auto"}})
	}
	out = append(out, Case{Name: "OR of three SEQs of 3 1M", Stream: Stocks(1_000_000, 0), Query: OrOf3, Engines: []string{"auto"},
		Floor: func(s *event.Stream) (Result, error) { return measureSeqs(s, "3 SEQs", orBranches) }})
	walk := StocksOf(1_000_000, 55, 10)
	for _, k := range []int{3, 5} {
		out = append(out, Case{Name: fmt.Sprintf("AND of %d [symbol] 1M", k), Stream: walk, Query: AndOf(k), Engines: []string{"auto"},
			Floor: func(s *event.Stream) (Result, error) {
				return measureSeqs(s, fmt.Sprintf("%d SEQs", len(orders(k))), andOrders(k))
			}})
	}
	return out
}

// orBranches are OrOf3's branches, each a flat query.
var orBranches = []string{
	"PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120",
	"PATTERN SEQ(stock4 d, stock5 e, stock6 f) WITHIN 120",
	"PATTERN SEQ(stock7 g, stock8 h, stock9 i) WITHIN 120",
}

// OrOf3 is the OR of three SEQs of 3 on the uniform stream, each W1 on
// its own three types (21 matches an event).
const OrOf3 = "PATTERN OR(SEQ(stock1 a, stock2 b, stock3 c), SEQ(stock4 d, stock5 e, stock6 f), SEQ(stock7 g, stock8 h, stock9 i)) WITHIN 120"

// andWindow keeps AND of 5's matches on 1M random-walk events (10
// symbols) near 100M.
const andWindow = 150

// AndOf is AND(stock c1, ..., stock ck) WHERE [symbol] on the random
// walk, whose events are all of type stock: item i takes the i-th of k
// bands of volume, so that the items differ (else each set of k events
// would match in its k! assignments).
func AndOf(k int) string {
	items := make([]string, k)
	for i := range items {
		items[i] = fmt.Sprintf("stock c%d", i+1)
	}
	return fmt.Sprintf("PATTERN AND(%s) WHERE %s", strings.Join(items, ", "), andWhere(k))
}

// andWhere is AndOf's WHERE and WITHIN: [symbol], each item's band.
func andWhere(k int) string {
	conds := []string{"[symbol]"}
	for i := range k {
		if i > 0 {
			conds = append(conds, fmt.Sprintf("c%d.volume >= %d", i+1, 1000*i/k))
		}
		if i < k-1 {
			conds = append(conds, fmt.Sprintf("c%d.volume < %d", i+1, 1000*(i+1)/k))
		}
	}
	return fmt.Sprintf("%s WITHIN %d", strings.Join(conds, " AND "), andWindow)
}

// andOrders are AndOf(k)'s k! orders, each a flat SEQ (the same matches
// on a stream without equal timestamps): the union of the orders an
// engine without a join would run.
func andOrders(k int) []string {
	var qs []string
	for _, o := range orders(k) {
		items := make([]string, k)
		for i, c := range o {
			items[i] = fmt.Sprintf("stock c%d", c)
		}
		qs = append(qs, fmt.Sprintf("PATTERN SEQ(%s) WHERE %s", strings.Join(items, ", "), andWhere(k)))
	}
	return qs
}

// measureSeqs runs flat queries on auto one after the other, each match
// handed to a callback as Measure's, and sums them (engine: label); as
// Measure, it compiles them before it starts the clocks.
func measureSeqs(stream *event.Stream, label string, queries []string) (Result, error) {
	res := Result{Engine: label, Workers: 1, Events: int64(len(stream.Events))}
	var qs []*sase.Query
	for _, query := range queries {
		q, err := Compile(stream, query, "auto")
		if err != nil {
			return res, err
		}
		qs = append(qs, q)
	}
	start, cpu := time.Now(), CPUTime()
	for _, q := range qs {
		if _, err := q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { res.Matches++; return true }); err != nil {
			return res, err
		}
	}
	res.Elapsed, res.CPU = time.Since(start), CPUTime()-cpu
	return res, nil
}

// orders lists the permutations of 1..k.
func orders(k int) [][]int {
	if k == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, o := range orders(k - 1) {
		for i := 0; i <= len(o); i++ {
			out = append(out, slices.Insert(slices.Clone(o), i, k))
		}
	}
	return out
}

// Suites are the named workload sets of `sase bench`.
func Suites() map[string][]Case {
	fig8 := []Case{}
	for _, v := range []int{100, 1000, 10000} {
		fig8 = append(fig8, Case{
			Name:    fmt.Sprintf("fig8 V=%d", v),
			Stream:  Partitioned(30_000, v, 0),
			Query:   "PATTERN SEQ(A a, B b, C c) WHERE [a1] WITHIN 10000",
			Engines: []string{"nfa", "ais", "pais", "recep", "auto"},
		})
	}
	fig10 := []Case{}
	for _, v := range []int{10, 100, 1000, 10000} {
		fig10 = append(fig10, Case{
			Name:    fmt.Sprintf("fig10 V1=%d V2=20", v),
			Stream:  Partitioned(30_000, v, 20),
			Query:   "PATTERN SEQ(A a, B b, C c) WHERE [a1] AND [a2] WITHIN 10000",
			Engines: []string{"pais", "multipais", "dynamic", "auto"},
		})
	}
	kleeneStream := func() *event.Stream {
		return source.GenerateStocks("stocks", source.StockConfig{Events: 1_000_000, Symbols: 2, MaxPrice: 1000, MaxVolume: 1000, Seed: 10, IncreaseProbability: 70})
	}
	strategies := []Case{{
		Name:    "W3 next-match random walk 1M",
		Stream:  Stocks(1_000_000, 55),
		Query:   "PATTERN SEQ(stock a, stock b, stock c) WHERE skip-till-next-match AND [symbol] AND a.price > 500 AND b.price > a.price AND c.price > b.price WITHIN 120",
		Engines: []string{"auto"}, // a strategy plan runs the same run scan on every engine
	}}
	for _, strategy := range []string{"skip-till-next-match", "partition-contiguity"} {
		for _, p := range []struct{ name, pred string }{{"p1", ""}, {"p2", " AND a[i].price > a[i-1].price"}, {"p3", " AND a[i].price > min(a[..i-1].price)"}} {
			strategies = append(strategies, Case{Name: "Kleene " + strategy + " " + p.name + " 1M", Stream: kleeneStream, Query: kleene(strategy, p.pred), Engines: []string{"auto"}})
		}
	}
	upTo := upToCPUs() // the workers scaling curve: 1, 2, ... up to the CPUs
	// What a user runs (--format count, jsonl), and the callback, whose
	// every match goes through the ordered merge.
	sinks := []output.Format{output.Count, output.JSONL, ""}
	workers := []Case{
		{Name: "W2 random walk 1M, 10 symbols", Stream: StocksOf(1_000_000, 55, 10), Query: W2, Engines: []string{"auto"}, Workers: upTo, Sinks: sinks},
		{Name: "W2 random walk 1M, 100 symbols", Stream: StocksOf(1_000_000, 55, 100), Query: W2, Engines: []string{"auto"}, Workers: upTo, Sinks: sinks},
		{Name: "W1 uniform 1M (segmented)", Stream: Stocks(1_000_000, 0), Query: "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120", Engines: []string{"auto"}, Workers: upTo, Sinks: sinks},
		{Name: "fig8 V=1000", Stream: Partitioned(30_000, 1000, 0), Query: "PATTERN SEQ(A a, B b, C c) WHERE [a1] WITHIN 10000", Engines: []string{"pais"}, Workers: upTo, Sinks: sinks},
		// Issue 26's: 14.5 matches an event, which a split wrote more
		// slowly than one worker.
		{Name: "W2 1M, 100 symbols, WITHIN 800 RETURN", Stream: StocksOf(1_000_000, 55, 100), Query: W2w800 + " RETURN a.seq, b.seq, c.seq", Engines: []string{"auto"}, Workers: upTo, Sinks: []output.Format{output.CSV}},
		{Name: "W2 1M, 100 symbols, WITHIN 800", Stream: StocksOf(1_000_000, 55, 100), Query: W2w800, Engines: []string{"auto"}, Workers: upTo, Sinks: []output.Format{output.JSONL}},
	}
	return map[string][]Case{
		"nested":     nested(),
		"workers":    workers,
		"strategies": strategies,
		"workloads": {
			{Name: "W1 uniform 1M", Stream: Stocks(1_000_000, 0), Query: W1, Engines: all,
				Floor: func(s *event.Stream) (Result, error) { return measureFloor(s, 120) }},
			{Name: "W2 random walk 1M", Stream: Stocks(1_000_000, 55), Query: W2, Engines: []string{"pais", "multipais", "dynamic", "recep", "auto"}},
			{Name: "W2r random walk 1M", Stream: Stocks(1_000_000, 55), Query: W2r, Engines: []string{"pais", "multipais", "dynamic", "recep", "auto"}},
			{Name: "Exp.1 uniform 1M", Stream: Stocks(1_000_000, 0), Query: Exp1, Engines: []string{"recep", "auto"}, Paper: Exp1Paper},
			// Every engine: the SSC-based ones are cut by the time limit,
			// and auto must not be.
			{Name: "SEQ of 30 uniform 1K", Stream: Stocks(1000, 0), Query: LongSeq(30, 200), Engines: sase.EngineNames()},
			{Name: "SEQ of 30 uniform 10K", Stream: Stocks(10_000, 0), Query: LongSeq(30, 200), Engines: sase.EngineNames()},
		},
		"fig8":  fig8,
		"fig10": fig10,
	}
}

// RunsOn lists the numbers of workers the case runs on.
func (c Case) RunsOn() []int {
	if len(c.Workers) == 0 {
		return []int{1}
	}
	return c.Workers
}

// Into lists the sinks the case runs with.
func (c Case) Into() []output.Format {
	if len(c.Sinks) == 0 {
		return []output.Format{""}
	}
	return c.Sinks
}

// Compile compiles a query on stream for the named engine.
func Compile(stream *event.Stream, query, engine string) (*sase.Query, error) {
	e, err := sase.LookupEngine(engine)
	if err != nil {
		return nil, err
	}
	return sase.Compile(query, stream, sase.WithEngine(e))
}

// Result is one engine's run of a case.
type Result struct {
	Engine   string
	Workers  int
	Sink     output.Format // "": the callback (Case.Sinks)
	Events   int64
	Matches  int64
	Elapsed  time.Duration
	PeakHeap uint64 // bytes, sampled while the run goes
	Stopped  bool   // the time limit ended the run
	// CPU is the process's CPU time during the run (all goroutines, the
	// runtime's included); 0 where getrusage is not.
	CPU time.Duration
}

// CPUPerEvent is the CPU time the run spent per event.
func (r Result) CPUPerEvent() time.Duration {
	if r.Events == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Events)
}

// againstOne is a run's speed-up over one worker's run, in events a
// second, and its CPU per event as a multiple of one's: per event, since a
// run cut by the time limit reads fewer ("" where either has no number).
func againstOne(r, one Result) (speedUp, cpu string) {
	if one.Elapsed <= 0 || r.Elapsed <= 0 || one.CPU <= 0 || one.Events == 0 || r.Events == 0 {
		return "", ""
	}
	perEvent := func(x Result) float64 { return x.CPU.Seconds() / float64(x.Events) }
	return fmt.Sprintf("%.2f×", r.EventsPerSecond()/one.EventsPerSecond()), fmt.Sprintf("%.2f×", perEvent(r)/perEvent(one))
}

// EventsPerSecond is the throughput of the run.
func (r Result) EventsPerSecond() float64 { return float64(r.Events) / r.Elapsed.Seconds() }

// Measure compiles a case's query for an engine and runs it over the
// stream, handing every match to sink (Case.Sinks). A run that takes
// longer than limit is stopped and reported with the events it read.
func Measure(c Case, stream *event.Stream, engine string, workers int, sink output.Format, limit time.Duration) (Result, error) {
	q, err := Compile(stream, c.Query, engine)
	if err != nil {
		return Result{}, err
	}
	each := func([]sase.Cell) bool { return true }
	opts := []sase.RunOption{sase.WithWorkers(workers)}
	var w output.Writer
	if sink != "" {
		f, err := os.CreateTemp("", "sase-bench-*."+string(sink))
		if err != nil {
			return Result{}, err
		}
		defer os.Remove(f.Name())
		defer f.Close()
		w = output.New(sink, f, outputSchema(q, stream))
		each = func(row []sase.Cell) bool { return w.Row(row) == nil }
		if c := output.ChunksOf(w, 0, func(int) {}); c != nil {
			opts = append(opts, sase.WithChunks(c))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	stop := watch()
	stats, err := q.Run(ctx, stream.All(), each, opts...)
	if w != nil && err == nil {
		err = w.Finish()
	}
	res := Result{Engine: engine, Workers: workers, Sink: sink}
	res.PeakHeap, res.CPU = stop()
	if stats != nil {
		res.Events, res.Matches, res.Elapsed = stats.Events, stats.Matches, stats.Elapsed
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		res.Stopped, err = true, nil
	}
	return res, err
}

// A run shorter than medianUnder is repeated to medianOf runs, one
// shorter than shortUnder to shortOf, and the median (by time) is
// reported: on a shared machine one short run can be off by a third, a
// run of a few milliseconds by half (a collection, a timer tick), and a
// table's ratios are read from single rows.
const (
	medianUnder = time.Second
	medianOf    = 3
	shortUnder  = 20 * time.Millisecond
	shortOf     = 11
)

// medianNote says which runs are medians, for a table's heading.
var medianNote = fmt.Sprintf("a run under %s is the median of %d, under %s of %d", medianUnder, medianOf, shortUnder, shortOf)

// timed is a run median can order: its time, and whether the time limit
// cut it.
type timed interface{ took() (time.Duration, bool) }

func (r Result) took() (time.Duration, bool) { return r.Elapsed, r.Stopped }

// median runs measure once, and again while its runs are short, and
// returns the run of median time; a run cut by the time limit or an
// error ends the repeats.
func median[R timed](measure func() (R, error)) (R, error) {
	r, err := measure()
	elapsed, cut := r.took()
	if err != nil || cut || elapsed >= medianUnder {
		return r, err
	}
	n := medianOf
	if elapsed < shortUnder {
		n = shortOf
	}
	runs := []R{r}
	for len(runs) < n {
		if r, err = measure(); err != nil {
			return r, err
		}
		if _, cut := r.took(); cut {
			return r, nil
		}
		runs = append(runs, r)
	}
	slices.SortFunc(runs, func(a, b R) int {
		ea, _ := a.took()
		eb, _ := b.took()
		return cmp.Compare(ea, eb)
	})
	return runs[len(runs)/2], nil
}

// watch starts measuring a run, after a collection: stop returns the
// largest live heap seen and the CPU time since.
func watch() (stop func() (peak uint64, cpu time.Duration)) {
	runtime.GC()
	var max atomic.Uint64
	done := make(chan struct{})
	go sampleHeap(&max, done)
	start := CPUTime()
	return func() (uint64, time.Duration) {
		close(done)
		return max.Load(), CPUTime() - start
	}
}

// sampleHeap records the largest live heap seen; runtime/metrics reads it
// without stopping the world, unlike runtime.ReadMemStats.
func sampleHeap(peak *atomic.Uint64, done chan struct{}) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > peak.Load() {
			peak.Store(v)
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// Run measures the named suites (all when none is named) and prints one
// table per suite, each row as soon as its run has finished; WithSVG also
// draws each suite's chart.
func Run(w io.Writer, names []string, limit time.Duration, opts ...Option) error {
	var c runConfig
	for _, o := range opts {
		o(&c)
	}
	suites := Suites()
	if len(names) == 0 {
		names = []string{"workloads", "fig8", "fig10", "strategies", "workers", "nested", "scaling", "io", "mr", "rules"}
	}
	for _, name := range names {
		if _, ok := suites[name]; !ok && name != "io" && name != "scaling" && name != "mr" && name != "rules" {
			return fmt.Errorf("unknown suite %q (suites: workloads, fig8, fig10, strategies, workers, nested, scaling, io, mr, rules)", name)
		}
	}
	for _, name := range names {
		var err error
		switch name {
		case "io":
			var rs []IOCase
			if rs, err = runIO(w); err == nil {
				err = c.chartIO(w, rs)
			}
		case "mr":
			err = runMR(w)
		case "rules":
			_, err = runRules(w, RuleSizes, RuleWorkersAt, RuleEvents, limit, c.liveRules)
		case "scaling":
			var rs []ScalingResult
			if rs, err = runScaling(w, Scaling, limit); err == nil {
				err = c.chartScaling(w, rs)
			}
		default:
			var rs []SuiteResult
			if rs, err = runSuite(w, name, suites[name], limit); err == nil {
				err = c.chartSuite(w, name, rs)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// columns are a results table's headers and the widths of the columns
// whose cells are not known before the runs (numbers: wide enough for the
// suites' sizes); cells are right-aligned. A suite has "sink" when a case
// has Sinks, the two columns against one worker (the run's speed-up in
// events a second, and its CPU per event as a multiple of one worker's) when a case has
// Workers, "vs floor" when one has a Floor, "vs paper" when one has a
// Paper time.
var columns = []struct {
	name  string
	width int
}{{"case", 0}, {"engine", 0}, {"sink", 8}, {"workers", 7}, {"events", 15}, {"matches", 11}, {"time", 8}, {"events/s", 8}, {"ns/match", 8}, {"CPU/event", 9}, {"peak heap", 9},
	{"speed-up", 8}, {"CPU vs 1", 8}, {"vs floor", 8}, {"vs paper", 13}}

// SuiteResult is one run of a suite's case.
type SuiteResult struct {
	Case string
	Result
}

func runSuite(w io.Writer, name string, cases []Case, limit time.Duration) ([]SuiteResult, error) {
	var out []SuiteResult
	// The widths are fixed before the first run, so that each row can be
	// printed when its run ends and still line up.
	has := map[string]bool{
		"sink":     slices.ContainsFunc(cases, func(c Case) bool { return len(c.Sinks) > 0 }),
		"speed-up": slices.ContainsFunc(cases, func(c Case) bool { return len(c.Workers) > 0 }),
		"vs floor": slices.ContainsFunc(cases, func(c Case) bool { return c.Floor != nil }),
		"vs paper": slices.ContainsFunc(cases, func(c Case) bool { return c.Paper > 0 }),
	}
	has["CPU vs 1"] = has["speed-up"]
	cols := slices.DeleteFunc(slices.Clone(columns), func(c struct {
		name  string
		width int
	}) bool {
		shown, optional := has[c.name]
		return optional && !shown
	})
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = max(c.width, len(c.name))
	}
	for _, c := range cases {
		widths[0] = max(widths[0], len(c.Name))
		for _, e := range c.Engines {
			widths[1] = max(widths[1], len(e))
		}
		if c.Floor != nil {
			widths[1] = max(widths[1], len("floor"))
		}
	}
	row := tableRow(w, widths)
	fmt.Fprintf(w, "== %s (time limit %s per run; a run cut by it shows the events it read; %s)\n", name, limit, medianNote)
	headers := make([]string, len(cols))
	for i, c := range cols {
		headers[i] = c.name
	}
	if err := row(headers...); err != nil {
		return nil, err
	}
	// workers, when not "", labels the workers column (auto's run).
	result := func(c Case, r, one Result, ratio, workers string) error {
		if workers == "" {
			workers = strconv.Itoa(r.Workers)
		}
		out = append(out, SuiteResult{Case: c.Name, Result: r})
		events := strconv.FormatInt(r.Events, 10)
		if r.Stopped {
			events += " (cut)"
		}
		sink := string(r.Sink)
		if sink == "" {
			sink = "callback"
		}
		cell := map[string]string{"case": c.Name, "engine": r.Engine, "sink": sink, "workers": workers, "events": events,
			"matches": strconv.FormatInt(r.Matches, 10), "time": r.Elapsed.Round(time.Millisecond).String(), "events/s": si(r.EventsPerSecond()), "ns/match": nsPerMatch(r),
			"CPU/event": r.CPUPerEvent().String(), "peak heap": megabytes(r.PeakHeap), "vs floor": ratio}
		if c.Paper > 0 && r.Elapsed > 0 && !r.Stopped {
			if x := c.Paper.Seconds() / r.Elapsed.Seconds(); x >= 1 {
				cell["vs paper"] = fmt.Sprintf("%.1f× faster", x)
			} else {
				cell["vs paper"] = fmt.Sprintf("%.1f× slower", 1/x)
			}
		}
		cell["speed-up"], cell["CPU vs 1"] = againstOne(r, one)
		cells := make([]string, len(cols))
		for i, col := range cols {
			cells[i] = cell[col.name]
		}
		return row(cells...)
	}
	for _, c := range cases {
		stream := c.Stream()
		var floor Result
		if c.Floor != nil {
			var err error
			if floor, err = median(func() (Result, error) { return c.Floor(stream) }); err != nil {
				return nil, fmt.Errorf("%s: %w", c.Name, err)
			}
			if err := result(c, floor, Result{}, "1.0×", ""); err != nil {
				return nil, err
			}
		}
		for _, engine := range c.Engines {
			for _, sink := range c.Into() {
				var one Result // the run on one worker, which the others compare with
				byWorkers := map[int]Result{}
				for _, workers := range c.RunsOn() {
					r, err := median(func() (Result, error) { return Measure(c, stream, engine, workers, sink, limit) })
					if err != nil {
						return nil, fmt.Errorf("%s on %s: %w", c.Name, engine, err)
					}
					if workers == 1 {
						one = r
					}
					ratio := ""
					if c.Floor != nil && floor.Elapsed > 0 {
						ratio = fmt.Sprintf("%.1f×", r.Elapsed.Seconds()/floor.Elapsed.Seconds())
						if !r.Stopped && r.Matches != floor.Matches {
							ratio += fmt.Sprintf(" (floor has %d matches)", floor.Matches)
						}
					}
					if err := result(c, r, one, ratio, ""); err != nil {
						return nil, err
					}
					byWorkers[workers] = r
				}
				if len(c.Workers) > 0 {
					// What workers = auto runs: the run on as many workers.
					q, err := Compile(stream, c.Query, engine)
					if err != nil {
						return nil, err
					}
					n, _ := q.AutoWorkers(len(stream.Events), sink.AutoSink(0))
					if r, ok := byWorkers[n]; ok {
						if err := result(c, r, one, "", fmt.Sprintf("auto=%d", n)); err != nil {
							return nil, err
						}
					}
				}
			}
		}
	}
	for _, c := range cases {
		if c.Paper > 0 {
			fmt.Fprintf(w, "vs paper: %s took %s in its paper, on its machine\n", c.Name, c.Paper)
		}
	}
	_, err := fmt.Fprintln(w)
	return out, err
}

// nsPerMatch is the run's time per match, in ns ("" without matches).
func nsPerMatch(r Result) string {
	if r.Matches == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f", float64(r.Elapsed.Nanoseconds())/float64(r.Matches))
}

func si(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1fK", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

func megabytes(b uint64) string {
	return fmt.Sprintf("%.0f MB", float64(b)/(1<<20))
}

// tableRow returns a function that writes one table row to w, each cell
// right-aligned in its column's width.
func tableRow(w io.Writer, widths []int) func(cells ...string) error {
	return func(cells ...string) error {
		var b []byte
		for i, cell := range cells {
			if i > 0 {
				b = append(b, "  "...)
			}
			b = fmt.Appendf(b, "%*s", widths[i], cell)
		}
		_, err := w.Write(append(b, '\n'))
		return err
	}
}
