package exec

import (
	"context"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// WorkerStats counts one worker's share of a parallel run.
type WorkerStats struct {
	Events, Matches int64
	MaxBuffer       int64 // Stats.MaxBuffer: the longest of its runs'
}

// worker is one runner of a parallel run.
type worker struct {
	// hand: its tally counts the worker's matches in bulk until it reads
	// an event lacking the attribute (every match before is of its own
	// partitions), then it emits them; with rk, runCol is the column of
	// the last positive component's event.
	hand
	id  int32
	by  *planner.Equiv
	pos int64
	// key is the partition of the last match own saw, keyed whether it
	// has seen one, mine whether it is this worker's.
	key         event.Value
	keyed, mine bool
	// keyEv is the last event whose value key is (keyOfLast).
	keyEv  *event.Event
	assign *assigner // the run's
	// wild: this worker emits the matches whose positive events all lack
	// the attribute; their negations and closures read every partition's
	// events, so its store holds them all.
	wild bool
	// closureKeys: a match's partition is the value of its first positive
	// event that has the attribute, else of its first closure element
	// that has it, on a run scan, which takes a closure's elements as
	// events of the run's partition; else of its positive events only.
	// The other engines collect a closure from the store once a match's
	// positive events are found, which every worker does for the matches
	// whose positive events lack the attribute, but only the wild worker's
	// store holds every partition's events.
	closureKeys bool
}

// own decides on a match's binding whether it is the worker's, by its
// partition (closureKeys).
func (w *worker) own(b *planner.Binding) bool {
	if w.closureKeys {
		w.setKey(event.PartitionKey(w.r.equivRef(w.by, b)))
		return w.mine
	}
	pos := w.r.plan.Positives
	if last := b.Events[pos[len(pos)-1]]; last == w.keyEv && last != nil || w.keyOfLast(last) {
		return w.mine
	}
	key := event.Value{}
	for _, i := range pos {
		if v := w.by.Value(b.Events[i]); !v.IsAbsent() {
			key = event.PartitionKey(v)
			break
		}
	}
	w.setKey(key)
	return w.mine
}

// keyOfLast sets the worker's key to the value of last, a match's last
// positive event, when it has the attribute (the match's events that have
// it agree on it), and says whether it did. The matches that one event
// completes share it, so own and emit ask only when last changes (keyEv).
func (w *worker) keyOfLast(last *event.Event) bool {
	if v := w.by.Value(last); !v.IsAbsent() {
		w.keyEv = last
		w.setKey(event.PartitionKey(v))
		return true
	}
	w.keyEv = nil
	return false
}

// setKey notes the partition of the match the worker emits, and whether
// it is the worker's.
func (w *worker) setKey(key event.Value) {
	if !key.Identical(w.key) || !w.keyed {
		// One partition's matches tend to come together: hash once.
		// own asks before the runner counts the match: its count's run
		// ends at the match before.
		w.keep.close(w.res, w.r.stats.Matches)
		w.key, w.keyed, w.mine = key, true, w.assign.owners.of(key) == w.id
	}
}

func (w *worker) emit(row []Cell) bool {
	if w.keep.open && w.rk == nil {
		w.keep.more(w.res, row) // own has seen its partition
		return true
	}
	w.keep.close(w.res, w.r.stats.Matches-1)
	w.runEv = nil
	if w.rk != nil {
		if e := row[w.runCol].Event; (e != w.keyEv || e == nil) && !w.keyOfLast(e) {
			w.partitionOfRow(row)
		}
		if !w.mine {
			w.dropped++
			return true
		}
		w.runEv = w.keyEv
	}
	w.keep.keep(w.res, w.pos, w.key, row)
	w.keep.hold(w.r.stats.Matches)
	return true
}

// endItem closes the run held at the end of the item the worker is at.
func (w *worker) endItem() {
	if w.tally.on {
		// The runner emits nothing while it counts: no run is held.
		if n := w.tally.take(w.r); n > 0 {
			w.res.count(w.pos, n)
		}
		return
	}
	w.keep.close(w.res, w.r.stats.Matches)
	w.runEv = nil
}

// untally has the worker emit its matches from the next item on: one
// lacking the attribute makes matches with every worker's events, and a
// match of those only is the wild worker's.
func (w *worker) untally() {
	w.tally.on = false
	w.r.counts, w.r.emit = false, w.heldEmit(w.emit)
}

// step runs one batch (b nil: the stream's end, at position w.pos), and
// returns what it emitted last; send hands on the results before, each
// marked more.
func (w *worker) step(b *batch, send func(*result) bool) (res *result) {
	w.fresh()
	defer func() {
		if rec := recover(); rec != nil {
			if err := w.r.recovered(rec); err != nil {
				w.res.err, w.res.errPos = err, w.pos
			}
		}
		w.endItem()
		res = w.res
		sortRuns(res.matches)
	}()
	w.res.worker, w.res.batch = int(w.id), b
	if b == nil {
		w.r.finish()
		return
	}
	w.res.idle = b.idle
	items := w.assign.list(b, w.id)
	for k, it := range items {
		i, whose := int(it>>itemBits), it&(1<<itemBits-1)
		ev := b.items[i]
		w.pos = b.start + int64(i)
		if whose != otherItem {
			if whose == sharedItem && w.tally.on && !ev.IsTick() {
				w.untally()
			}
			if err := w.r.feed(ev); err != nil {
				w.res.err, w.res.errPos = err, w.pos
				return
			}
		} else {
			w.r.pass(ev.TS)
			if w.wild && !ev.IsTick() {
				w.r.store.add(ev)
			}
		}
		w.endItem()
		if k < len(items)-1 && !w.keep.counts && w.res.full() { // a count's is never full
			part := w.res
			part.more = true
			sortRuns(part.matches)
			if !send(part) {
				return // stopped: the batch's last result is not sent either
			}
			w.fresh()
			w.res.worker, w.res.batch, w.res.idle = int(w.id), b, b.idle
		}
	}
	return
}

// runParallel runs plan on sp.Workers workers.
func runParallel(ctx context.Context, plan *planner.Plan, sp Split, events iter.Seq[*event.Event], emit Emit, par parallel, opts []Option) (*Stats, error) {
	n := sp.Workers
	c := newCrew(ctx, plan, n, emit, par, resultsInFlight)
	defer c.cancel()
	ctx = c.ctx
	// The live pauses need the results batch by batch: in order.
	anyOrder := par.anyOrder && par.live == nil
	ins := make([]chan *batch, n)
	outs := make([]chan *result, n)
	a := &assigner{owners: newOwners(n), by: sp.By}
	workers := make([]*worker, n)
	for i := range n {
		w := &worker{id: int32(i), by: sp.By, assign: a}
		workers[i] = w
		w.wild = a.owners.of(event.Value{}) == w.id
		_, w.closureKeys = plan.Source.(*planner.RunScan)
		w.keep = newKeeper(c.m.layout, par.chunks)
		w.r = workerRunner(ctx, plan, w.emit, opts)
		if w.rk = rowKeyOf(plan, sp.By); w.rk == nil {
			w.r.own = w.own
		} else {
			w.runCol = w.rk.evs[len(w.rk.evs)-1]
			w.r.emit = w.heldEmit(w.emit)
			if tallies(par.chunks, &w.keep) {
				w.tally.start(w.r)
			}
		}
		// A worker reads only its own items unless it needs the others':
		// they are time passing, which releases nothing when no operator
		// follows time, and events its store need not hold.
		if len(w.r.timed) > 0 || w.wild && slices.Contains(w.r.store.kept, true) {
			a.all = append(a.all, w.id)
		}
		ins[i] = make(chan *batch, 2)
		switch {
		case !anyOrder:
			outs[i] = make(chan *result, 2)
		case i == 0:
			outs[i] = make(chan *result, 2*n)
		default:
			outs[i] = outs[0] // one channel: the results as they come
		}
		w.free = c.m.frees[i]
	}
	for _, w := range workers { // once a.all is whole
		c.work(func() {
			w.loop(ctx, c.start, ins[w.id], outs[w.id])
			if !anyOrder {
				close(outs[w.id])
			}
		})
	}
	d := &dispatcher{ctx: ctx, ins: ins, free: make(chan *batch, 2)}
	if par.live != nil {
		par.live.d = d // a Live is one run's
	}
	c.dispatch(func() { d.run(events) })
	m := c.m
	m.batches = d.free
	var ended bool
	var err error
	if anyOrder {
		closeAfter(c, outs[0])
		ended, err = m.mergeAny(ctx, n, outs[0])
	} else {
		ended, err = m.merge(ctx, outs, par.live)
	}
	// Once ended, the dispatcher has closed the batches. A stopped run
	// does not wait for it: a live stream may block it until its next
	// event, where it stops.
	stats := c.end(sp, ended)
	stats.Events = d.events.Load()
	if m.stop && m.stopBatch != nil {
		// One run stops there: the summary counts the same events.
		stats.Events = m.stopBatch.eventsTo(m.stopPos)
	}
	return stats, err
}

// newSplitStats are the empty stats of a split run on n workers.
func newSplitStats(plan *planner.Plan, n int) *Stats {
	return &Stats{Operators: make([]OpStats, len(plan.Operators())), Workers: make([]WorkerStats, n)}
}

// loop runs the worker's batches, then the stream's end; it sends one
// result per batch, the last with the worker's stats.
func (w *worker) loop(ctx context.Context, start time.Time, in <-chan *batch, out chan<- *result) {
	w.r.begin(start)
	send := func(res *result) bool {
		select {
		case out <- res:
			return res.err == nil
		case <-ctx.Done():
			return false
		}
	}
	for b := range in {
		// Read before the last result goes: once every worker's has, the
		// merge hands the batch back to the dispatcher, which reuses it.
		end := b.start + int64(len(b.items))
		if !send(w.step(b, send)) {
			return
		}
		w.pos = end
	}
	res := w.step(nil, send)
	w.r.uncount(w.dropped)
	w.r.end(start)
	res.stats = &w.r.stats
	send(res)
}

// uncount takes back from the run's counts the n matches that its
// engine delivered and its worker left to others (rowkey.go); the engine's
// report (end) counts the rest, or keeps the output's count.
func (r *runner) uncount(n int64) {
	r.stats.Matches -= n
	out := &r.stats.Operators[len(r.stats.Operators)-1]
	out.In -= n
	out.Out -= n
}

// add sums worker i's stats into a parallel run's.
func (s *Stats) add(w *Stats, i int) {
	s.Workers[i].Events += w.Events
	s.Workers[i].Matches += w.Matches
	s.Workers[i].MaxBuffer = max(s.Workers[i].MaxBuffer, w.MaxBuffer)
	s.Instances += w.Instances
	s.MaxBuffer = max(s.MaxBuffer, w.MaxBuffer)
	s.timed = w.timed
	for j := range s.Operators {
		o, wo := &s.Operators[j], w.Operators[j]
		o.In += wo.In
		o.Out += wo.Out
		o.Time += wo.Time
		for k, c := range wo.Counters {
			switch {
			case k < len(o.Counters) && strings.HasPrefix(c.Name, "max "):
				// A longest buffer is each worker's own: the run's is
				// the longest of them (each worker's: explainSplit).
				o.Counters[k].N = max(o.Counters[k].N, c.N)
			case k < len(o.Counters):
				o.Counters[k].N += c.N
			default:
				o.Counters = append(o.Counters, c)
			}
		}
	}
}
