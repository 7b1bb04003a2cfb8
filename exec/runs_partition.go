package exec

import (
	"container/heap"
	"math"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// partitions buckets runs by the value of the first partition test, so
// that an event reaches only the runs of its partition (docs/STRATEGIES.md, Runs): SASE's
// partitioned evaluation. Runs whose value is not fixed yet (their events
// lack the attribute) are in the wild bucket, which sees every event, and
// an event lacking the attribute reaches every bucket. Further partition
// tests are checked per run. Buckets are found by a slice for small ints
// (symbols, ids) and a map otherwise; a heap of deadlines finishes the runs
// of buckets that no event visits once the stream passes their window.
type partitions struct {
	by       *planner.Equiv // nil: one bucket
	windowed bool
	// slack delays the sweep of an idle bucket past its runs' deadlines:
	// a run past its window can do nothing, so finishing it late only
	// costs memory, unless it is a trailing closure's, due to be emitted.
	slack int64
	wild  *bucket
	small []*bucket // by int value in [0, smallKeys)
	other map[event.Value]*bucket
	due   dueHeap
}

const smallKeys = 1 << 12

// bucket holds the runs of one partition value.
type bucket struct {
	runs []*run
	key  event.Value
	due  int64 // when queued: sweep it once the stream passes due
	idx  int   // position in the deadline heap, -1 when not queued
}

func (p *partitions) init(by *planner.Equiv, windowed bool, slack int64) {
	p.by, p.windowed, p.slack = by, windowed, slack
	p.wild = &bucket{idx: -1}
	p.other = map[event.Value]*bucket{}
}

// normKey makes equal values equal keys: an integral float is an int (1 = 1.0).
func normKey(v event.Value) event.Value {
	if v.Kind() == event.Float {
		if f := v.Float(); f == math.Trunc(f) && math.Abs(f) < 1<<62 {
			return event.IntValue(int64(f))
		}
	}
	return v
}

func (p *partitions) lookup(v event.Value, create bool) *bucket {
	if v.Kind() == event.Int && v.Int() >= 0 && v.Int() < smallKeys {
		i := int(v.Int())
		if i >= len(p.small) {
			if !create {
				return nil
			}
			p.small = append(p.small, make([]*bucket, i+1-len(p.small))...)
		}
		if p.small[i] == nil && create {
			p.small[i] = &bucket{key: v, idx: -1}
		}
		return p.small[i]
	}
	b := p.other[v]
	if b == nil && create {
		b = &bucket{key: v, idx: -1}
		p.other[v] = b
	}
	return b
}

// each calls f for every bucket whose runs e may belong to.
func (p *partitions) each(e *event.Event, f func(*bucket, *event.Event)) {
	if p.by == nil {
		f(p.wild, e)
		return
	}
	v := normKey(p.by.Value(e))
	if v.IsAbsent() {
		p.all(func(b *bucket) { f(b, e) })
		return
	}
	if b := p.lookup(v, false); b != nil && len(b.runs) > 0 {
		f(b, e)
	}
	if len(p.wild.runs) > 0 {
		f(p.wild, e)
	}
}

func (p *partitions) all(f func(*bucket)) {
	f(p.wild)
	for _, b := range p.small {
		if b != nil {
			f(b)
		}
	}
	for _, b := range p.other {
		f(b)
	}
}

// place adds r to the bucket of its partition.
func (p *partitions) place(r *run) {
	b := p.wild
	if p.by != nil && !r.key[0].IsAbsent() {
		b = p.lookup(normKey(r.key[0]), true)
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

// expire finishes the runs whose deadline is before ts.
func (p *partitions) expire(ts int64, finish func(*run)) {
	for len(p.due) > 0 && p.due[0].due < ts {
		b := p.due[0]
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
			heap.Fix(&p.due, 0)
			continue
		}
		heap.Pop(&p.due)
		if b != p.wild && (b.key.Kind() != event.Int || b.key.Int() < 0 || b.key.Int() >= smallKeys) {
			delete(p.other, b.key) // values seen once (ids) must not pile up
		}
	}
}

// drain finishes every run: the stream has ended.
func (p *partitions) drain(finish func(*run)) {
	p.all(func(b *bucket) {
		for i, r := range b.runs {
			finish(r)
			b.runs[i] = nil
		}
		b.runs = b.runs[:0]
	})
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
