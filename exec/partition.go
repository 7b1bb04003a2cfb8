package exec

import (
	"math"

	"github.com/sase-cep/sase/event"
)

// partitions keeps one state per value of a partition attribute: PAIS's
// stacks (ais.go), the run scan's buckets of runs (runs_partition.go),
// ReCEP's buffer sets (recep.go). Values are keyed by event.PartitionKey,
// so Equal numbers (2 and 2.0) share a partition.
//
// An event lacking the attribute is a wildcard: an equivalence test does
// not constrain it, so it belongs to every partition. The engine keeps
// what such events hold (for the run scan: the runs no event has keyed
// yet) in wild, goes through all for them, and a new partition starts as
// seed makes it from wild.
//
// Lookup is by index for ints in [0, smallKeys) (symbols, small ids), then
// by an int map, then by a value map, which hashes the whole value: about
// 40, 170 and 280 instructions a lookup (BenchmarkPartitionsGet).
//
// A partition that no event visits any more keeps what it holds until a
// sweep prunes it and drops it if empty. Sweeps come once per window of
// stream time (the engine's window, the one constant of the schedule): a
// sweep visits every partition, and those that survive it hold events of
// the last few windows, so sweeping costs O(1) per event amortized and an
// idle partition lives a few windows at most.
type partitions[S any] struct {
	wild  *S
	seed  func(wild *S) *S
	small []*S // by int key in [0, smallKeys)
	ints  map[int64]*S
	other map[event.Key]*S
	list  []*S          // the partitions in creation order
	keys  []event.Value // list's keys
	// With reuse, a sweep keeps the partitions it drops (up to maxFree) in
	// free, and create makes a new one from wild with reuse from one of
	// them: a value whose partition emptied and that comes back gets its
	// arrays back, not new ones grown again (a third of W2's time on 100
	// symbols was allocating them).
	free  []*S
	reuse func(wild, s *S)
	// A sweep is due when the stream reaches sweepAt; never without a
	// window.
	windowed bool
	window   int64
	sweepAt  int64
}

// smallKeys bounds the int keys found by index: the index grows to the
// largest such key seen, at most 128 KiB.
const smallKeys = 1 << 14

// maxFree bounds the partitions kept for reuse: the most a sweep drops
// is what the window held.
const maxFree = 1 << 12

func (p *partitions[S]) init(wild *S, seed func(wild *S) *S, windowed bool, window int64) {
	*p = partitions[S]{wild: wild, seed: seed, other: map[event.Key]*S{}, windowed: windowed, window: max(window, 1), sweepAt: math.MinInt64}
}

// get returns the partition of v, an event's value of the attribute; nil
// when it has none yet or v is absent (a wildcard). An int found by index
// takes no call.
func (p *partitions[S]) get(v event.Value) *S {
	if i := v.Int(); v.IsInt() && uint64(i) < uint64(len(p.small)) {
		return p.small[i]
	}
	return p.lookup(v)
}

// lookup is get for the values the index does not hold.
func (p *partitions[S]) lookup(v event.Value) *S {
	k := event.PartitionKey(v)
	switch {
	case k.IsInt():
		if i := k.Int(); uint64(i) < smallKeys {
			if i < int64(len(p.small)) {
				return p.small[i]
			}
			return nil
		}
		return p.ints[k.Int()]
	case k.IsAbsent():
		return nil
	}
	return p.other[k.Key()]
}

// create makes the partition of v, present and without one, from wild.
func (p *partitions[S]) create(v event.Value) *S {
	k := event.PartitionKey(v)
	var s *S
	if n := len(p.free); n > 0 {
		s = p.free[n-1]
		p.free[n-1], p.free = nil, p.free[:n-1]
		p.reuse(p.wild, s)
	} else {
		s = p.seed(p.wild)
	}
	p.set(k, s)
	p.list = append(p.list, s)
	p.keys = append(p.keys, k)
	return s
}

// set files s under key k (nil forgets k).
func (p *partitions[S]) set(k event.Value, s *S) {
	switch {
	case k.IsInt() && uint64(k.Int()) < smallKeys:
		i := int(k.Int())
		if i >= len(p.small) {
			p.small = append(p.small, make([]*S, i+1-len(p.small))...)
		}
		p.small[i] = s
	case k.IsInt() && s == nil:
		delete(p.ints, k.Int())
	case k.IsInt():
		if p.ints == nil {
			p.ints = map[int64]*S{}
		}
		p.ints[k.Int()] = s
	case s == nil:
		delete(p.other, k.Key())
	default:
		p.other[k.Key()] = s
	}
}

// all returns the partitions, wild aside, in creation order; it must not
// be held across create or sweep.
func (p *partitions[S]) all() []*S { return p.list }

// sweepDue reports whether the stream, now at time now, is due a sweep,
// and if so schedules the next one a window later.
func (p *partitions[S]) sweepDue(now int64) bool {
	if !p.windowed || now < p.sweepAt {
		return false
	}
	p.sweepAt = satAdd(now, p.window)
	return true
}

// sweep drops the partitions for which keep, which prunes them, reports
// that they hold nothing (with reuse, keep leaves those holding nothing
// alive: they wait in free).
func (p *partitions[S]) sweep(keep func(*S) bool) {
	n := 0
	for i, s := range p.list {
		if !keep(s) {
			p.set(p.keys[i], nil)
			if p.reuse != nil && len(p.free) < maxFree {
				p.free = append(p.free, s)
			}
			continue
		}
		p.list[n], p.keys[n] = s, p.keys[i]
		n++
	}
	clear(p.list[n:])
	clear(p.keys[n:])
	p.list, p.keys = p.list[:n], p.keys[:n]
}
