package source

import (
	"math"
	"math/bits"

	"github.com/sase-cep/sase/event"
)

// ringMaxSlack is the largest slack (in ticks) whose events a ring holds;
// above it, and with sort = true, they wait in a heap (pending).
const ringMaxSlack = 1 << 16

// ring holds the events not yet released when the slack is small: a
// bucket per ts over [lo, lo+len(first)), each in arrival order, the
// occupied ones marked in a bitmap. A bucket is its first event (a
// pointer: the buckets are dense in memory), then, for ties, the ones
// that arrived after it. An event that is not late has a ts of
// at least the stream's time, and at most the slack above it, so the
// buckets span the slack: a push costs an append, not a heap's log n
// moves. The buckets the stream's time passes move to ready, in (ts,
// arrival) order, and are handed out from there.
type ring struct {
	first   []*event.Event   // per bucket: the first event to arrive, or nil
	more    [][]*event.Event // per bucket: those after it, in arrival order
	used    []uint64         // bit i: bucket i is not empty
	tied    []uint64         // bit i: more[i] is not empty
	mask    int64
	lo      int64 // the ts of the lowest bucket
	started bool  // lo is set: at the first pass
	n       int   // events in buckets
	ready   []*event.Event
}

// newRing is a ring for events at most slack ticks apart.
func newRing(slack int64) *ring {
	size := 64
	for int64(size) <= slack {
		size *= 2
	}
	return &ring{first: make([]*event.Event, size), more: make([][]*event.Event, size),
		used: make([]uint64, size/64), tied: make([]uint64, size/64), mask: int64(size - 1)}
}

// push holds e; the ring must have passed the stream's time (which e's ts
// is not below) since it last moved.
func (g *ring) push(e *event.Event) {
	if e.TS < g.lo { // at the stream's time, whose bucket release has passed
		g.lo = e.TS
	}
	i := e.TS & g.mask
	if bit := uint64(1) << (i & 63); g.used[i>>6]&bit == 0 {
		g.first[i] = e
		g.used[i>>6] |= bit
	} else {
		g.more[i] = append(g.more[i], e)
		g.tied[i>>6] |= bit
	}
	g.n++
}

// pass moves the events below t to ready.
func (g *ring) pass(t int64) {
	for g.n > 0 && g.lo < t {
		i := g.lo & g.mask
		gap := uint64(t) - uint64(g.lo) // t − lo > 0, which may not fit an int64
		if w := g.used[i>>6] >> (i & 63); w == 0 {
			g.lo += int64(min(uint64(64-(i&63)), gap)) // the rest of the word is empty
			continue
		} else if skip := uint64(bits.TrailingZeros64(w)); skip > 0 {
			g.lo += int64(min(skip, gap))
			continue
		}
		g.move(i)
		g.lo++
	}
	if g.n == 0 && (g.lo < t || !g.started) {
		g.lo, g.started = t, true
	}
}

// passThrough moves the events at or below t to ready.
func (g *ring) passThrough(t int64) {
	g.pass(t) // t + 1 could overflow
	if i := t & g.mask; g.n > 0 && g.lo == t && g.used[i>>6]&(1<<(i&63)) != 0 {
		g.move(i)
	}
}

// move moves bucket i to ready.
func (g *ring) move(i int64) {
	bit := uint64(1) << (i & 63)
	g.ready = append(g.ready, g.first[i])
	g.first[i] = nil // the ring keeps no released event
	g.n--
	if g.tied[i>>6]&bit != 0 {
		g.ready = append(g.ready, g.more[i]...)
		g.n -= len(g.more[i])
		clear(g.more[i])
		g.more[i] = g.more[i][:0]
		g.tied[i>>6] &^= bit
	}
	g.used[i>>6] &^= bit
}

// take appends the ready events to batch, numbered, and returns it with
// the ts of the last one (math.MinInt64 for none).
func (g *ring) take(b *builder, batch []*event.Event) ([]*event.Event, int64) {
	last := int64(math.MinInt64)
	for _, e := range g.ready {
		b.number(e)
		last = e.TS
	}
	batch = append(batch, g.ready...)
	clear(g.ready)
	g.ready = g.ready[:0]
	return batch, last
}
