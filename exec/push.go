package exec

import (
	"context"
	"time"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// Pusher is a run on one worker whose items are handed to it one at a
// time (Push, Advance) instead of drawn from an iterator: a rulebook feeds
// many runs from one pass over its stream. A run over the same items
// emits exactly what Run emits over them, in the same order.
type Pusher struct {
	// What PushAt reads first, together: a rulebook's push of a rule
	// finds it out of the cache.
	r       *runner
	items   *itemOrder
	ended   bool
	counted *Chunks
	start   time.Time
	err     error
	reading int32 // PushAt's position of the item it reads (Reading)
}

// NewPusher starts a run of plan on one worker (WithWorkers is ignored);
// its matches go to emit.
func NewPusher(ctx context.Context, plan *planner.Plan, emit Emit, opts ...Option) *Pusher {
	r := newRunner(plan, emit)
	r.ctx = ctx
	for _, o := range opts {
		o(r)
	}
	p := &Pusher{r: r, start: time.Now()}
	p.counted, p.items = r.prepare(p.start)
	return p
}

// prepare readies a run on one worker to read its first item: it returns
// the Chunks of a run that only counts its matches, or the hold of one
// that orders each item's matches, or neither.
func (r *runner) prepare(start time.Time) (counted *Chunks, items *itemOrder) {
	counted = r.countOnly()
	if counted == nil {
		items = r.holdItems()
	}
	// A limit's emit reads the run's count of matches at each.
	r.settled = counted == nil || r.counts
	r.begin(start)
	return counted, items
}

// Timed says whether the run follows time: then an item it is not
// pushed must still reach it as Advance, since the time that passes may
// release matches.
func (p *Pusher) Timed() bool { return p.r.timed != nil }

// Events is how many events the run has read so far.
func (p *Pusher) Events() int64 { return p.r.stats.Events }

// Err is the error that ended the run before Finish (a failing engine);
// nil while it runs, or once its consumer ended it.
func (p *Pusher) Err() error { return p.err }

// Push runs one item (an event or a tick); it returns false once the run
// has ended: its consumer wants no more matches, or it failed (Finish
// says why).
func (p *Pusher) Push(ev *event.Event) bool {
	return p.PushAt((&[1]*event.Event{ev})[:], firstItem[:])
}

// firstItem is the position list of Push's one item.
var firstItem = [1]int32{0}

// PushAt runs items[at[0]], items[at[1]], ... in order, as that many
// Pushes, until the run ends: a rule reads its share of a rulebook's
// batch in one call, which sets up the recover of a failing engine once,
// not at every item. The batch's share for each rule is a list of
// positions, not of events: half the memory, and none for the collector
// to scan or clear.
func (p *Pusher) PushAt(items []*event.Event, at []int32) bool {
	if p.ended {
		return false
	}
	defer p.recover()
	for _, i := range at {
		p.reading = i
		if err := p.r.feed(items[i]); err != nil {
			p.err, p.ended = err, true
			return false
		}
		if p.items != nil && !p.items.flush(&p.r.stats) {
			p.ended = true
			return false
		}
	}
	return true
}

// Reading is the position in PushAt's items of the item the run reads
// (or read last): a match emitted in PushAt was released by that item,
// which a live rulebook tags its line with.
func (p *Pusher) Reading() int32 { return p.reading }

// Advance moves the run's time to ts, as an item of another run's that
// this one does not read: the matches that wait on that time go out.
func (p *Pusher) Advance(ts int64) bool {
	if p.ended || ts <= p.r.lastTS {
		return !p.ended
	}
	defer p.recover()
	p.r.pass(ts)
	if p.items != nil && !p.items.flush(&p.r.stats) {
		p.ended = true
	}
	return !p.ended
}

// recover ends the run when its engine panics with an error or a stop,
// as Run does.
func (p *Pusher) recover() {
	if rec := recover(); rec != nil {
		p.err, p.ended = p.r.recovered(rec), true
		if p.items != nil && p.err != nil {
			p.items.flush(&p.r.stats)
		}
	}
}

// Finish ends the input: the matches that wait on its end go out, and it
// returns the run's stats and the error that ended it, if one did.
func (p *Pusher) Finish() (stats *Stats, err error) {
	defer func() {
		p.r.end(p.start)
		if p.counted != nil {
			p.counted.Put(nil, int(p.r.stats.Matches))
		}
		stats, err = &p.r.stats, p.err
	}()
	if p.ended {
		return
	}
	p.ended = true
	if p.err = p.r.ctx.Err(); p.err != nil {
		return // cancelled: what waits on the end is not complete, as in Run
	}
	defer p.recover()
	p.r.finish()
	if p.items != nil {
		p.items.flush(&p.r.stats)
	}
	return nil, nil // the deferred func sets them
}
