// Package exec runs query plans over event streams. An engine reads events
// one at a time, keeps state bounded by the window where the plan allows,
// and hands each match to a callback as soon as it is complete.
package exec

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// Cell is one column of an output row: a value, an event, or a closure's
// list, as the plan's column says.
type Cell struct {
	Value event.Value
	Event *event.Event
	List  []*event.Event
}

// Emit receives each match as a row of cells, valid only during the call.
// Returning false stops the run.
type Emit func(row []Cell) bool

// OpStats counts one operator's input and output sequences and its time.
type OpStats struct {
	In, Out int64
	Time    time.Duration
}

// Stats describes a run.
type Stats struct {
	Ops       []OpStats // by plan operator index
	Events    int64     // events read
	Matches   int64     // matches emitted
	Instances int64     // NFA state instances created on the stack
	// MaxBuffer is ReCEP's longest element buffer (events held at once).
	MaxBuffer int64
	Elapsed   time.Duration
	timed     bool
	buffers   bool // ReCEP: report MaxBuffer instead of Instances
}

// Annotate formats an operator's counters for EXPLAIN ANALYZE.
func (s *Stats) Annotate(op int) string {
	o := s.Ops[op]
	text := fmt.Sprintf("(in=%d out=%d", o.In, o.Out)
	if s.timed {
		text += fmt.Sprintf(" time=%s", o.Time.Round(time.Microsecond))
	}
	switch {
	case op == 0 && s.buffers:
		text += fmt.Sprintf(" max buffer=%d", s.MaxBuffer)
	case op == 0:
		text += fmt.Sprintf(" instances=%d", s.Instances)
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
// early when ctx is cancelled (returning ctx's error) or emit returns false.
func Run(ctx context.Context, plan *planner.Plan, events iter.Seq[*event.Event], emit Emit, opts ...Option) (stats *Stats, err error) {
	r := newRunner(plan, emit)
	r.ctx = ctx
	for _, o := range opts {
		o(r)
	}
	r.stats.timed = r.clock.on
	start := time.Now()
	r.clock.last = start
	defer func() {
		r.stats.Elapsed = time.Since(start)
		r.clock.switchTo(r.clock.cur) // charge the time since the last hand-over
		if rec := recover(); rec != nil {
			switch e := rec.(type) {
			case *planner.RuntimeError:
				err = e // it names the expression, with its position
			case cancelled:
				err = e.err
			case error:
				if e != errStopped {
					panic(rec)
				}
			default:
				panic(rec)
			}
		}
		stats = &r.stats
	}()
	var lastTS int64
	keep := r.keepWindow()
	for ev := range events {
		if r.stats.Events&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return &r.stats, err
			}
			if keep > 0 {
				r.store.prune(satSub(lastTS, keep))
			}
		}
		r.stats.Events++
		if ev.TS > lastTS || r.stats.Events == 1 {
			r.advance(ev.TS)
			lastTS = ev.TS
		}
		r.store.add(ev)
		r.stats.Ops[0].In++
		r.ssc.process(ev)
	}
	r.finish()
	return &r.stats, nil
}

// runner holds the state of one run: the event store that negation and
// closure read, the sequence scan, and the pipeline of operators after it.
type runner struct {
	plan   *planner.Plan
	stats  Stats
	clock  clock
	store  *store
	ssc    sequencer
	runs   *runScan // a strategy plan's run scan, which also follows time
	stages []stage  // after SSC, in plan order
	emit   Emit
	row    []Cell
	ctx    context.Context
	steps  uint
}

// tick counts one step of a search, a construction or a scan of held
// state. Every tickEvery steps it looks at ctx, since the event loop only
// looks between events and one event's search may run for minutes
// without completing a match.
func (r *runner) tick() {
	if r.steps++; r.steps%tickEvery == 0 {
		r.checkCancel()
	}
}

// checkCancel stays out of line so that tick inlines into the loops.
//
//go:noinline
func (r *runner) checkCancel() {
	if err := r.ctx.Err(); err != nil {
		panic(cancelled{err})
	}
}

func newRunner(plan *planner.Plan, emit Emit) *runner {
	r := &runner{plan: plan, emit: emit, row: make([]Cell, len(plan.Columns))}
	r.stats.Ops = make([]OpStats, len(plan.Ops))
	r.clock.stats = &r.stats
	r.store = newStore(plan)
	var next stage
	for i := len(plan.Ops) - 1; i >= 1; i-- {
		next = r.newStage(i, plan.Ops[i], next)
		r.stages = append([]stage{next}, r.stages...)
	}
	if c, ok := plan.Ops[0].(*planner.EventCache); ok {
		r.store = &store{} // ReCEP reads its own buffers, pruned by the window
		r.ssc = newEventCache(r, c, next)
		return r
	}
	if scan, ok := plan.Ops[0].(*planner.RunScan); ok {
		r.runs = newRunScan(r, scan, next) // a strategy plan, whatever the engine (docs/STRATEGIES.md)
		r.ssc = r.runs
		return r
	}
	r.ssc = newSequencer(r, plan.Ops[0].(*planner.SSC), next)
	return r
}

// sequencer is an implementation of SSC: it reads each event and pushes
// every sequence it completes to the next stage.
type sequencer interface {
	process(ev *event.Event)
}

// newSequencer picks the SSC implementation for the plan's shape.
func newSequencer(r *runner, op *planner.SSC, next stage) sequencer {
	if op.AIS {
		return newAISSSC(r, op, next)
	}
	return newStackSSC(r, op, next)
}

// keepWindow is how far back, in ticks, negation and closure collection
// may still look: a sequence completing at ts has its first event at or
// after ts-W, and a postponed one reads back to ts(P1)-W with ts(P1) not
// before ts-W. 0 when the plan does not bound its state by the window.
func (r *runner) keepWindow() int64 {
	if ssc, ok := r.plan.Ops[0].(*planner.SSC); ok && ssc.WindowPushed {
		return satAdd(satAdd(ssc.Window, ssc.Window), 1)
	}
	// A live run started at or after ts-W; any-match reads its closure's
	// candidates from there on, negation back to W before its first event.
	if scan, ok := r.plan.Ops[0].(*planner.RunScan); ok && scan.HasWindow {
		return satAdd(satAdd(scan.Window, scan.Window), 1)
	}
	return 0
}

// advance tells every operator that the stream has reached ts.
func (r *runner) advance(ts int64) {
	if r.runs != nil {
		r.runs.advance(ts)
	}
	for _, s := range r.stages {
		s.advance(ts)
	}
}

func (r *runner) finish() {
	if r.runs != nil {
		r.runs.finish()
	}
	for _, s := range r.stages {
		s.finish()
	}
}

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
	k.stats.Ops[k.cur].Time += now.Sub(k.last)
	k.last = now
	prev := k.cur
	k.cur = op
	return prev
}
