package exec

import (
	"math"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// assigner is a parallel run's assignment of the stream's events to its
// workers, which they share: the first worker to read a batch lists every
// worker's items of it, and the others read theirs, so that a worker
// reads only its own events, not the keys of every event of the stream.
// The assignment depends only on the stream: whoever makes it, it is the
// same. Each worker lists the batches in order, so the owners' batches
// are assigned in order, one at a time.
type assigner struct {
	owners *owners
	by     *planner.Equiv
	all    []int32 // the workers that read every item, the others' too
}

// list returns worker id's items of b.
func (a *assigner) list(b *batch, id int32) []int32 {
	b.assign.Do(func() {
		if b.lists == nil {
			b.lists = make([][]int32, a.owners.n)
		}
		a.owners.assignAll(a.by, b.items, a.all, b.lists)
	})
	return b.lists[id]
}

// keyHash is a partition key's hash, by which owners knows it. The hash
// is fixed (not seeded per run) so that a run's split is the same every
// time.
func keyHash(key event.Value) uint64 {
	var h uint64
	switch key.Kind() {
	case event.Int, event.Bool:
		h = uint64(key.Int())
	case event.Float:
		h = math.Float64bits(key.Float())
	case event.String:
		h = 14695981039346656037 // FNV-1a
		for i := 0; i < len(key.Str()); i++ {
			h = (h ^ uint64(key.Str()[i])) * 1099511628211
		}
	}
	h ^= uint64(key.Kind()) << 56
	// splitmix64's finaliser spreads consecutive ints over the workers.
	h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
	h = (h ^ h>>27) * 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// owners assigns partition keys to workers: the first balanceKeys keys of
// the stream, as they come, each to the worker that has had the fewest
// events so far (the first of those), and later keys by hash.
// A hash splits few keys unevenly (W2's 10 symbols over 2 workers: 4 and
// 6, so 40% and 60% of the work), the assignment evenly; it depends only
// on the stream, so that a run's split, and EXPLAIN ANALYZE's per-worker
// counts, are the same every time. The workers assign the batches
// (assigner), not the dispatcher, which only hands the stream on, so that
// the hashing is spread over the cores, not one serial step before them.
// A key is known by its hash (keyHash), in a table open-addressed
// by it, which a map of Values would cost several times: keys of one hash
// share a worker. In front of it, ints and seen have the workers of the
// values read last, so that most events cost no hash (assignAll).
type owners struct {
	n    int
	keys keyTable
	// load counts the events of each worker so far, but for those that
	// ints' slots count.
	load []int64
	ints [seenSize]seenInt
	seen [seenSize]seenValue
}

// balanceKeys is how many keys owners assigns by load: enough for a
// stream with a few keys per worker, few enough that the table stays in
// a core's cache.
const balanceKeys = 256

// keyTable holds key hashes and their workers, at the first free slot
// from the hash's (tableSize, a power of two, keeps the probes short).
// The workers look keys up (of) while the one assigning a later batch
// adds keys: a slot's worker is stored after its hash, and read first. A
// key an event had was added before the event's batch went to any worker
// (and slots are never freed), so a worker finds every key it has read.
type keyTable struct {
	hash [tableSize]atomic.Uint64
	w    [tableSize]atomic.Int32 // the worker + 1; 0: a free slot
	n    int
}

const tableSize = 4 * balanceKeys

// find returns the slot of h, or the free one where it goes, and the
// slot's worker + 1.
func (t *keyTable) find(h uint64) (slot int, w int32) {
	for i := h; ; i++ {
		slot = int(i & (tableSize - 1))
		if w = t.w[slot].Load(); w == 0 || t.hash[slot].Load() == h {
			return slot, w
		}
	}
}

// seenValue is a value an event had, as read, and its worker + 1 (0: a
// free slot); seenInt is an int value, and how many events of it the
// slot has seen since load last counted them.
type seenValue struct {
	v event.Value
	w int32
}

type seenInt struct {
	n      int64
	w      int32
	events int64
}

const seenBits = 10
const seenSize = 1 << seenBits

// seenSlot is the slot in ints or seen of a value's bits (Fibonacci
// hashing: the top bits of the product).
func seenSlot(bits uint64) uint64 { return bits * 0x9e3779b97f4a7c15 >> (64 - seenBits) }

func newOwners(n int) *owners { return &owners{n: n, load: make([]int64, n)} }

// The items a worker reads, as assignAll lists them: an item's index in
// the batch, shifted, and whose it is.
const (
	ownItem    = iota // the worker's
	sharedItem        // every worker's: a tick, or an event lacking the attribute
	otherItem         // another worker's
	itemBits   = 2
)

// assignAll sets lists[w] to the items of the batch that worker w reads,
// in order, each marked whose it is: every worker's own and shared items,
// and the other workers' too for those in all. An event costs this loop,
// no hash: an int value's worker is in ints by the value, any other's in
// seen (see).
func (o *owners) assignAll(by *planner.Equiv, items []*event.Event, all []int32, lists [][]int32) {
	for w := range lists {
		lists[w] = lists[w][:0]
	}
	attr, builtin := by.Slot, by.Builtin
	for i, ev := range items {
		it := int32(i) << itemBits
		if !ev.IsTick() {
			if v := ev.Get(attr, builtin); !v.IsAbsent() {
				var w int32
				if slot := &o.ints[seenSlot(uint64(v.Int()))]; v.IsInt() && slot.w != 0 && slot.n == v.Int() {
					w = slot.w - 1
					slot.events++
				} else {
					w = o.see(v)
				}
				lists[w] = append(lists[w], it|ownItem)
				for _, k := range all {
					if k != w {
						lists[k] = append(lists[k], it|otherItem)
					}
				}
				continue
			}
		}
		for w := range lists {
			lists[w] = append(lists[w], it|sharedItem)
		}
	}
}

// see returns the worker of an event with partition value v, as read,
// which ints does not have: an int's it then has, any other's it looks
// up in seen by v's bits: a string's length and the address of its text,
// which a stream's events of one value tend to share, so that Identical
// compares no text.
func (o *owners) see(v event.Value) int32 {
	if v.IsInt() {
		slot := &o.ints[seenSlot(uint64(v.Int()))]
		if slot.w != 0 {
			o.load[slot.w-1] += slot.events
		}
		w := o.assign(event.PartitionKey(v))
		*slot = seenInt{n: v.Int(), w: w + 1}
		return w
	}
	bits := uint64(v.Int()) ^ uint64(uintptr(unsafe.Pointer(unsafe.StringData(v.Str()))))
	slot := &o.seen[seenSlot(bits)]
	if slot.w != 0 && slot.v.Identical(v) {
		o.load[slot.w-1]++
		return slot.w - 1
	}
	w := o.assign(event.PartitionKey(v))
	*slot = seenValue{v: v, w: w + 1}
	return w
}

// assign returns the worker of an event with partition key key.
func (o *owners) assign(key event.Value) int32 {
	h := keyHash(key)
	slot, w := o.keys.find(h)
	switch {
	case w != 0:
		w--
	case o.keys.n >= balanceKeys:
		w = int32(h % uint64(o.n))
	default:
		for i := range o.ints {
			if s := &o.ints[i]; s.w != 0 {
				o.load[s.w-1] += s.events
				s.events = 0
			}
		}
		w = int32(slices.Index(o.load, slices.Min(o.load)))
		o.keys.hash[slot].Store(h)
		o.keys.w[slot].Store(w + 1)
		o.keys.n++
	}
	o.load[w]++
	return w
}

// of returns the worker of partition key key: one of an event the worker
// has read, or of a match made of events lacking the attribute (the
// absent key, by hash).
func (o *owners) of(key event.Value) int32 {
	h := keyHash(key)
	if _, w := o.keys.find(h); w != 0 {
		return w - 1
	}
	return int32(h % uint64(o.n))
}
