package exec

import (
	"context"
	"iter"
	"math"
	"sync/atomic"
	"time"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// A segmented run splits a query that does not partition over a loaded
// stream by time. The dispatcher cuts the stream into segments of
// consecutive items; a worker runs a fresh runner over one segment,
// starting at the items up to Overlap ticks before the segment's first,
// and emits only the matches that come out at the segment's own items (the
// last segment's, also at the stream's end). A match comes out at one item
// of the stream, so one segment emits it: none twice, none lost. The items
// read again before the cut give the runner what one run holds there for
// every match that can come out from the cut on (overlap says why), so a
// segment emits exactly the matches one run emits at its items, in the
// same order, and the merge emits the segments one after the other: the
// one-worker order, whatever the number of workers. Ties need no care: a
// cut between two events of one ts only changes where the reading again
// starts. The worker of the segment the merge is at emits its rows itself,
// once the merge has emitted those it had buffered; the others buffer
// theirs.
//
// One exception: an engine that keeps state per partition goes through the
// partitions in the order they were made, which depends on the whole
// stream before. A segmented run of a query with an equivalence test
// therefore puts the matches that one item completes or releases in the
// order of their partition values, as a partitioned run does.

// segmentItems is the fewest items of a segment's own, and overlapRatio
// how many times the items it reads again a segment's own are at least,
// so that reading again costs at most 1/overlapRatio more. Tests make them
// small to cut often (export_test.go).
var (
	segmentItems = 1 << 14
	overlapRatio = 8
)

// resultsInFlight bounds, per worker, the results of the segments in
// flight (about three a segment, 2n+1 segments): the merge gives back that
// many to each worker for reuse, so that a run in its stride allocates no
// new arenas (pointer arrays, which the garbage collector scans).
const resultsInFlight = 8

// encodedInFlight is how many more results of encoded rows (Chunks, in
// results of resultBytes: 32 MiB) a segment sends without waiting on the
// merge, and each worker keeps for reuse: a segment's output waits for the
// segments before it, so the results of the segments in flight are many.
const encodedInFlight = 64

// segment is one time segment of a segmented run.
type segment struct {
	items []*event.Event // from the first item read again to its last
	cut   int            // items[cut:] are the segment's own
	last  bool           // the stream ends after it
	// out has its matches in batches, the last with its runner's stats;
	// it is closed at the segment's end or when its worker stops.
	out    chan *result
	worker int // the worker that ran it
	// head says the merge is at the segment: its worker hands over (a
	// result marked so) and, once resume is closed (the rows before are
	// out), emits the rest itself, with no copy.
	head   atomic.Bool
	resume chan struct{}
	done   bool // the merge has its last result
	// emitted is 1 + the item of the last row its worker emitted itself:
	// what a run stopped there has read, when the stop leaves no result.
	emitted atomic.Int64
}

// runSegments runs plan on sp.Workers workers over time segments.
func runSegments(ctx context.Context, plan *planner.Plan, sp Split, events iter.Seq[*event.Event], emit Emit, par parallel, opts []Option) (*Stats, error) {
	n := sp.Workers
	c := newCrew(ctx, plan, n, emit, par, resultsInFlight*n+encodedInFlight)
	defer c.cancel()
	ctx = c.ctx
	// order has the segments in stream order for the merge: its room
	// bounds the segments (and their matches) in flight. WithAnyOrder
	// reads the results as they come from any, and nothing from order.
	order := make(chan *segment, 2*n)
	var any chan *result
	if par.anyOrder {
		order, any = nil, make(chan *result, 2*n)
	}
	jobs := make(chan *segment)
	for i := range n {
		w := &segWorker{id: i, plan: plan, ctx: ctx, opts: opts, by: sp.By, sink: emit, any: any}
		w.keep, w.free, w.runCol = newKeeper(c.m.layout, par.chunks), c.m.frees[i], -1
		if w.by != nil {
			w.rk = rowKeyOf(plan, w.by)
		}
		w.atEmit = w.by == nil || w.rk != nil
		w.counting = w.atEmit && tallies(par.chunks, &w.keep)
		w.emitHeld = w.heldEmit(w.emit)
		c.work(func() {
			for seg := range jobs {
				if !w.run(seg) {
					return
				}
			}
		})
	}
	d := &segDispatcher{ctx: ctx, jobs: jobs, order: order, overlap: sp.Overlap}
	c.dispatch(func() { d.run(events) })
	var err error
	if any != nil {
		closeAfter(c, any)
		err = c.m.mergeSegmentsAny(ctx, any)
	} else {
		err = c.m.mergeSegments(ctx, order)
	}
	return c.end(sp, true), err // a loaded stream does not block the dispatcher
}

// segDispatcher cuts the stream into segments.
type segDispatcher struct {
	ctx       context.Context
	jobs      chan<- *segment
	order     chan<- *segment
	overlap   int64
	all       []*event.Event // the items from the next segment's first read
	cut, from int            // the next segment's first own item, first item read
}

func (d *segDispatcher) run(events iter.Seq[*event.Event]) {
	defer close(d.jobs)
	if d.order != nil {
		defer close(d.order)
	}
	// A segment ends at item end; the loop, per event, does little more
	// than one run's.
	end := segmentItems
	lastTS := int64(math.MinInt64)
	for ev := range events {
		d.all = append(d.all, ev)
		lastTS = max(lastTS, ev.TS)
		if len(d.all) < end {
			continue
		}
		if !d.send(false) {
			return
		}
		d.cut, d.from = len(d.all), len(d.all)
		lo := satSub(lastTS, d.overlap)
		for d.from > 0 && d.all[d.from-1].TS >= lo {
			d.from--
		}
		size := max(segmentItems, overlapRatio*(d.cut-d.from))
		// The segments sent hold what they read: drop it here, so that
		// the items kept are those of the segments in flight.
		d.all = d.all[d.from:]
		d.cut, d.from = d.cut-d.from, 0
		end = d.cut + size
	}
	d.send(true)
}

// send hands the segment from d.cut to the items read so far to the merge
// and a worker.
func (d *segDispatcher) send(last bool) bool {
	seg := &segment{items: d.all[d.from:len(d.all):len(d.all)], cut: d.cut - d.from, last: last, resume: make(chan struct{})}
	// One batch of matches per batchSize items, and the last: the segment
	// never waits on the merge, but with many encoded rows.
	seg.out = make(chan *result, (len(d.all)-d.cut)/batchSize+2+encodedInFlight)
	for _, ch := range []chan<- *segment{d.order, d.jobs} {
		if ch == nil {
			continue // WithAnyOrder
		}
		select {
		case ch <- seg:
		case <-d.ctx.Done():
			return false
		}
	}
	return true
}

// segWorker runs segments, one fresh runner each.
type segWorker struct {
	// hand: runCol < 0, a row held is of the item's run; r is the
	// segment's runner; rk reads the matches' partition (By) when atEmit;
	// a tally counts the matches in bulk, and the worker keeps those of
	// the segment's own items (atEmit).
	hand
	id     int
	plan   *planner.Plan
	ctx    context.Context
	opts   []Option
	by     *planner.Equiv // Split.By
	mine   bool           // the runner is at the segment's own items
	pos    int64          // the item it is at, in the segment
	key    event.Value    // the partition of the match it emits
	sink   Emit           // the run's, for the rows it emits itself
	direct bool           // it emits them itself (segment.head)
	seg    *segment       // the segment it runs
	any    chan<- *result // WithAnyOrder: where its results go
	// atEmit: the worker decides at emit which matches are the segment's,
	// the runner's own nil (rowkey.go), and counts those it drops.
	atEmit   bool
	emitHeld Emit // heldEmit's
	counting bool
}

func (w *segWorker) emit(row []Cell) bool {
	if w.direct {
		w.res.direct++
		w.seg.emitted.Store(w.pos + 1)
		if !w.sink(row) {
			w.res.stopped = true
			return false
		}
		return true
	}
	if w.atEmit {
		if !w.mine {
			w.dropped++
			return true
		}
		if w.rk != nil {
			w.key, _ = w.rk.key(row)
		}
	}
	w.keep.keep(w.res, w.pos, w.key, row)
	if w.by == nil { // else the next row's key may differ
		w.keep.hold(w.r.stats.Matches)
	}
	return true
}

// endItem closes the run held at the end of the item the worker is at.
func (w *segWorker) endItem() { w.keep.close(w.res, w.r.stats.Matches) }

// take takes the tally of the matches since the last take: the
// segment's, at the item it is at, when the worker is at its own items.
// A segment's count needs no position but its last (an error's cut is
// the segment's own), so the worker takes it at its cut and each send.
func (w *segWorker) take() {
	switch n := w.tally.take(w.r); {
	case n == 0:
	case w.mine:
		w.res.count(w.pos, n)
	default:
		w.dropped += n
	}
}

// run runs one segment and reports whether the worker goes on: it stops
// at an error (which its last result carries) or a cancel.
func (w *segWorker) run(seg *segment) (ok bool) {
	seg.worker, w.seg = w.id, seg
	defer close(seg.out)
	r := workerRunner(w.ctx, w.plan, w.emitHeld, w.opts)
	w.r = r
	if !w.atEmit {
		r.own = func(b *planner.Binding) bool {
			if w.mine {
				w.key = event.PartitionKey(r.equivRef(w.by, b))
			}
			return w.mine
		}
	}
	w.fresh()
	w.direct, w.dropped = false, 0
	if w.counting {
		w.tally.start(r)
	}
	var out chan<- *result = seg.out
	if w.any != nil {
		out = w.any
	}
	send := func() bool {
		w.endItem()
		if w.tally.on {
			w.take()
		}
		if w.by != nil {
			sortRuns(w.res.matches)
		}
		w.res.worker, w.res.seg = w.id, seg
		select {
		case out <- w.res:
			return w.res.err == nil
		case <-w.ctx.Done():
			return false
		}
	}
	start := time.Now()
	r.begin(start)
	defer func() {
		if rec := recover(); rec != nil {
			if w.res.err = r.recovered(rec); w.res.err == nil {
				w.res.err = w.ctx.Err()
			}
			w.res.errPos = w.pos
			ok = false
			if w.ctx.Err() == nil || w.res.stopped {
				send()
			}
		}
	}()
	// The one-run order needs no sorting by partition to emit in place
	// (Split.By). Rows encoded for Chunks cost the merge little: they
	// stay here.
	handsOver := w.by == nil && w.keep.chunks == nil && w.any == nil
	for i, ev := range seg.items {
		w.endItem()
		if i == seg.cut && w.tally.on {
			w.take() // the matches before the cut are another segment's
		}
		w.mine, w.pos = i >= seg.cut, int64(i)
		if handsOver && w.mine && !w.direct && seg.head.Load() {
			w.res.handover = true
			if !send() {
				return false
			}
			w.fresh()
			select {
			case <-seg.resume:
			case <-w.ctx.Done():
				return false
			}
			w.direct = true
		}
		if err := r.feed(ev); err != nil {
			w.res.err, w.res.errPos = err, w.pos
			send()
			return false
		}
		if (i%batchSize == batchSize-1 || w.res.full()) && w.mine && !w.direct {
			if !send() {
				return false
			}
			w.fresh()
		}
	}
	w.endItem()
	if w.tally.on {
		w.take() // a last segment may have no items of its own
	}
	w.mine, w.pos = true, int64(len(seg.items))
	if seg.last {
		r.finish()
	}
	w.endItem()
	if w.tally.on {
		w.take()
		w.tally.on = false // the counts are taken: uncount is not a take's
	}
	r.uncount(w.dropped)
	r.end(start)
	w.res.stats = &r.stats
	return send()
}

// mergeSegments emits the segments' matches in stream order and sums the
// stats of their runs; it stops at the first error.
func (m *merger) mergeSegments(ctx context.Context, order <-chan *segment) error {
	for seg := range order {
		seg.head.Store(true)
		merged := int64(-1) // the item of the segment's last result merged
		for {
			res, ok := seg.next(ctx)
			if !ok {
				break
			}
			pos := res.lastPos()
			if stop, err := m.segmentResult(res); stop {
				return err
			}
			merged = max(merged, pos)
		}
		if !seg.done {
			// The run was stopped: it has read the segment's events up to
			// the last row out, merged or emitted by its worker, as one run
			// stopped there would have.
			m.stats.Events += seg.eventsTo(max(merged, seg.emitted.Load()-1))
			return ctx.Err()
		}
	}
	return ctx.Err()
}

// mergeSegmentsAny emits the segments' matches as they come.
func (m *merger) mergeSegmentsAny(ctx context.Context, results <-chan *result) error {
	for res := range results {
		if stop, err := m.segmentResult(res); stop {
			return err
		}
	}
	return ctx.Err()
}

// segmentResult emits one result of a segment, counts it and gives it
// back to its worker; stop says the run ends here, with err.
func (m *merger) segmentResult(res *result) (stop bool, err error) {
	seg, stats := res.seg, m.stats
	defer m.free(res)
	if m.chunks != nil && m.chunks.sums {
		if !m.chunks.sum([]*result{res}, -1) {
			stats.Events += seg.eventsTo(res.lastPos())
			return true, nil
		}
	} else {
		for _, r := range res.matches {
			if !m.emitRun(res, r) {
				stats.Events += seg.eventsTo(r.pos)
				return true, nil
			}
		}
	}
	if !m.flush() {
		stats.Events += seg.eventsTo(res.matches[len(res.matches)-1].pos)
		return true, nil
	}
	stats.Matches += res.direct
	switch {
	case res.stopped:
		stats.Events += seg.eventsTo(res.errPos)
		return true, nil
	case res.handover:
		close(seg.resume)
	case res.err != nil:
		stats.Events += seg.eventsTo(res.errPos)
		return true, res.err
	case res.stats != nil:
		stats.add(res.stats, seg.worker)
		stats.Segments++
		stats.Events += seg.eventsTo(int64(len(seg.items)))
		seg.done = true
	}
	return false, nil
}

// next waits for the segment's next result; false when it has no more,
// or the run was stopped (its worker may have stopped before taking it).
func (seg *segment) next(ctx context.Context) (*result, bool) {
	select {
	case r, ok := <-seg.out:
		return r, ok
	case <-ctx.Done():
		return nil, false
	}
}

// eventsTo counts the segment's own events up to its item pos, included:
// the events a run stopped there has read.
func (seg *segment) eventsTo(pos int64) int64 {
	n := int64(0)
	// pos may be before the cut: an error there, where one run would have
	// stopped too, with the segments before.
	for _, ev := range seg.items[seg.cut:max(seg.cut, min(int(pos)+1, len(seg.items)))] {
		if !ev.IsTick() {
			n++
		}
	}
	return n
}
