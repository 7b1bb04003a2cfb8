// Package exec runs query plans over event streams. An engine reads events
// one at a time, keeps state bounded by the window where the plan allows,
// and hands each match to a callback as soon as it is complete.
package exec

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"time"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
	"github.com/sase-cep/sase/query"
)

// Cell is one column of an output row: a value, an event, or a closure's
// list, as the plan's column says. It is package query's, so that a row
// reaches the layers above the facade without a copy.
type Cell = query.Cell

// Emit receives each match as a row of cells, valid only during the call.
// Returning false stops the run.
type Emit func(row []Cell) bool

// OpStats counts one operator's input and output sequences and its time,
// and what its engine reports of its own work (Counters).
type OpStats struct {
	In, Out  int64
	Time     time.Duration
	Counters []Counter
}

// Counter is one measure an engine reports for its operator, such as the
// stack instances it created or its longest buffer.
type Counter struct {
	Name string
	N    int64
}

// Stats describes a run. The counts a run adds to at each item come
// first, in one cache line of the runner's (runner).
type Stats struct {
	Events    int64 // events read
	Matches   int64 // matches emitted
	Instances int64 // state instances (SSC) or runs (RunScan) created
	// MaxBuffer is ReCEP's longest element buffer (events held at once).
	MaxBuffer int64
	Operators []OpStats // by plan operator, in the order of planner.Plan.Operators
	Elapsed   time.Duration
	// Split is how the run split, when more than one worker was asked
	// for; Workers are a parallel run's workers' shares, Segments the
	// number of time segments of a segmented one.
	Split    *Split
	Workers  []WorkerStats
	Segments int
	timed    bool
}

// Explain is EXPLAIN ANALYZE's text for plan after a run with these
// stats: the plan with each operator's counters, then how the run split.
func (s *Stats) Explain(plan *planner.Plan) string {
	return plan.Explain(s.Annotate) + s.explainSplit()
}

// Annotate formats an operator's counters for EXPLAIN ANALYZE.
func (s *Stats) Annotate(op int) string {
	o := s.Operators[op]
	text := fmt.Sprintf("(in=%d out=%d", o.In, o.Out)
	if s.timed {
		text += fmt.Sprintf(" time=%s", o.Time.Round(time.Microsecond))
	}
	for _, c := range o.Counters {
		text += fmt.Sprintf(" %s=%d", c.Name, c.N)
	}
	return text + ")"
}

// Option configures a run.
type Option func(*runner)

// WithOpTiming measures the time spent in each operator (EXPLAIN ANALYZE);
// it costs a clock read at each hand-over between operators.
func WithOpTiming() Option { return func(r *runner) { r.clock.on = true } }

// errStopped ends a run whose consumer asked for no more matches.
var errStopped = errors.New("stopped")

// cancelled unwinds a run from inside a search when ctx is done; Run
// returns err.
type cancelled struct{ err error }

// tickEvery is how many steps of search or construction go between two
// looks at ctx: a few microseconds of work, so that a cancel stops even
// an event whose search finds no match long before 200 ms.
const tickEvery = 4096

// Run executes plan over events, calling emit for each match. It stops
// early when ctx is cancelled (returning ctx's error) or emit returns false;
// it looks at ctx between events and every 1024 matches, since one event
// may complete millions of them.
// events may hold ticks (event.Tick): time passing with no event, which
// releases the matches that wait on it.
func Run(ctx context.Context, plan *planner.Plan, events iter.Seq[*event.Event], emit Emit, opts ...Option) (stats *Stats, err error) {
	r := newRunner(plan, emit)
	r.ctx = ctx
	for _, o := range opts {
		o(r)
	}
	if r.par.workers > 1 {
		sp := SplitOf(plan, r.par.workers, r.par.live != nil)
		if sp.Segmented {
			return runSegments(ctx, plan, sp, events, emit, r.par, opts)
		}
		if sp.Workers > 1 {
			return runParallel(ctx, plan, sp, events, emit, r.par, opts)
		}
		r.stats.Split = &sp
	}
	start := time.Now()
	counted, items := r.prepare(start)
	defer func() {
		r.end(start)
		if rec := recover(); rec != nil {
			err = r.recovered(rec)
			if items != nil && err != nil {
				// The matches found at the failing item before it failed,
				// as a run that holds none emits them.
				items.flush(&r.stats)
			}
		}
		if counted != nil {
			counted.Put(nil, int(r.stats.Matches))
		}
		stats = &r.stats
	}()
	// events is called with a plain func, not ranged over: a range's
	// body, with its return, costs the loop about 12 more instructions
	// an event. An iterator that goes on after false is told false again:
	// feed's only error, ctx's, stays.
	var ferr error
	events(func(ev *event.Event) bool {
		if err := r.feed(ev); err != nil {
			ferr = err
			return false
		}
		if items != nil && !items.flush(&r.stats) {
			stop()
		}
		return true
	})
	if ferr != nil {
		return &r.stats, ferr
	}
	r.finish()
	if items != nil {
		items.flush(&r.stats)
	}
	return &r.stats, nil
}

// countOnly has a run on one worker whose Chunks only count (a count
// sink) count its matches without a call of the sink per match, at the
// cost a benchmark's empty callback has; it returns the Chunks, to be
// handed the count at the end, or nil.
func (r *runner) countOnly() *Chunks {
	c := r.par.chunks
	if c == nil || c.NewEncoder != nil && c.NewEncoder() != nil {
		return nil
	}
	r.emit, r.counts = func([]Cell) bool { return true }, true
	if limit := c.Limit; limit > 0 {
		r.emit, r.counts = func([]Cell) bool { return r.stats.Matches < limit }, false
	}
	return c
}

// deliver hands the run's row, filled, to the consumer as a match.
func (r *runner) deliver() {
	if r.stats.Matches&1023 == 1023 { // the match about to be counted is a 1024th
		r.checkCancel()
	}
	r.emitRow()
}

// emitRow is deliver without its look at ctx, for a loop whose steps the
// ticker counts (it looks every tickEvery steps): small enough to inline
// (a panic costs the inliner little, a call much).
func (r *runner) emitRow() {
	r.stats.Matches++
	if !r.emit(r.out) {
		panic(errStopped)
	}
}

// stop ends a run whose consumer asked for no more matches; out of line,
// so that deliver inlines into the loops that emit.
//
//go:noinline
func stop() { panic(errStopped) }

func (r *runner) begin(start time.Time) {
	r.stats.timed = r.clock.on
	r.clock.last = start
	r.keep = r.keepWindow()
	r.stores = slices.Contains(r.store.kept, true)
	if s, ok := r.src.(interface{ start() }); ok {
		s.start() // options are set now
	}
}

func (r *runner) end(start time.Time) {
	r.stats.Elapsed = time.Since(start)
	// The source reads every event.
	r.stats.Operators[0].In = r.stats.Events
	r.clock.switchTo(r.clock.cur) // charge the time since the last hand-over
	r.src.report(&r.stats)
}

// recovered turns what a run's engine panicked with into the run's error:
// a run-time error, a cancel, or nil for a consumer that stopped.
func (r *runner) recovered(rec any) error {
	switch e := rec.(type) {
	case *planner.RuntimeError:
		return e // it names the expression, with its position
	case cancelled:
		return e.err
	case error:
		if e == errStopped {
			return nil
		}
	}
	panic(rec)
}

// feed runs one item of the stream: an event, or a tick.
func (r *runner) feed(ev *event.Event) error {
	if ev.IsTick() {
		r.pass(ev.TS)
		return nil
	}
	if r.stats.Events&1023 == 0 {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if r.keep > 0 {
			r.store.prune(satSub(r.lastTS, r.keep))
		}
	}
	r.stats.Events++ // and the source's In, which end sets from it
	r.pass(ev.TS)
	if r.stores {
		r.store.add(ev)
	}
	r.src.process(ev)
	return nil
}

// pass moves the run's time to ts, if that is later than it is.
func (r *runner) pass(ts int64) {
	if ts > r.lastTS {
		r.lastTS = ts
		if r.timed != nil { // often none (timedOf): no call
			r.advance(ts)
		}
	}
}

// runner holds the state of one run: the event store that negation and
// closure read, the engine of the plan's source, and the stages after it.
type runner struct {
	// The fields that each item and each match read come first, in the
	// struct's first two cache lines (stats' counts at the end of the
	// second): a rulebook hands each of its rules a few items at a time,
	// and at each visit the rule's state has left the cache.
	src source
	// lastTS is the run's time (math.MinInt64 before the first item: no
	// operator has anything to do at that time).
	lastTS int64
	timed  []interface{ advance(int64) }
	emit   Emit
	// counts: the consumer only counts the matches (countOnly, no
	// limit), so a scan may add them up without handing each over.
	counts bool
	// onePartition: the source promises that the matches of the item it
	// runs all lie in one partition, so that an itemOrder, which would
	// sort them into an order they are already in, hands them on as they
	// come.
	onePartition bool
	// settled: a run on one worker whose emit stays as prepare set it
	// and reads none of its counts before the item's end, so that a
	// union's branches may call it themselves and the union add their
	// counts to the run's after each item (unionOut.take).
	settled bool
	// stores: the store keeps some type's events (begin), so that a run
	// whose store keeps none reads its line at no item.
	stores bool
	// split: the runner is a split run's worker's (ofRun). Among the
	// flags, where it takes no room: 384 bytes, a size class whose
	// objects start on a cache line, keep the lines above as they are.
	split bool
	// out is the row emit is handed: row, or the row of a union's run
	// that row is a run of (unionOut.handOn).
	out   []Cell
	store *store
	stats Stats
	ctx   context.Context
	// keep: how far back the store must reach (keepWindow).
	keep   int64
	steps  ticker
	plan   *planner.Plan
	clock  clock
	stages []stage // after the source, in plan order; the last is the output
	row    []Cell
	par    parallel // the run's split over workers (WithWorkers)
	// own, in a worker of a parallel run, decides whether a match is this
	// worker's to emit (parallel_run.go).
	own func(b *planner.Binding) bool
}

// tick counts one step of a search, a construction or a scan of held
// state. Every tickEvery steps it looks at ctx, since the event loop only
// looks between events and one event's search may run for minutes
// without completing a match.
func (r *runner) tick() { r.steps.tick(r) }

// tickN counts n steps at once.
func (r *runner) tickN(n uint) { r.steps.tickN(r, n) }

// ticker is a count of steps that looks at r's ctx every tickEvery: the
// runner's, or an engine's own that it reports.
type ticker uint

func (t *ticker) tick(r *runner) {
	if *t++; *t%tickEvery == 0 {
		r.checkCancel()
	}
}

func (t *ticker) tickN(r *runner, n uint) {
	if before := uint(*t); before/tickEvery != (before+n)/tickEvery {
		r.checkCancel()
	}
	*t += ticker(n)
}

// checkCancel stays out of line so that tick inlines into the loops.
//
//go:noinline
func (r *runner) checkCancel() {
	if err := r.ctx.Err(); err != nil {
		panic(cancelled{err})
	}
}

// source is the engine of a plan's Source: it reads each event and pushes
// what it completes to the next stage; advance says the stream has reached
// ts, finish that it has ended.
type source interface {
	process(ev *event.Event)
	advance(ts int64)
	finish()
	// report puts the engine's own counters into its operators' stats.
	report(s *Stats)
}

func newRunner(plan *planner.Plan, emit Emit) *runner { return newRunnerOf(plan, emit, false) }

// newRunnerOf is newRunner for a split run's worker when split is set: its
// engines' small arrays get cache lines of their own (ofRun).
func newRunnerOf(plan *planner.Plan, emit Emit, split bool) *runner {
	r := &runner{plan: plan, emit: emit, split: split, lastTS: math.MinInt64}
	r.row = ofRun[Cell](r, len(plan.Columns))
	r.out = r.row
	nsrc := len(plan.Source.Operators())
	r.stats.Operators = make([]OpStats, nsrc+len(plan.Stages)+1)
	r.clock.stats = &r.stats
	r.store = newStore(plan)
	next := r.newStage(nsrc+len(plan.Stages), plan.Output, nil)
	r.stages = []stage{next}
	for i := len(plan.Stages) - 1; i >= 0; i-- {
		next = r.newStage(nsrc+i, plan.Stages[i], next)
		r.stages = append([]stage{next}, r.stages...)
	}
	r.src = r.newSource(plan.Source, next)
	r.timed = r.timedOf()
	return r
}

// newSource builds the engine of a source operator, and newStage that of a
// stage: the one place that maps the planner's operator types to engines.
// A switch, not a registry: the operator types are the planner's, exec is
// the only package that runs them, so nothing registers from elsewhere;
// a type without an engine fails here, when the run starts, with its name.
func (r *runner) newSource(op planner.Source, next stage) source {
	switch op := op.(type) {
	case *planner.StackScan:
		return newStackSSC(r, op, next)
	case *planner.AISScan:
		return newAISSSC(r, op, next)
	case *planner.RunScan:
		return newRunScan(r, op, next) // a strategy plan, whatever the engine
	case *planner.ReCEP:
		r.store = &store{} // ReCEP reads its own buffers, pruned by the window
		return newReCEP(r, op, next)
	case *planner.Algebra:
		r.store = &store{} // the algebra keeps its own events
		if op.Join {
			return newAndJoin(r, op, next)
		}
		return newAlgebra(r, op, next)
	case *planner.Union:
		r.store = &store{} // each branch keeps its own
		return newUnion(r, op, next)
	}
	panic(fmt.Sprintf("exec: no engine for source %T", op))
}

// newStage builds the engine of the stage or output op, operator i of the
// plan.
func (r *runner) newStage(i int, op planner.Operator, next stage) stage {
	base := opBase{r: r, id: i, next: next}
	switch op := op.(type) {
	case *planner.ClosureOp:
		return &closureStage{opBase: base, op: op, pending: r.newPending(op.Comps)}
	case *planner.Selection:
		return &selectionStage{opBase: base, op: op}
	case *planner.Window:
		return &windowStage{opBase: base, op: op}
	case *planner.Negation:
		return &negationStage{opBase: base, op: op, pending: r.newPending(op.Comps)}
	case *planner.Transformation:
		return &transformStage{opBase: base, op: op}
	}
	panic(fmt.Sprintf("exec: no engine for operator %T", op))
}

// keepWindow is how far back, in ticks, negation and closure collection
// (and any-match's closure candidates) may still look: a sequence
// completing at ts has its first event at or after ts-W, and a postponed
// one reads back to ts(P1)-W with ts(P1) not before ts-W. 0 when the
// source does not bound its state by the window.
func (r *runner) keepWindow() int64 {
	if w, ok := r.plan.Source.Bounded(); ok {
		return satAdd(satAdd(w, w), 1)
	}
	return 0
}

// advance tells every operator that follows time that the stream has
// reached ts. Out of line, so that pass inlines into feed.
//
//go:noinline
func (r *runner) advance(ts int64) {
	for _, t := range r.timed {
		t.advance(ts)
	}
}

// untimed marks the sources and stages whose advance does nothing (when
// untimed returns true), which the runner then does not call for each
// event.
type untimed interface{ untimed() bool }

// timedOf lists the operators that follow time: the source, then the
// stages in plan order.
func (r *runner) timedOf() []interface{ advance(int64) } {
	var ts []interface{ advance(int64) }
	if u, ok := r.src.(untimed); !ok || !u.untimed() {
		ts = append(ts, r.src)
	}
	for _, s := range r.stages {
		if u, ok := s.(untimed); !ok || !u.untimed() {
			ts = append(ts, s)
		}
	}
	return ts
}

func (r *runner) finish() {
	r.src.finish()
	for _, s := range r.stages {
		s.finish()
	}
}

// instances reports Stats.Instances as the counter of a scan's operator.
func instances(s *Stats) {
	s.Operators[0].Counters = []Counter{{"instances", s.Instances}}
}

// timeless is embedded by the sources that do not follow time.
type timeless struct{}

func (timeless) advance(int64) {}
func (timeless) finish()       {}
func (timeless) untimed() bool { return true }

// clock attributes time to operators: each hand-over of a sequence from
// one operator to the next charges the time since the previous hand-over.
type clock struct {
	on    bool
	cur   int
	last  time.Time
	stats *Stats
}

func (k *clock) switchTo(op int) int {
	if !k.on {
		return 0
	}
	now := time.Now()
	k.stats.Operators[k.cur].Time += now.Sub(k.last)
	k.last = now
	prev := k.cur
	k.cur = op
	return prev
}
