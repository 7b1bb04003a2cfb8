package exec

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// A parallel run splits a partitioned query over workers: a dispatcher
// hashes each event's partition value to one worker and hands events
// lacking it to all; every worker runs its own runner over the plan (read
// only) and sees every position of the stream, its own events as events
// and the others' as time, so that time-released matches come out at the
// same position as in one run. A match is tagged with that position and
// its partition value, and the merge emits by (position, value, the
// worker's order): the one-worker order with the matches that several
// partitions complete at one position sorted by partition value
// (docs/LANGUAGE.md, workers).

// parallel is what WithWorkers and WithLive ask of a run.
type parallel struct {
	workers  int
	live     *Live
	chunks   *Chunks
	anyOrder bool
}

// WithWorkers runs a partitioned query on n workers (goroutines); n <= 1
// is one run on the caller's goroutine.
func WithWorkers(n int) Option { return func(r *runner) { r.par.workers = n } }

// WithLive says the events come from a live stream, which calls l.Pause
// before it waits for more.
func WithLive(l *Live) Option { return func(r *runner) { r.par.live = l } }

// Live carries a live stream's pauses to the run: its source calls Pause
// before it waits for events, and the run calls idle once it has emitted
// every match of the events before the pause, on the goroutine that emits
// (so that a writer may flush there). A parallel run hands a partial batch
// to its workers at a pause, so a quiet stream's matches are not held back.
type Live struct {
	idle func()
	d    *dispatcher // a parallel run's; nil for one run
}

// NewLive returns the pauses of a live stream for one run; idle may be nil.
func NewLive(idle func()) *Live {
	if idle == nil {
		idle = func() {}
	}
	return &Live{idle: idle}
}

// Pause says the stream has no event ready; the source calls it on the
// goroutine that iterates the events.
func (l *Live) Pause() {
	if l.d == nil {
		l.idle()
		return
	}
	l.d.pause()
}

// Split is how a run divides its work.
type Split struct {
	Workers int // 1: one run
	// By is the partition attribute of a partitioned run; of a segmented
	// one, the order of the matches that one item completes or releases.
	By *planner.Equiv
	// Overlap is how far, in ticks, a time segment's worker reads back
	// before the segment's start; Segmented says the run splits that way.
	Overlap   int64
	Segmented bool
	Why       string // why one worker, when more were asked for
}

// String says how the run is split, for EXPLAIN.
func (s Split) String() string {
	switch {
	case s.Segmented && s.By != nil:
		return fmt.Sprintf("Parallel: %d workers, time segments of the loaded stream overlapping by %d (one event's matches in %s order)", s.Workers, s.Overlap, s.By.Text)
	case s.Segmented:
		return fmt.Sprintf("Parallel: %d workers, time segments of the loaded stream overlapping by %d", s.Workers, s.Overlap)
	case s.Workers > 1:
		return fmt.Sprintf("Parallel: %d workers, partitioned by %s", s.Workers, s.By.Text)
	}
	return "Parallel: one worker (" + s.Why + ")"
}

// Explain is the split's EXPLAIN ANALYZE lines: how the run split and each
// worker's events and matches (events lacking the attribute count at
// every worker; a segment's overlap at the worker that reads it again).
func (s *Stats) explainSplit() string {
	if s.Split == nil {
		return ""
	}
	text := s.Split.String() + "\n"
	if s.Split.Segmented {
		text += fmt.Sprintf("   segments: %d\n", s.Segments)
	}
	for i, w := range s.Workers {
		text += fmt.Sprintf("   worker %d: events=%d matches=%d", i+1, w.Events, w.Matches)
		if w.MaxBuffer > 0 {
			text += fmt.Sprintf(" max buffer=%d", w.MaxBuffer)
		}
		text += "\n"
	}
	return text
}

// SplitOf says how a run of plan on the given number of workers splits,
// on a live stream or a loaded one, as the optimizer recorded it
// (planner.Split): by partition, in time segments of a loaded stream
// (segments.go), or on one worker.
func SplitOf(plan *planner.Plan, workers int, live bool) Split {
	sp := &plan.Split
	switch {
	case workers <= 1:
		return Split{Workers: 1, Why: "workers = 1"}
	case sp.Kind == planner.SplitKey:
		return Split{Workers: workers, By: sp.By}
	case live && sp.LiveWhy != "":
		return Split{Workers: 1, Why: sp.LiveWhy}
	case sp.Kind == planner.SplitSegments:
		return Split{Workers: workers, Segmented: true, Overlap: sp.Overlap, By: sp.By}
	}
	return Split{Workers: 1, Why: sp.Why}
}

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

// match is a run of n rows a worker emitted one after the other: the
// position of the item it was working on, the rows' partition value, where
// the first row's cells start in the result's rows (its events in evs,
// when a row is only events). One item tends to complete many matches of
// one partition, so the merge orders runs, not rows.
type match struct {
	pos      int64
	key      event.Value
	n        int
	cell, ev int
	// Encoded (Chunks): the rows' bytes in the result's buf, and where
	// the first row's end is noted in its ends.
	b, end, row int
}

// result is what a worker made of one batch.
type result struct {
	matches []match
	// The rows' cells, one row after the other, and their lists'
	// elements: the merge hands the sink the rows as they are here. A
	// row of events only is its events in evs, seven times smaller (a
	// segment holds its rows until the merge reaches it).
	rows []Cell
	evs  []*event.Event
	// Encoded rows (Chunks): their bytes and, for a limit, each one's end.
	buf  []byte
	ends []int
	// A tally's counts by item (a count's result, never full, goes to
	// chunker.sum), and their sum.
	counts  []posCount
	counted int64
	err     error // the worker stopped at errPos with err
	errPos  int64
	// A time segment's worker: the rows it emitted itself; stopped, the
	// sink stopped the run at errPos; handover, it emits the next rows
	// itself (segments.go).
	direct            int64
	stopped, handover bool
	stats             *Stats // the worker's, with its last result
	idle              bool   // the batch's
	// more: a partitioned run's worker sends more results of the batch
	// (resultBytes).
	more bool
	// Of the worker that made it, of the batch or segment it is of
	// (WithAnyOrder reads every worker's results from one channel).
	worker int
	batch  *batch // nil: the stream's end
	seg    *segment
}

// WorkerStats counts one worker's share of a parallel run.
type WorkerStats struct {
	Events, Matches int64
	MaxBuffer       int64 // Stats.MaxBuffer: the longest of its runs'
}

// worker is one runner of a parallel run.
type worker struct {
	id  int32
	r   *runner
	by  *planner.Equiv
	pos int64
	res *result
	// key is the partition of the last match own saw, keyed whether it
	// has seen one, mine whether it is this worker's.
	key         event.Value
	keyed, mine bool
	keep        keeper // how it keeps the rows
	// rk, when the rows tell a match's partition, decides at emit which
	// are the worker's (rowkey.go); keyEv is the last event whose value
	// key is, dropped counts the matches it left to other workers.
	rk      *rowKey
	lastCol int // the column of the last positive component's event
	keyEv   *event.Event
	dropped int64
	runEv   *event.Event // heldEmit's
	// tally: the worker counts its matches in bulk until it reads an
	// event lacking the attribute (every match before is of its own
	// partitions); then emits them (heldEmit).
	tally tally
	// free has the results the merge is done with, for reuse.
	free   chan *result
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

// fresh returns an empty result, one the merge is done with if there is.
func (w *worker) fresh() *result { return freshResult(w.free, w.res) }

// freshResult returns an empty result: one from free if there is, else
// one sized like last.
func freshResult(free chan *result, last *result) *result {
	select {
	case r := <-free:
		*r = result{matches: r.matches[:0], rows: r.rows[:0], evs: r.evs[:0], buf: r.buf[:0], ends: r.ends[:0], counts: r.counts[:0]}
		return r
	default:
		// Sized like the last: a batch's arenas grown by doubling cost
		// more than the matching.
		if last == nil {
			return &result{}
		}
		// A result cut at resultBytes gets room for the item that passes
		// it.
		grow := func(n int) int {
			if last.full() {
				return n + n/4
			}
			return n
		}
		return &result{
			matches: make([]match, 0, grow(len(last.matches))),
			rows:    make([]Cell, 0, grow(len(last.rows))),
			evs:     make([]*event.Event, 0, grow(len(last.evs))),
			buf:     make([]byte, 0, grow(len(last.buf))),
			ends:    make([]int, 0, grow(len(last.ends))),
			counts:  make([]posCount, 0, len(last.counts)),
		}
	}
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

// own decides on a match's binding whether it is the worker's, by its
// partition (closureKeys).
func (w *worker) own(b *planner.Binding) bool {
	if w.closureKeys {
		w.setKey(event.PartitionKey(w.r.equivRef(w.by, b)))
		return w.mine
	}
	key := event.Value{}
	for _, i := range w.r.plan.Positives {
		if v := w.by.Value(b.Events[i]); !v.IsAbsent() {
			key = event.PartitionKey(v)
			break
		}
	}
	w.setKey(key)
	return w.mine
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

// heldEmit is the runner's emit when the rows tell their partition: a row
// that shares the last positive event of the run held (runEv) is of its
// partition and position, and goes to the keeper's run as it is. A
// closure, not a method value: one call a row, not two. Not inlined: the
// closure inlined into its caller's does not inline more.
//
//go:noinline
func (w *worker) heldEmit() Emit {
	return func(row []Cell) bool {
		if e := row[w.lastCol].Event; e == w.runEv && e != nil {
			if w.keep.events { // keeper.more, which does not inline
				w.res.moreEvents(row)
			} else {
				w.keep.moreRow(w.res, row)
			}
			return true
		}
		return w.emit(row)
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
		if e := row[w.lastCol].Event; e != w.keyEv || e == nil {
			w.partitionOfRow(e, row)
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
	w.r.counts, w.r.emit = false, w.heldEmit()
}

// layout is the shape of a plan's rows: how many cells, which are lists,
// whether every one is an event.
type layout struct {
	width  int
	lists  []int // the columns of ColList
	events bool
}

func layoutOf(plan *planner.Plan) *layout {
	l := &layout{width: len(plan.Columns), events: true}
	for i, c := range plan.Columns {
		if c.Kind == planner.ColList {
			l.lists = append(l.lists, i)
		}
		l.events = l.events && c.Kind == planner.ColEvent
	}
	return l
}

// add appends a row, emitted at position pos in partition key, to the
// result.
func (r *result) add(pos int64, key event.Value, l *layout, row []Cell) {
	r.open(pos, key)
	r.cells(l, row)
}

// cells appends a row, of the last run, to the rows. A list is the
// engine's until the call returns: its elements are copied to evs, which
// the row's list then reads (an earlier array of evs, once append has
// grown it, still holds them: nothing writes to it before the result is
// reused).
func (r *result) cells(l *layout, row []Cell) {
	if l.events {
		r.evs = appendEvents(r.evs, row)
		return
	}
	k := len(r.rows)
	r.rows = append(r.rows, row...)
	for _, i := range l.lists {
		if len(row[i].List) == 0 {
			// An empty list stays apart from an unbound one (nil, the
			// algebra's): the outputs write [] for the one and nothing
			// for the other.
			if row[i].List != nil {
				r.rows[k+i].List = emptyList
			}
			continue
		}
		e := len(r.evs)
		r.evs = append(r.evs, row[i].List...)
		r.rows[k+i].List = r.evs[e:len(r.evs):len(r.evs)]
	}
}

// emptyList is a bound closure's list with no element.
var emptyList = []*event.Event{}

// appendEvents appends the events of a row of events only to evs, which
// a register holds, not read and written back in memory a cell at a time.
func appendEvents(evs []*event.Event, row []Cell) []*event.Event {
	for i := range row {
		evs = append(evs, row[i].Event)
	}
	return evs
}

// open counts a row emitted at position pos in partition key: one more
// of the last run, or the first of a new one.
func (r *result) open(pos int64, key event.Value) {
	if n := len(r.matches) - 1; n >= 0 && r.matches[n].pos == pos && r.matches[n].key.Identical(key) {
		r.matches[n].n++
		return
	}
	r.matches = append(r.matches, match{pos: pos, key: key, n: 1, cell: len(r.rows), ev: len(r.evs), b: len(r.buf), row: len(r.ends)})
}

// emitRun emits the rows of run m, laid out as l says, and counts them;
// it returns false when emit does. A row of events only is put together
// in row.
func (r *result) emitRun(m match, l *layout, row []Cell, emit Emit, stats *Stats) bool {
	width := l.width
	if l.events {
		row = row[:width]
		evs := r.evs[m.ev : m.ev+m.n*width]
		for e := 0; e < len(evs); e += width {
			for i, ev := range evs[e : e+width] {
				row[i].Event = ev
			}
			stats.Matches++
			if !emit(row) {
				return false
			}
		}
		return true
	}
	for c := m.cell; c < m.cell+m.n*width; c += width {
		stats.Matches++
		if !emit(r.rows[c : c+width : c+width]) {
			return false
		}
	}
	return true
}

// resultBytes is about the most bytes of rows a result holds, encoded
// (Chunks) or in its arenas: a worker hands a batch's rows on in results
// of that size, cut between two items, so that a batch with many matches
// neither grows its arrays by copying them again and again nor holds them
// all at once. Arenas so bounded stay in a core's cache and are reused
// (free), not allocated: pointer arrays the garbage collector scans, and
// whose every store pays a write barrier while it runs. Not smaller: a
// result handed over costs the merge a channel receive and often a
// wake-up of its worker, and W2 on 10 symbols into jsonl took 2.2-2.5 s on
// 2 workers with results of 512 KiB, 2.8-3.0 s with 128 KiB (3.1-3.8 s
// with 32 KiB).
const resultBytes = 512 << 10

// full says the result holds resultBytes of rows.
func (r *result) full() bool {
	const cell, ev = int(unsafe.Sizeof(Cell{})), int(unsafe.Sizeof((*event.Event)(nil)))
	return len(r.buf)+cell*len(r.rows)+ev*len(r.evs) >= resultBytes
}

// step runs one batch (b nil: the stream's end, at position w.pos), and
// returns what it emitted last; send hands on the results before, each
// marked more.
func (w *worker) step(b *batch, send func(*result) bool) (res *result) {
	w.res = w.fresh()
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
			w.res = w.fresh()
			w.res.worker, w.res.batch, w.res.idle = int(w.id), b, b.idle
		}
	}
	return
}

// sortRuns orders the runs of each position by partition value; a worker
// emits one position's matches of one value in the one-run order.
func sortRuns(ms []match) {
	for i := 0; i < len(ms); {
		j := i + 1
		sorted := true
		for ; j < len(ms) && ms[j].pos == ms[i].pos; j++ {
			sorted = sorted && CompareKeys(ms[j-1].key, ms[j].key) <= 0
		}
		if !sorted {
			slices.SortStableFunc(ms[i:j], func(a, b match) int { return CompareKeys(a.key, b.key) })
		}
		i = j
	}
}

// CompareKeys is the order in which a parallel run emits the matches that
// several partitions complete at one position, by partition key: a total
// order (absent first, then by kind, then by value), the same for any
// number of workers.
func CompareKeys(a, b event.Value) int {
	if a.Identical(b) {
		return 0
	}
	if c := cmp.Compare(a.Kind(), b.Kind()); c != 0 {
		return c
	}
	if c, ok := a.Compare(b); ok && c != 0 {
		return c
	}
	return cmp.Compare(a.String(), b.String())
}

// runParallel runs plan on sp.Workers workers.
func runParallel(ctx context.Context, plan *planner.Plan, sp Split, events iter.Seq[*event.Event], emit Emit, par parallel, opts []Option) (*Stats, error) {
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := sp.Workers
	// The live pauses need the results batch by batch: in order.
	anyOrder := par.anyOrder && par.live == nil
	ins := make([]chan *batch, n)
	outs := make([]chan *result, n)
	frees := make([]chan *result, n)
	var wg sync.WaitGroup
	l := layoutOf(plan)
	a := &assigner{owners: newOwners(n), by: sp.By}
	workers := make([]*worker, n)
	for i := range n {
		w := &worker{id: int32(i), by: sp.By, assign: a}
		workers[i] = w
		w.wild = a.owners.of(event.Value{}) == w.id
		_, w.closureKeys = plan.Source.(*planner.RunScan)
		w.keep = newKeeper(l, par.chunks)
		w.r = newRunner(plan, w.emit)
		w.r.ctx = ctx
		for _, o := range opts {
			o(w.r)
		}
		w.r.par = parallel{}
		if w.rk = rowKeyOf(plan, sp.By); w.rk == nil {
			w.r.own = w.own
		} else {
			w.lastCol = w.rk.evs[len(w.rk.evs)-1]
			w.r.emit = w.heldEmit()
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
		w.free = make(chan *result, resultsInFlight)
		frees[i] = w.free
	}
	for _, w := range workers { // once a.all is whole
		wg.Go(func() {
			w.loop(ctx, start, ins[w.id], outs[w.id])
			if !anyOrder {
				close(outs[w.id])
			}
		})
	}
	d := &dispatcher{ctx: ctx, ins: ins, free: make(chan *batch, 2)}
	if par.live != nil {
		par.live.d = d // a Live is one run's
	}
	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		d.run(events)
	}()
	m := &merger{emit: emit, frees: frees, stats: newSplitStats(plan, n), batches: d.free, ctx: ctx, layout: l}
	if par.chunks != nil {
		m.chunks = newChunker(par.chunks, m.stats)
	}
	var ended bool
	var err error
	if anyOrder {
		go func() {
			wg.Wait()
			close(outs[0])
		}()
		ended, err = m.mergeAny(ctx, n, outs[0])
	} else {
		ended, err = m.merge(ctx, outs, par.live)
	}
	cancel()
	wg.Wait()
	if ended {
		// The dispatcher has closed the batches. A stopped run does not
		// wait for it: a live stream may block it until its next event,
		// where it stops.
		<-dispatched
	}
	stats := m.stats
	stats.Events = d.events.Load()
	if m.stop && m.stopBatch != nil {
		// One run stops there: the summary counts the same events.
		stats.Events = m.stopBatch.eventsTo(m.stopPos)
	}
	stats.Elapsed = time.Since(start)
	stats.Split = &sp
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

// merger emits the workers' results and sums their stats.
type merger struct {
	emit   Emit
	chunks *chunker // the matches go to Chunks; nil: to emit
	frees  []chan *result
	// batches takes back the batches of an ordered merge's rounds.
	batches chan<- *batch
	stats   *Stats
	row     []Cell  // emitRun's
	layout  *layout // the rows' in the results
	// ctx is the run's; unchecked counts the rows emitted since the last
	// look at it.
	ctx       context.Context
	unchecked int
	// The consumer stopped the run at the item at stopPos of stopBatch's
	// (nil: at the stream's end) when stop.
	stop      bool
	stopBatch *batch
	stopPos   int64
}

// stopped notes that the consumer stopped the run at the run of res at
// position pos.
func (m *merger) stopped(res *result, pos int64) {
	m.stop, m.stopBatch, m.stopPos = true, res.batch, pos
}

// emitRun emits the run m of res; false when the consumer stops the run.
func (m *merger) emitRun(res *result, r match) bool {
	if m.chunks != nil {
		return m.chunks.run(res, r)
	}
	if m.row == nil {
		m.row = make([]Cell, m.layout.width)
	}
	// The merge looks at ctx before a run once 1024 rows have gone since
	// its last look (a run is at most a result's), as one run does
	// between its events: the workers may wait on it.
	if m.unchecked += r.n; m.unchecked >= 1024 {
		m.unchecked = 0
		if m.ctx.Err() != nil {
			return false
		}
	}
	return res.emitRun(r, m.layout, m.row, m.emit, m.stats)
}

// flush puts the chunk pending of the results emitted, before they go
// back to their workers; false when the consumer stops the run.
func (m *merger) flush() bool { return m.chunks == nil || m.chunks.flush() }

// free gives res back to its worker for reuse.
func (m *merger) free(res *result) {
	select {
	case m.frees[res.worker] <- res:
	default: // the worker has enough
	}
}

// merge emits the workers' matches in order, batch by batch, and sums
// their stats; it stops at the first error in stream order.
// ended says every worker reached the stream's end.
func (m *merger) merge(ctx context.Context, outs []chan *result, live *Live) (ended bool, err error) {
	n := len(outs)
	res := make([]*result, n)
	heads := make([]int, n)
	for {
		var firstErr error
		errPos := int64(-1)
		for i, out := range outs {
			r, ok := <-out
			if !ok {
				if firstErr == nil {
					firstErr = ctx.Err()
				}
				return false, firstErr
			}
			res[i], heads[i] = r, 0
			if r.err != nil && (errPos < 0 || r.errPos < errPos) {
				firstErr, errPos = r.err, r.errPos
			}
		}
		emitting := true
		summed := m.chunks != nil && m.chunks.sums && !slices.ContainsFunc(res, func(r *result) bool { return r.more })
		if summed {
			emitting = m.chunks.sum(res, errPos)
		}
		for emitting && !summed {
			for i := range res {
				// A worker's next result of the batch, once its last is
				// emitted: its runs come after those.
				for heads[i] == len(res[i].matches) && res[i].more {
					if !m.flush() {
						return false, nil
					}
					m.free(res[i])
					r, ok := <-outs[i]
					if !ok {
						return false, cmp.Or(firstErr, ctx.Err())
					}
					res[i], heads[i] = r, 0
					if r.err != nil && (errPos < 0 || r.errPos < errPos) {
						firstErr, errPos = r.err, r.errPos
					}
				}
			}
			best := -1
			var b *match // best's next run
			for i, r := range res {
				if heads[i] == len(r.matches) {
					continue
				}
				m := &r.matches[heads[i]]
				if best < 0 || m.pos < b.pos || m.pos == b.pos && CompareKeys(m.key, b.key) < 0 {
					best, b = i, m
				}
			}
			if best < 0 {
				break
			}
			r := *b
			if errPos >= 0 && r.pos >= errPos {
				break
			}
			heads[best]++
			if emitting = m.emitRun(res[best], r); !emitting {
				m.stopped(res[best], r.pos)
			}
		}
		if !m.flush() || !emitting {
			return false, nil // the consumer stopped before any error
		}
		if firstErr != nil {
			return false, firstErr
		}
		if res[0].stats != nil {
			for i, r := range res {
				m.stats.add(r.stats, i)
			}
			return true, nil
		}
		if res[0].idle {
			live.idle()
		}
		if b := res[0].batch; b != nil && !m.stop {
			select {
			case m.batches <- b: // every worker has sent its last result of it
			default:
			}
		}
		for _, r := range res {
			m.free(r)
		}
	}
}

// mergeAny emits the results of n workers as they come from out.
func (m *merger) mergeAny(ctx context.Context, n int, out <-chan *result) (ended bool, err error) {
	for r := range out {
		cut := int64(-1)
		if r.err != nil {
			cut = r.errPos
		}
		if m.chunks != nil && m.chunks.sums {
			// A count's: a tally's counts are not runs.
			if !m.chunks.sum([]*result{r}, cut) {
				m.stopped(r, r.lastPos())
				return false, nil
			}
		} else {
			for _, run := range r.matches {
				if cut >= 0 && run.pos >= cut {
					break
				}
				if !m.emitRun(r, run) {
					m.stopped(r, run.pos)
					return false, nil
				}
			}
		}
		if !m.flush() {
			return false, nil
		}
		if r.err != nil {
			return false, r.err
		}
		if r.stats != nil {
			m.stats.add(r.stats, r.worker)
			if n--; n == 0 {
				return true, nil
			}
		}
		m.free(r)
	}
	return false, ctx.Err()
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
