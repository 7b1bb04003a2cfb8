package event

import (
	"runtime"
	"strings"
	"unsafe"
)

// Arena hands out the events of a loaded stream and their attribute
// values from large blocks: one allocation per block instead of two per
// event. Everything handed out stays valid; blocks are never reused.
//
// Blocks double in size as an arena fills, up to a few megabytes: a small
// stream takes little, and a large one takes its memory in blocks the
// kernel can back with huge pages (hugePages), as first touching fresh
// memory a 4 KB page at a time was half of a 1M-event load's time. Not
// larger: the last block's unused end counts against the stream, and
// blocks of 6 MB and more, freed, were reused less by the next stream's
// (a repeated GENERATE touched fresh memory each time).
//
// The blocks are memory the garbage collector does not scan and the
// runtime does not clear: a 1M-event load spent much of its time in the
// collector marking through every event's Attrs and every value's pointer,
// most of them to no string, and clearing blocks that are written anyway.
// So what they point to is kept alive another way: a cleanup on each block
// (runtime.AddCleanup) keeps reachable, for as long as the block is, the
// value blocks its events' Attrs use (for an event block) or the text
// chunks its strings point into (for a value block). This is why an arena
// event's Attrs are set only by Event, and a string value goes into them
// only through Set (which copies its text into the arena's chunks), never
// by a plain assignment: what a block alone points to would be freed under
// it. (Event clears the slots it hands out, so a plain assignment of a
// number or bool, whose write barrier reads the word it overwrites as a
// pointer, is safe.) An event's other fields are
// plain numbers: set them at will. Values read out of Attrs are ordinary
// values (copies are scanned where they are stored).
type Arena struct {
	// The current blocks, and how much of each is handed out: indices,
	// not slices that shrink, so that handing out stores no pointer (and
	// so runs no write barrier).
	events     []Event    // the current event block
	nevents    int        // events handed out of it
	eventsKeep *arenaKeep // what its events point to
	values     []Value    // the current value block
	nvalues    int        // values handed out of it
	valueBlock []byte     // values, as the bytes the block was allocated as
	valuesKeep *arenaKeep // what its strings point to
	text       []byte     // what is left of the current text chunk
	// Blocks started so far, which sets the next one's size.
	eventBlocks, valueBlocks int
	// The blocks after the current ones, once blocks are at full size:
	// allocated before they are needed and backed with memory by another
	// thread meanwhile (populate).
	nextEvents, nextValues []byte
	keepAll                bool      // KeepAll was called
	live                   bool      // Live was called
	all                    [][]byte  // then every event block
	batches                []uintptr // what is left of Batch's chunk
	batchChunks            int
}

// arenaKeep is what a block points to.
type arenaKeep struct{ blocks [][]byte }

const (
	arenaEvents = 4096  // the first event block: 192 KB, doubling to 3 MB
	arenaValues = 32768 // the first value block: 512 KB, doubling to 2 MB
	eventGrowth = 4     // doublings of the event block
	valueGrowth = 2     // and of the value block
	arenaBatch  = 4096  // Batch's first chunk, in pointers: 32 KB, doubling to 1 MB
	batchGrowth = 5
	arenaText   = 64 << 10 // a text chunk; a longer string gets one of its own
	eventSize   = int(unsafe.Sizeof(Event{}))
	valueSize   = int(unsafe.Sizeof(Value{}))
	valueWords  = valueSize / 8
)

// Event returns a zeroed event whose Attrs has length n, all absent.
func (a *Arena) Event(n int) *Event {
	if len(a.values)-a.nvalues < n { // values first: a live arena's new block has both
		a.newValues(n)
	}
	if a.nevents == len(a.events) {
		a.newEvents(n)
	}
	e := &a.events[a.nevents]
	a.nevents++
	*(*[6]uint64)(unsafe.Pointer(e)) = [6]uint64{} // as words: no write barrier reads the old ones
	if n > 0 {
		attrs := a.values[a.nvalues : a.nvalues+n : a.nvalues+n] // full slice expression: appends never spill into a neighbour
		a.nvalues += n
		w := words(attrs)
		for k := range w { // word by word: clear (or a loop of w[k] = {}) would call memclr, for a few words
			w[k][0], w[k][1] = 0, 0
		}
		*(*sliceHeader)(unsafe.Pointer(&e.Attrs)) = sliceHeader{uintptr(unsafe.Pointer(unsafe.SliceData(attrs))), n, n}
	}
	return e
}

// Run hands out up to limit events (at least one), each with Attrs of
// length n, at consecutive addresses: one call, not one an event, for a
// generator that fills them all (a caller may keep them by the run, a
// pointer a run for the collector to scan). They are not cleared, unlike
// Event's: the caller sets Type, TS and Seq and every value, numbers with
// SetNumber, strings with Set (as words, so no write barrier reads what
// the memory held before), and saves writing the run twice.
func (a *Arena) Run(limit, n int) []Event {
	if len(a.values)-a.nvalues < n {
		a.newValues(n)
	}
	if a.nevents == len(a.events) {
		a.newEvents(n)
	}
	k := min(limit, len(a.events)-a.nevents)
	if n > 0 {
		k = min(k, (len(a.values)-a.nvalues)/n)
	}
	k = max(k, 1)
	run := a.events[a.nevents : a.nevents+k : a.nevents+k]
	a.nevents += k
	var data uintptr // no values: every event's Attrs is nil
	if n > 0 {
		data = uintptr(unsafe.Pointer(&a.values[a.nvalues]))
		a.nvalues += k * n
	}
	for i := range run {
		*(*sliceHeader)(unsafe.Pointer(&run[i].Attrs)) = sliceHeader{data + uintptr(i*n*valueSize), n, n}
	}
	return run
}

// KeepAll makes the arena keep every event block it has handed out
// events from, or will (and so their values and text), for as long as the
// arena is reachable: its events may then be held, until then, by
// pointers the collector does not scan (Batch).
func (a *Arena) KeepAll() {
	if !a.keepAll && a.events != nil {
		a.all = append(a.all, asBytes(unsafe.Pointer(unsafe.SliceData(a.events)), len(a.events)*eventSize))
	}
	a.keepAll = true
}

// Live makes the arena hand out each event and its values from one block
// (its strings' text aside) of a fixed, small size, with none allocated
// ahead: for a live stream, whose events the queries let go of as their
// windows pass. A block is freed only when none of its events is held;
// a value block of its own would be freed only a collection later (a
// cleanup keeps it), so the heap would hold a whole cycle's values more,
// which raises the next goal, and full-size blocks (3 MB of events, 2 MB
// of values, as much again ahead) pinned megabytes per event held: the
// 20M-event live example's heap doubled.
func (a *Arena) Live() { a.live = true }

// Batch returns an empty slice with room for n event pointers in memory
// the collector does not scan: the pointers keep nothing alive, so they
// may point only to events of an arena that keeps its blocks (KeepAll),
// and only while that arena is reachable. A loader that gathers a whole
// stream before it makes the stream's Events (scanned) holds its events
// this way, so that a collection during the load does not scan a pointer
// an event, which was a third of a load's time. Batches are cut from
// chunks that double up to a megabyte, which lie together rather than
// among the arena's blocks, whose huge pages they would break up.
func (a *Arena) Batch(n int) []*Event {
	if len(a.batches) < n {
		size := max(n, arenaBatch<<min(a.batchChunks, batchGrowth))
		a.batchChunks++
		// Cleared (make): a store's write barrier reads the word it
		// overwrites as a pointer.
		a.batches = make([]uintptr, size)
		if size*8 >= 1<<20 {
			hugePages(unsafe.Pointer(unsafe.SliceData(a.batches)), size*8)
		}
	}
	words := a.batches[:n:n]
	a.batches = a.batches[n:]
	return unsafe.Slice((**Event)(unsafe.Pointer(unsafe.SliceData(words))), n)[:0]
}

// Unrun gives back rest, the end of the run the arena's last Run call
// returned, unused: a decoder that takes a run's events one by one as
// lines come gives back those it did not take. Nothing is given back if
// the arena handed out anything since. Strings set into rest keep their
// text.
func (a *Arena) Unrun(rest []Event) {
	k := len(rest)
	if k == 0 || a.nevents < k || &rest[0] != &a.events[a.nevents-k] {
		return
	}
	a.nevents -= k
	if n := len(rest[0].Attrs) * k; n > 0 && a.nvalues >= n && unsafe.SliceData(rest[0].Attrs) == &a.values[a.nvalues-n] {
		a.nvalues -= n
	}
}

// sliceHeader is a slice's words.
type sliceHeader struct {
	data     uintptr
	len, cap int
}

// newEvents starts an event block, keeping the current value block, which
// its events may still use; in a live arena, a block with room for events
// of n values.
func (a *Arena) newEvents(n int) {
	if a.live {
		a.newLive(n)
		return
	}
	n = arenaEvents << min(a.eventBlocks, eventGrowth)
	a.eventBlocks++
	raw := a.next(&a.nextEvents, n*eventSize, a.eventBlocks > eventGrowth)
	a.events, a.nevents = unsafe.Slice((*Event)(unsafe.Pointer(unsafe.SliceData(raw))), n), 0
	if a.keepAll {
		a.all = append(a.all, raw)
	}
	a.eventsKeep = newKeep(raw, a.valueBlock)
}

// newValues starts a value block of at least n values, kept by the
// current event block, keeping the rest of the current text chunk, which
// its strings may still use.
func (a *Arena) newValues(n int) {
	if a.live {
		a.newLive(n)
		return
	}
	full := arenaValues << min(a.valueBlocks, valueGrowth)
	a.valueBlocks++
	raw := a.next(&a.nextValues, max(n, full)*valueSize, a.valueBlocks > valueGrowth && n <= full)
	n = len(raw) / valueSize
	a.values, a.nvalues = unsafe.Slice((*Value)(unsafe.Pointer(unsafe.SliceData(raw))), n), 0
	a.valueBlock = raw
	a.valuesKeep = newKeep(raw, a.text[:0])
	if a.eventsKeep != nil { // else the first event block keeps it (current)
		a.eventsKeep.blocks = append(a.eventsKeep.blocks, raw)
	}
}

// newLive starts a live arena's block: arenaEvents events and their
// values in one allocation, so that what holds an event holds its values,
// and the block is freed in the collection that finds none of its events
// held. It has room for n values, and for as many per event as the block
// before handed out on average (n for the first), up to a value block's
// first size.
func (a *Arena) newLive(n int) {
	w := n
	if a.nevents > 0 {
		w = (a.nvalues + a.nevents - 1) / a.nevents
	}
	nv := max(n, min(arenaEvents*w, arenaValues))
	raw := noZero(arenaEvents*eventSize + nv*valueSize)
	a.events, a.nevents = unsafe.Slice((*Event)(unsafe.Pointer(unsafe.SliceData(raw))), arenaEvents), 0
	a.values, a.nvalues = nil, 0 // none: a pointer past the block's end would be a bad pointer to the collector
	if nv > 0 {
		a.values = unsafe.Slice((*Value)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(raw)), arenaEvents*eventSize)), nv)
	}
	if a.keepAll {
		a.all = append(a.all, raw)
	}
	a.valuesKeep = newKeep(raw, a.text[:0])
}

// next returns a block of size bytes: *ahead if it is that size, else a
// new one; with more, a block of that size is then allocated into *ahead
// if none is there, and backed with memory on another thread. First
// touching fresh memory, where the kernel clears each page, was most of a
// 1M-event generation's time, and a thread that is filling a block can
// have the next one cleared meanwhile. A block allocated ahead and never
// used is freed with the arena.
func (a *Arena) next(ahead *[]byte, size int, more bool) []byte {
	raw := *ahead
	if len(raw) == size {
		*ahead = nil
	} else {
		raw = noZero(size)
	}
	if more && *ahead == nil {
		*ahead = noZero(size)
		go populate(*ahead)
	}
	return raw
}

// newKeep returns what block keeps, first (if not nil) current.
func newKeep(block, current []byte) *arenaKeep {
	k := &arenaKeep{}
	if current != nil {
		k.blocks = append(k.blocks, current)
	}
	runtime.AddCleanup(&block[0], func(*arenaKeep) {}, k)
	return k
}

// Set stores v in attrs[i], attrs being the Attrs of the event that the
// arena's last Event call returned; a string's text is copied into the
// arena, so v may be a view of a read buffer.
func (a *Arena) Set(attrs []Value, i int, v Value) {
	if v.IsString() {
		v = StringValue(a.copyText(v.Str()))
	}
	setWords(attrs, i, v)
}

// setWords stores v in attrs[i], a slot of a block not scanned, as words:
// a pointer stored there needs no write barrier (what it points to is a
// tag, or text the block's cleanup keeps).
func setWords(attrs []Value, i int, v Value) {
	w := (*[valueWords]uintptr)(unsafe.Pointer(&attrs[i]))
	w[0], w[1] = uintptr(v.p), uintptr(v.n) // v's fields, not its memory: v stays in registers
}

// SetNumber stores v, an int, float or bool, in attrs[i], a slot of an
// arena's event: its tag and bits, as words (its tag, static, needs no
// keeping).
func SetNumber(attrs []Value, i int, v Value) { setWords(attrs, i, v) }

// copyText returns a copy of s in the arena's current text chunk.
func (a *Arena) copyText(s string) string {
	if s == "" {
		return ""
	}
	var dst []byte
	if len(s) > arenaText/4 {
		dst = noZero(len(s))
		a.valuesKeep.blocks = append(a.valuesKeep.blocks, dst)
	} else {
		if len(s) > cap(a.text) {
			a.text = noZero(arenaText)[:0]
			a.valuesKeep.blocks = append(a.valuesKeep.blocks, a.text)
		}
		dst, a.text = a.text[:len(s)], a.text[len(s):len(s)]
	}
	copy(dst, s)
	return unsafe.String(unsafe.SliceData(dst), len(dst))
}

// words views values as the machine words they are made of.
func words(values []Value) [][valueWords]uint64 {
	return unsafe.Slice((*[valueWords]uint64)(unsafe.Pointer(unsafe.SliceData(values))), len(values))
}

// noZero returns n bytes the runtime has not cleared, in an allocation
// the garbage collector does not scan: strings.Builder grows without
// clearing, as no Go API allocates that way. A block of a megabyte or more
// gets huge pages where the system has them.
func noZero(n int) []byte {
	var b strings.Builder
	b.Grow(n)
	b.WriteByte(0)
	raw := unsafe.Slice(unsafe.StringData(b.String()), n)
	if n >= 1<<20 {
		hugePages(unsafe.Pointer(unsafe.SliceData(raw)), n)
	}
	return raw
}

// asBytes views the n bytes at p.
func asBytes(p unsafe.Pointer, n int) []byte { return unsafe.Slice((*byte)(p), n) }

// A Value is two machine words (Set copies it word by word), an Event six.
var (
	_ = [1]int{}[valueSize-16]
	_ = [1]int{}[eventSize-48]
)

// Pointers returns an empty slice with room for n event pointers: a
// stream's Events, which for a large stream gets huge pages as an arena's
// blocks do, and is backed with memory on another thread (populate) while
// the caller goes on.
func Pointers(n int) []*Event {
	s := make([]*Event, 0, n)
	if size := n * int(unsafe.Sizeof(&Event{})); size >= 1<<20 {
		hugePages(unsafe.Pointer(unsafe.SliceData(s)), size)
		go populate(asBytes(unsafe.Pointer(unsafe.SliceData(s)), size))
	}
	return s
}
