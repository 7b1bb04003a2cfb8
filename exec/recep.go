package exec

import (
	"math"
	"slices"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// ReCEP's event caching (docs/RECEP.md): every event is routed, through
// the filters of the elements it may bind, into one ts-ordered buffer per
// element. With a partition attribute each value has its own buffers; an
// event lacking the attribute is unconstrained by the equivalence test, so
// it goes into every partition. Buffers drop events older than the window
// (and than what held candidates still read), so memory follows the window.

// rbuf is one element's buffer: evs[head:] are live, in stream order,
// with their timestamps in ts and, in cols, the float64 form (numOf) of
// each attribute the search compares numerically (eventCache.cols), so
// that its inner loops read two flat arrays and no event.
type rbuf struct {
	evs  []*event.Event
	ts   []int64
	cols [][]float64
	head int
	nan  bool // a column has held a NaN (numOf: not a number float64 orders exactly)
	// spans, for b's buffer when partners lists (recep_partners.go): by
	// event, its partners in the arena.
	spans []span
}

func (b *rbuf) live() []*event.Event { return b.evs[b.head:] }

// push appends ev, with its values of the attributes in slots, one per
// column.
func (b *rbuf) push(ev *event.Event, slots []int) {
	b.evs = append(b.evs, ev)
	b.ts = append(b.ts, ev.TS)
	for k, slot := range slots {
		x := numOf(ev, slot)
		b.cols[k] = append(b.cols[k], x)
		b.nan = b.nan || x != x
	}
}

// gather makes b, a scratch buffer with src's columns, hold src's
// events at idx, in that order.
func (b *rbuf) gather(src *rbuf, idx []int) {
	n := len(idx)
	if old := len(b.evs); old > n {
		clear(b.evs[n:old]) // no stale event stays reachable
	}
	b.evs, b.ts, b.head = resize(b.evs, n), resize(b.ts, n), 0
	b.nan = src.nan
	evs, ts, sevs, sts := b.evs, b.ts, src.evs, src.ts
	for k, i := range idx {
		evs[k], ts[k] = sevs[i], sts[i]
	}
	for c, col := range src.cols {
		dst := resize(b.cols[c], n)
		for k, i := range idx {
			dst[k] = col[i]
		}
		b.cols[c] = dst
	}
}

// keep makes b, a scratch buffer with src's one column, which holds no
// NaN, hold src's events in [i0, i1) that f, a fast check over that
// column whose product is never NaN (finite), passes, in order. One loop
// writes each event, its timestamp and its value at b's next free place,
// which moves on only if the event passes: no branch follows the data.
// Past b's length its arrays may keep events that failed: events of
// src's window, which src holds anyway.
func (b *rbuf) keep(src *rbuf, i0, i1 int, f *fastCheck) {
	n := i1 - i0
	if old := len(b.evs); old > n {
		clear(b.evs[n:old]) // no stale event stays reachable
	}
	evs, ts, xs := resize(b.evs, n), resize(b.ts, n), resize(b.cols[0], n)
	sevs, sts, col := src.evs[i0:i1], src.ts[i0:i1], src.cols[0][i0:i1]
	k, bound, op := f.k, f.bound, f.op
	m := 0
	for j, x := range col {
		evs[m], ts[m], xs[m] = sevs[j], sts[j], x
		m += int(op.bit(k*x, bound))
	}
	b.evs, b.ts, b.cols[0], b.head, b.nan = evs[:m], ts[:m], xs[:m], 0, false
}

// resize returns s with length n, its array reused when it has room.
func resize[S ~[]E, E any](s S, n int) S {
	if n <= cap(s) {
		return s[:n]
	}
	return make(S, n, 2*n)
}

// pushFrom appends src's event i, columns included (b has src's).
func (b *rbuf) pushFrom(src *rbuf, i int) {
	b.evs = append(b.evs, src.evs[i])
	b.ts = append(b.ts, src.ts[i])
	for k, col := range src.cols {
		b.cols[k] = append(b.cols[k], col[i])
	}
	b.nan = b.nan || src.nan
}

// prune drops the events with ts < minTS, compacting once half is dead so
// that appends reuse the arrays. The dead events' pointers stay until the
// compaction overwrites or clears them (at most as many as are live, or
// 32): no store, with its write barrier, per event dropped.
func (b *rbuf) prune(minTS int64) {
	h, ts := b.head, b.ts
	for h < len(ts) && ts[h] < minTS {
		h++
	}
	b.head = h
	if h >= 32 && 2*h >= len(ts) {
		n := copy(b.evs, b.evs[h:])
		clear(b.evs[n:])
		b.evs = b.evs[:n]
		b.ts = ts[:copy(ts, ts[h:])]
		for k, col := range b.cols {
			b.cols[k] = col[:copy(col, col[h:])]
		}
		if len(b.spans) > 0 {
			b.spans = b.spans[:copy(b.spans, b.spans[h:])]
		}
		b.head = 0
	}
}

// from returns the index of the first live event with ts >= t. The
// search's bounds are often at an end (the window's start at the oldest
// live event, the trigger's time after the newest): those cost two
// comparisons.
func (b *rbuf) from(t int64) int {
	i, j := b.head, len(b.ts)
	if i == j || b.ts[i] >= t {
		return i
	}
	if b.ts[j-1] < t {
		return j
	}
	for i < j {
		h := int(uint(i+j) >> 1)
		if b.ts[h] < t {
			i = h + 1
		} else {
			j = h
		}
	}
	return i
}

// rset is one set of buffers, by component index (positive singles'
// buffers are searched, closures' and negations' read per candidate).
type rset struct {
	bufs []rbuf
}

// release empties s's buffers, keeping their arrays, so that s holds no
// event while it waits for reuse (reseed).
func (s *rset) release() {
	for i := range s.bufs {
		b := &s.bufs[i]
		clear(b.evs)
		for k := range b.cols {
			b.cols[k] = b.cols[k][:0]
		}
		*b = rbuf{evs: b.evs[:0], ts: b.ts[:0], cols: b.cols, spans: b.spans[:0]}
	}
}

func (s *rset) empty() bool {
	for i := range s.bufs {
		if len(s.bufs[i].live()) > 0 {
			return false
		}
	}
	return true
}

// eventCache is the EventCache operator and ReCEP's event loop. It hands
// each event that enters the last positive's buffer to QueryFilter, with
// the buffer set to search.
type eventCache struct {
	r       *runner
	op      *planner.EventCache
	qf      *queryFilter
	pending *pending // AttributeVerify's held candidates: their reads bound pruning
	byType  [][]int  // type id -> components whose types include it
	open    []bool   // by component: its buffer has no filter, passes takes all
	quick   []bool   // by component: its buffer's filters are all constChecks
	only    []int    // type id -> the one component whose types include it, or -1
	// touch is an attribute slot the buffers read as numbers (-1: none),
	// which readAhead reads in every event (into touched).
	touch   int
	touched bool
	fast    [][]constCheck // by component, its buffer's filters as constChecks
	filter  *planner.Binding
	hits    []int
	last    int // the last positive single: its buffer triggers the search
	global  *rset
	// Partitioned: wild holds the events lacking the attribute, copied
	// into each new partition.
	parts     *partitions[rset]
	enforcing bool             // the partition and filters enforce every equivalence test
	equivs    []*planner.Equiv // the equivalence tests without constant
	minTS     int64
	lastTS    int64
	// cur is the buffer set of the current trigger and whether the
	// equivalence tests hold by construction there.
	cur         *rset
	curEnforced bool
}

func newEventCache(r *runner, op *planner.EventCache, qf *queryFilter, pending *pending) *eventCache {
	p := r.plan
	c := &eventCache{r: r, op: op, qf: qf, pending: pending, filter: p.NewBinding(), last: p.Last(),
		minTS: math.MinInt64, lastTS: math.MinInt64}
	c.open = make([]bool, len(p.Components))
	c.quick = make([]bool, len(p.Components))
	c.fast = make([][]constCheck, len(p.Components))
	for _, b := range op.Buffers {
		c.open[b.Comp] = len(b.Consts) == 0 && len(b.Filters) == 0
		if p.Components[b.Comp].Kind != planner.Closure { // a closure's filters read c[i]
			for _, pr := range b.Filters {
				c.fast[b.Comp] = append(c.fast[b.Comp], constCheckOf(p, b.Comp, pr))
			}
			c.quick[b.Comp] = len(b.Consts) == 0 && len(b.Filters) > 0 &&
				!slices.ContainsFunc(c.fast[b.Comp], func(f constCheck) bool { return !f.ok })
		}
		for _, t := range p.Components[b.Comp].Types {
			for len(c.byType) <= t {
				c.byType = append(c.byType, nil)
			}
			c.byType[t] = append(c.byType[t], b.Comp)
		}
	}
	c.only = make([]int, len(c.byType))
	for t, comps := range c.byType {
		c.only[t] = -1
		if len(comps) == 1 {
			c.only[t] = comps[0]
		}
	}
	c.touch = -1
	for comp := range p.Components {
		slots := slices.Clone(qf.cols[comp])
		for _, f := range c.fast[comp] {
			if f.ok {
				slots = append(slots, f.slot)
			}
		}
		for _, slot := range slots {
			if c.touch < 0 || slot < c.touch {
				c.touch = slot
			}
		}
	}
	c.global = c.newSet()
	c.enforcing = true
	for _, q := range p.Equivs {
		if q.Const == nil {
			c.equivs = append(c.equivs, q)
			c.enforcing = c.enforcing && q == op.Partition
		}
	}
	if op.Partition != nil {
		c.parts = &partitions[rset]{}
		c.parts.init(c.newSet(), c.seed, op.HasWindow, op.Window)
		c.parts.reuse = c.reseed
	}
	return c
}

func (c *eventCache) newSet() *rset {
	s := &rset{bufs: make([]rbuf, len(c.r.plan.Components))}
	for comp := range s.bufs {
		s.bufs[comp].cols = make([][]float64, len(c.qf.cols[comp]))
	}
	return s
}

// seed starts a new partition's buffers with the events lacking the
// attribute.
func (c *eventCache) seed(wild *rset) *rset {
	s := c.newSet()
	c.reseed(wild, s)
	return s
}

// reseed starts s, a new partition's set, empty (new, or released by a
// sweep), with the live events of wild.
func (c *eventCache) reseed(wild, s *rset) {
	for i := range s.bufs {
		w := &wild.bufs[i]
		for k := w.head; k < len(w.evs); k++ {
			s.bufs[i].pushFrom(w, k)
		}
	}
}

// readAhead reads ev's value in the slot touch, whatever ev's type: the
// values of a loaded stream lie in its order (event.Arena), and read so,
// in a constant stride, the hardware fetches them ahead; read only for
// the types the buffers take, each first read waited on memory (Exp. 1:
// those reads took about 40% of the run's time; reading every event's
// value took the run from about 105 to 64 ns per event).
func (c *eventCache) readAhead(ev *event.Event) {
	if t := c.touch; t >= 0 && t < len(ev.Attrs) {
		c.touched = c.touched != ev.Attrs[t].IsInt() // a read that costs one comparison
	}
}

// process caches an event of a type some buffer takes.
func (c *eventCache) process(ev *event.Event) {
	if ev.TS > c.lastTS {
		c.lastTS = ev.TS
		c.advance(ev.TS)
	}
	if comp := c.only[ev.Type]; comp >= 0 && c.parts == nil {
		// One buffer takes the type, and there is one buffer set: no
		// list of the buffers the event passed.
		if c.open[comp] || c.passes(comp, ev) {
			c.r.stats.Operators[0].Out++
			c.addTo(c.global, comp, ev)
			if comp == c.last {
				c.cur, c.curEnforced = c.global, c.enforcing
				c.trigger(ev)
			}
		}
		return
	}
	c.hits = c.hits[:0]
	trigger := false
	for _, comp := range c.byType[ev.Type] {
		if c.open[comp] || c.passes(comp, ev) {
			c.hits = append(c.hits, comp)
			trigger = trigger || comp == c.last
		}
	}
	if len(c.hits) == 0 {
		return
	}
	c.r.stats.Operators[0].Out++
	c.add(c.global, ev)
	c.cur, c.curEnforced = c.global, c.enforcing && c.op.Partition == nil
	if c.op.Partition != nil {
		switch v := c.op.Partition.Value(ev); {
		case v.IsAbsent():
			c.add(c.parts.wild, ev)
			for _, s := range c.parts.all() {
				c.add(s, ev)
			}
		case !isNaN(v): // a NaN equals nothing: it stays in the global buffers only
			s := c.parts.get(v)
			if s == nil {
				s = c.parts.create(v)
			}
			c.add(s, ev)
			c.cur, c.curEnforced = s, c.enforcing
		}
	}
	if trigger {
		c.trigger(ev)
	}
}

// trigger searches for ev, which entered the last positive's buffer, in
// c.cur.
func (c *eventCache) trigger(ev *event.Event) {
	if c.qf.pp != nil && c.qf.partnered(ev, c.cur, c.curEnforced) {
		return
	}
	b := c.qf.b
	b.Events[c.last] = ev
	c.qf.search(b, c.cur, c.curEnforced)
	b.Events[c.last] = nil
}

// passes applies component comp's buffer filters to ev. When they are
// all constChecks, and ev's values numbers, they are the whole test.
func (c *eventCache) passes(comp int, ev *event.Event) bool {
	if c.quick[comp] {
		fast := c.fast[comp]
		for k := range fast {
			f := &fast[k]
			v := f.k * numOf(ev, f.slot)
			if v != v {
				return c.passesAll(comp, ev)
			}
			if f.op.bit(v, f.b) == 0 {
				return false
			}
		}
		return true
	}
	return c.passesAll(comp, ev)
}

// passesAll is passes, each filter by its constCheck where it has one and
// ev's value is a number, else by its evaluator.
func (c *eventCache) passesAll(comp int, ev *event.Event) bool {
	buf := &c.op.Buffers[comp]
	for _, q := range buf.Consts {
		var fixed event.Value // none: only the constant constrains ev
		if !q.Agrees(&fixed, ev) {
			return false
		}
	}
	fast := c.fast[comp] // a closure's: none
	for k, pr := range buf.Filters {
		if k < len(fast) && fast[k].ok {
			f := &fast[k]
			if v := f.k * numOf(ev, f.slot); v == v {
				if f.op.bit(v, f.b) == 0 {
					return false
				}
				continue
			}
		}
		if !c.eval(comp, pr, ev) {
			return false
		}
	}
	return true
}

// eval evaluates filter pr of component comp's buffer on ev.
func (c *eventCache) eval(comp int, pr *planner.Pred, ev *event.Event) bool {
	b := c.filter
	if c.r.plan.Components[comp].Kind == planner.Closure {
		b.Elem = ev
	} else {
		b.Events[comp] = ev
	}
	ok := pr.Eval(b)
	b.Elem, b.Events[comp] = nil, nil
	return ok
}

// add appends ev to the buffers of the components it passed.
func (c *eventCache) add(s *rset, ev *event.Event) {
	for _, comp := range c.hits {
		c.addTo(s, comp, ev)
	}
}

// addTo appends ev to comp's buffer in s.
func (c *eventCache) addTo(s *rset, comp int, ev *event.Event) {
	b := &s.bufs[comp]
	if b.head < len(b.ts) && b.ts[b.head] < c.minTS {
		b.prune(c.minTS)
	}
	b.push(ev, c.qf.cols[comp])
	if pp := c.qf.pp; pp != nil && comp == pp.b.comp {
		pp.add(&s.bufs[pp.a.comp], b, c.qf.op.Window)
	}
	if n := int64(len(b.evs) - b.head); n > c.r.stats.MaxBuffer {
		c.r.stats.MaxBuffer = n
	}
}

// advance moves the pruning bound to the oldest timestamp anything may
// still read: a trigger arriving now reads back to now - W; a held
// candidate, released after ts(P1) + W, reads back to ts(Pn) - W, which is
// at least its deadline - 2W. Once per window every partition is pruned
// and the empty ones are dropped.
func (c *eventCache) advance(now int64) {
	if op := c.op; op.HasWindow {
		c.minTS = satSub(now, op.Window)
		if op.Partition != nil || c.pending.items.Len() > 0 {
			c.advanceHeld(now)
		}
	}
}

// advanceHeld is advance's part for held candidates and partitions.
func (c *eventCache) advanceHeld(now int64) {
	w := c.op.Window
	if c.pending.items.Len() > 0 {
		c.minTS = min(c.minTS, satSub(satSub(c.pending.deadline(), w), w))
	}
	if c.op.Partition == nil || !c.parts.sweepDue(now) {
		return
	}
	prune := func(s *rset) bool {
		for i := range s.bufs {
			s.bufs[i].prune(c.minTS)
		}
		return !s.empty()
	}
	prune(c.global)
	prune(c.parts.wild)
	c.parts.sweep(func(s *rset) bool {
		if prune(s) {
			return true
		}
		s.release()
		return false
	})
}

// setFor returns the buffer set a trigger was searched in, and whether it
// enforces the equivalence tests (for candidates released later).
func (c *eventCache) setFor(trigger *event.Event) (*rset, bool) {
	if c.op.Partition == nil {
		return c.global, c.enforcing
	}
	if v := c.op.Partition.Value(trigger); !v.IsAbsent() && !isNaN(v) {
		return c.parts.get(v), c.enforcing
	}
	return c.global, false
}

// narrows reports whether negations may narrow the search for a trigger:
// it has a value (not NaN) of every equivalence attribute. Then every
// candidate that passes the tests has the trigger's values, and a negated
// event blocks it only if it agrees with them (agrees).
func (c *eventCache) narrows(trigger *event.Event) bool {
	for _, q := range c.equivs {
		if v := q.Value(trigger); v.IsAbsent() || isNaN(v) {
			return false
		}
	}
	return true
}

// agrees reports whether e agrees with the trigger on every equivalence
// test.
func (c *eventCache) agrees(e, trigger *event.Event) bool {
	for _, q := range c.equivs {
		if ref := q.Value(trigger); !q.Agrees(&ref, e) {
			return false
		}
	}
	return true
}

// isNaN reports whether v is a float NaN, which equals nothing (no loader
// makes one; ReCEP keeps it out of the partitions).
func isNaN(v event.Value) bool { return v.IsFloat() && math.IsNaN(v.Float()) }
