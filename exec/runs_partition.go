package exec

import (
	"container/heap"
	"math"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// buckets holds the runs by the value of the first partition test, so
// that an event reaches only the runs of its partition (docs/STRATEGIES.md, Runs): SASE's
// partitioned evaluation. Runs whose value is not fixed yet (their events
// lack the attribute) are in the wild bucket, which sees every event, and
// an event lacking the attribute reaches every bucket. Further partition
// tests are checked per run. A heap of deadlines finishes the runs of
// buckets that no event visits once the stream passes their window; the
// sweep then drops the empty buckets.
type buckets struct {
	partitions[bucket]
	by *planner.Equiv // nil: one bucket
	// slack delays the sweep of an idle bucket past its runs' deadlines:
	// a run past its window can do nothing, so finishing it late only
	// costs memory, unless it is a trailing closure's, due to be emitted.
	slack int64
	due   dueHeap
}

// bucket holds the runs of one partition value.
type bucket struct {
	runs []*run
	due  int64 // when queued: sweep it once the stream passes due
	idx  int   // position in the deadline heap, -1 when not queued
}

// newBucket makes a bucket; it starts empty, since the wild bucket's runs
// move on their own once an event keys them.
func newBucket(*bucket) *bucket { return &bucket{idx: -1} }

func (p *buckets) init(by *planner.Equiv, windowed bool, window, slack int64) {
	p.by, p.slack = by, slack
	p.partitions.init(newBucket(nil), newBucket, windowed, window)
}

// each calls f for every bucket whose runs e may belong to.
func (p *buckets) each(e *event.Event, f func(*bucket, *event.Event)) {
	if p.by == nil {
		f(p.wild, e)
		return
	}
	v := p.by.Value(e)
	if v.IsAbsent() {
		f(p.wild, e)
		for _, b := range p.all() {
			f(b, e)
		}
		return
	}
	if b := p.get(v); b != nil && len(b.runs) > 0 {
		f(b, e)
	}
	if len(p.wild.runs) > 0 {
		f(p.wild, e)
	}
}

// place adds r to the bucket of its partition.
func (p *buckets) place(r *run) {
	b := p.wild
	if p.by != nil && !r.key[0].IsAbsent() {
		if b = p.get(r.key[0]); b == nil {
			b = p.create(r.key[0])
		}
	}
	b.runs = append(b.runs, r)
	if !p.windowed {
		return
	}
	switch due := satAdd(r.due, p.slack); {
	case b.idx < 0:
		b.due = due
		heap.Push(&p.due, b)
	case due < b.due:
		b.due = due
		heap.Fix(&p.due, b.idx)
	}
}

// expire finishes the runs whose deadline is before ts and, once per
// window, drops the empty buckets. The wild bucket's due runs finish after
// the keyed buckets': a run of each may complete a match of one partition
// value at one item, and their order must not depend on the other buckets
// in the heap, which a split run's worker holds only for its own values
// (docs/LANGUAGE.md, One order for any number of workers).
func (p *buckets) expire(ts int64, finish func(*run)) {
	wild := false
	for len(p.due) > 0 && p.due[0].due < ts {
		if b := p.due[0]; b != p.wild {
			p.finishBefore(b, ts, finish)
			continue
		}
		heap.Pop(&p.due)
		wild = true
	}
	if wild {
		heap.Push(&p.due, p.wild)
		p.finishBefore(p.wild, ts, finish)
	}
	if p.sweepDue(ts) {
		p.sweep(func(b *bucket) bool { return len(b.runs) > 0 })
	}
}

// finishBefore finishes the runs of b, a queued bucket, whose deadline is
// before ts; b stays queued for the next deadline of its runs, if any.
func (p *buckets) finishBefore(b *bucket, ts int64, finish func(*run)) {
	next := int64(math.MaxInt64)
	kept := b.runs[:0]
	for _, r := range b.runs {
		if r.due < ts {
			finish(r)
			continue
		}
		next = min(next, r.due)
		kept = append(kept, r)
	}
	clear(b.runs[len(kept):])
	b.runs = kept
	if len(kept) > 0 {
		b.due = satAdd(next, p.slack)
		heap.Fix(&p.due, b.idx)
		return
	}
	heap.Remove(&p.due, b.idx)
}

// drain finishes every run: the stream has ended.
func (p *buckets) drain(finish func(*run)) {
	drain := func(b *bucket) {
		for i, r := range b.runs {
			finish(r)
			b.runs[i] = nil
		}
		b.runs = b.runs[:0]
	}
	drain(p.wild)
	for _, b := range p.all() {
		drain(b)
	}
	p.due = p.due[:0]
}

// dueHeap orders buckets by deadline.
type dueHeap []*bucket

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *dueHeap) Push(x any) {
	b := x.(*bucket)
	b.idx = len(*h)
	*h = append(*h, b)
}
func (h *dueHeap) Pop() any {
	old := *h
	b := old[len(old)-1]
	b.idx = -1
	*h = old[:len(old)-1]
	return b
}
