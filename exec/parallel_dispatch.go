package exec

import (
	"context"
	"iter"
	"sync"
	"sync/atomic"

	"github.com/sase-cep/sase/event"
)

// batchSize is how many stream items go to the workers in one hand-off.
const batchSize = 8192

// batch is a run of stream items, shared read-only by every worker.
type batch struct {
	start int64          // the position of items[0] in the stream
	items []*event.Event // events and ticks
	idle  bool           // the stream paused after it (Live)
	// events counts the items that are events, not ticks; before, those
	// of the batches before.
	events, before int64
	// lists has each worker's items of the batch (assignAll), listed by
	// the first worker to read it (assigner).
	assign sync.Once
	lists  [][]int32
}

// eventsTo counts the events of the stream up to the batch's item at
// position pos, included: those a run stopped there has read.
func (b *batch) eventsTo(pos int64) int64 {
	n := b.before
	for _, ev := range b.items[:min(pos-b.start+1, int64(len(b.items)))] {
		if !ev.IsTick() {
			n++
		}
	}
	return n
}

// dispatcher hands the stream to the workers in batches; each worker
// picks its own events from them (owners).
type dispatcher struct {
	ctx context.Context
	ins []chan *batch
	// events counts the events read (the stats' Events).
	events atomic.Int64
	// free has the batches every worker is done with, for reuse (their
	// arrays of pointers are what the garbage collector scans).
	free chan *batch
	cur  *batch
	pos  int64 // the position of the next batch's first item
}

func (d *dispatcher) run(events iter.Seq[*event.Event]) {
	defer func() {
		for _, in := range d.ins {
			close(in)
		}
	}()
	for ev := range events {
		b := d.cur // nil after a pause's flush
		if b == nil {
			b = d.batch()
		}
		if !ev.IsTick() {
			b.events++
		}
		b.items = append(b.items, ev)
		if len(b.items) == batchSize && !d.flush() {
			return
		}
	}
	d.flush()
}

func (d *dispatcher) batch() *batch {
	if d.cur == nil {
		select {
		case b := <-d.free:
			*b = batch{start: d.pos, before: d.events.Load(), items: b.items[:0], lists: b.lists}
			d.cur = b
		default:
			d.cur = &batch{start: d.pos, before: d.events.Load(), items: make([]*event.Event, 0, batchSize)}
		}
	}
	return d.cur
}

// pause hands on the items so far, marked for the merge to call idle
// after their matches.
func (d *dispatcher) pause() {
	d.batch().idle = true
	d.flush()
}

// flush hands the current batch to every worker.
func (d *dispatcher) flush() bool {
	b := d.cur
	if b == nil {
		return d.ctx.Err() == nil
	}
	d.cur = nil
	d.pos += int64(len(b.items))
	d.events.Add(b.events)
	for _, in := range d.ins {
		select {
		case in <- b:
		case <-d.ctx.Done():
			return false
		}
	}
	return true
}
