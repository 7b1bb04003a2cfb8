package exec

import (
	"context"
	"sync"
	"time"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// What the two kinds of split run, by key (parallel_run.go) and by time
// segments (segments.go), share: their goroutines and how they end
// (crew), and how a worker's runner hands its rows to the worker's result
// for the merge (hand).

// crew is a split run's goroutines: the workers, the dispatcher, and the
// merge on the caller's, under the run's context, which end cancels.
type crew struct {
	ctx        context.Context
	cancel     context.CancelFunc
	start      time.Time
	wg         sync.WaitGroup
	dispatched chan struct{}
	m          *merger
}

// newCrew readies a split run of plan on n workers into emit (or
// par.chunks); the merge gives each worker back up to inFlight results
// for reuse.
func newCrew(ctx context.Context, plan *planner.Plan, n int, emit Emit, par parallel, inFlight int) *crew {
	c := &crew{start: time.Now(), dispatched: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(ctx)
	frees := make([]chan *result, n)
	for i := range frees {
		frees[i] = make(chan *result, inFlight)
	}
	c.m = &merger{emit: emit, frees: frees, stats: newSplitStats(plan, n), ctx: c.ctx, layout: layoutOf(plan)}
	if par.chunks != nil {
		c.m.chunks = newChunker(par.chunks, c.m.stats)
	}
	return c
}

// work runs a worker on its goroutine.
func (c *crew) work(run func()) { c.wg.Go(run) }

// dispatch runs the dispatcher on its goroutine.
func (c *crew) dispatch(run func()) {
	go func() {
		defer close(c.dispatched)
		run()
	}()
}

// closeAfter closes ch, the one channel of every worker's results (any
// order), once the workers have stopped.
func closeAfter[T any](c *crew, ch chan T) {
	go func() {
		c.wg.Wait()
		close(ch)
	}()
}

// end cancels the run, waits for its workers, and for its dispatcher too
// if dispatched, and returns the merge's stats of the run split as sp.
func (c *crew) end(sp Split, dispatched bool) *Stats {
	c.cancel()
	c.wg.Wait()
	if dispatched {
		<-c.dispatched
	}
	stats := c.m.stats
	stats.Elapsed = time.Since(c.start)
	stats.Split = &sp
	return stats
}

// workerRunner returns a worker's runner of plan, with the run's options
// but its split: the worker runs one share.
func workerRunner(ctx context.Context, plan *planner.Plan, emit Emit, opts []Option) *runner {
	r := newRunnerOf(plan, emit, true)
	r.ctx = ctx
	for _, o := range opts {
		o(r)
	}
	r.par = parallel{}
	return r
}

// hand is how a split run's worker keeps its runner's rows for the merge.
type hand struct {
	r    *runner
	res  *result
	free chan *result // the results the merge is done with, for reuse
	keep keeper
	// rk, when the rows tell a match's partition, decides at emit which
	// are the worker's (rowkey.go); dropped counts the matches it left
	// to others.
	rk      *rowKey
	dropped int64
	// tally: the runner counts the matches in bulk (tally).
	tally tally
	// A row is of the run held (keeper.hold) if its event at runCol is
	// runEv, the last positive event of the run's first row, which the
	// rows of one partition and position share; runCol < 0: every row
	// until the item's end.
	runCol int
	runEv  *event.Event
}

// fresh starts an empty result, one the merge is done with if there is.
func (h *hand) fresh() { h.res = freshResult(h.free, h.res) }

// heldEmit returns the runner's emit: a row of the run held goes to the
// keeper's run as it is, any other to emit. A closure, not a method
// value: one call a row, not two. Not inlined: the closure inlined into
// its caller's does not inline more.
//
//go:noinline
func (h *hand) heldEmit(emit Emit) Emit {
	return func(row []Cell) bool {
		if h.keep.open && (h.runCol < 0 || row[h.runCol].Event == h.runEv && h.runEv != nil) {
			if h.keep.events { // keeper.more, which does not inline
				h.res.moreEvents(row)
			} else {
				h.keep.moreRow(h.res, row)
			}
			return true
		}
		return emit(row)
	}
}
