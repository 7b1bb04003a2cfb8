package event

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"unsafe"

	"github.com/sase-cep/sase/internal/testkit"
)

// TestArenaStrings checks that what an arena's blocks point to, which the
// collector does not see, survives collections while their events live,
// and that Attrs or a value copied out keep theirs after the events are
// gone: under frequent collections, with garbage reusing freed memory.
func TestArenaStrings(t *testing.T) {
	for _, live := range []bool{false, true} {
		t.Run(fmt.Sprintf("live=%v", live), func(t *testing.T) { testArenaStrings(t, live) })
	}
}

func testArenaStrings(t *testing.T, live bool) {
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	text := func(i int) string {
		return fmt.Sprintf("s%d-%s", i, strings.Repeat("x", i%40)) + strings.Repeat("long", (i%500)/499*5000)
	}
	// An arena each for the events kept, the Attrs kept and the values
	// copied out, so that none keeps another's blocks.
	var arenas [3]Arena
	if live {
		for i := range arenas {
			arenas[i].Live()
		}
	}
	var events []*Event
	var copied []Value
	var attrs [][]Value
	var garbage [][]byte
	for i := range 30_000 { // each arena's 10 000 events take two event blocks and three value blocks
		a := &arenas[i%3]
		e := a.Event(10)       // a value block lasts 3276 events, an event block 4096: some value blocks are kept by no current-block link
		buf := []byte(text(i)) // a read buffer, reused below
		a.Set(e.Attrs, 0, IntValue(int64(i)))
		a.Set(e.Attrs, 2, StringValue(string(buf)))
		clear(buf)
		switch i % 3 {
		case 0:
			events = append(events, e)
		case 1:
			attrs = append(attrs, e.Attrs)
		case 2:
			copied = append(copied, e.Attrs[2])
		}
		garbage = append(garbage, make([]byte, 64))
		if len(garbage) > 1000 {
			garbage = garbage[:0]
		}
	}
	arenas = [3]Arena{}
	runtime.GC()
	churn := func() { // small and block-sized garbage over freed memory
		// 8 MB in blocks' size: enough that dropping the blocks'
		// cleanups, or the links between blocks, fails every run.
		for range 10_000 {
			garbage = append(garbage[:0], []byte(strings.Repeat("y", 48)))
		}
		for range 16 {
			garbage = append(garbage[:0], bytes.Repeat([]byte{0xaa}, 512<<10))
		}
		runtime.GC()
	}
	churn()
	for k, e := range events {
		i := 3 * k
		if e.Attrs[0].Int() != int64(i) || !e.Attrs[1].IsAbsent() || e.Attrs[2].Str() != text(i) {
			t.Fatalf("event %d: attrs %v", i, e.Attrs)
		}
	}
	events = nil
	runtime.GC()
	churn() // the first collection runs the blocks' cleanups, the next free what they kept
	for k, a := range attrs {
		if i := 3*k + 1; a[0].Int() != int64(i) || a[2].Str() != text(i) {
			t.Fatalf("attrs of event %d: %v", i, a)
		}
	}
	for k, v := range copied {
		if want := text(3*k + 2); v.Str() != want {
			t.Fatalf("copied value %d: %q, want %q", 3*k+2, v.Str(), want)
		}
	}
}

// TestArenaUnrun checks that the end of the last run, given back with
// its values, is what the arena hands out next, and that a run's end is
// left alone once something else was handed out.
func TestArenaUnrun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first int // events of 3 attributes handed out before the run
		limit int // the run's
		used  int // its events used
		n     int // attributes
	}{
		{"first", 0, 10, 0, 3},
		{"no attrs", 5, 10, 4, 0},
		{"mid block", 100, 64, 63, 4},
		{"to the end of its event block", arenaEvents - 10, 64, 2, 2},
		{"to the end of its value block", 5000, 64, 1, (arenaValues - 3*5000) / 10},
		{"all used", 7, 8, 8, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Arena
			for range tc.first {
				a.Event(3)
			}
			run := a.Run(tc.limit, tc.n)
			used := min(tc.used, len(run))
			for k := range run {
				for i := range tc.n {
					a.Set(run[k].Attrs, i, StringValue("x"))
				}
			}
			a.Unrun(run[used:])
			if used == len(run) {
				if e := a.Event(tc.n); e == &run[len(run)-1] {
					t.Fatal("an event handed out twice")
				}
				return
			}
			f := a.Event(tc.n)
			rest := &run[used]
			if f != rest || tc.n > 0 && unsafe.SliceData(f.Attrs) != unsafe.SliceData(rest.Attrs) {
				t.Fatalf("given back %p (attrs %p), next %p (attrs %p): not given back", rest, rest.Attrs, f, f.Attrs)
			}
			for i, v := range f.Attrs {
				if !v.IsAbsent() {
					t.Fatalf("attr %d of the next event: %v, want absent", i, v)
				}
			}
		})
	}
	var a Arena // a run's end is left alone once another event was handed out
	run := a.Run(4, 2)
	e := a.Event(2)
	a.Unrun(run[1:])
	if f := a.Event(2); f == &run[1] || f == e {
		t.Fatal("the end of a run not the last was given back")
	}
}

// TestSetNumber checks that a number or bool set into a cleared slot reads
// back as itself, its neighbours untouched.
func TestSetNumber(t *testing.T) {
	for _, v := range []Value{IntValue(0), IntValue(-7), IntValue(1 << 62), FloatValue(2.5), FloatValue(-0.0), BoolValue(true), BoolValue(false)} {
		var a Arena
		e := a.Event(3)
		SetNumber(e.Attrs, 1, v)
		if got := e.Attrs[1]; !got.Identical(v) {
			t.Errorf("SetNumber(%v): %v (%s)", v, got, got.Kind())
		}
		if !e.Attrs[0].IsAbsent() || !e.Attrs[2].IsAbsent() {
			t.Errorf("SetNumber(%v) touched a neighbour: %v", v, e.Attrs)
		}
	}
}

// TestArenaRun checks that a run is up to its limit of events (not
// cleared: the caller sets every field) with Attrs of the length asked,
// at consecutive addresses, never overlapping what was handed out before
// (events or values), and that events after it come from the same blocks.
func TestArenaRun(t *testing.T) {
	for _, live := range []bool{false, true} {
		t.Run(fmt.Sprintf("live=%v", live), func(t *testing.T) { testArenaRun(t, live) })
	}
}

func testArenaRun(t *testing.T, live bool) {
	var a Arena
	if live {
		a.Live()
	}
	var handed, between []*Event
	total := 0
	for i, tc := range []struct{ limit, n int }{
		{1, 4}, {100, 4}, {arenaEvents, 4}, {3 * arenaEvents, 0}, {5000, 7}, {1, 0}, {arenaValues, 3}, {0, 2},
	} {
		e := a.Event(2) // an event between runs: the run must not overlap it
		a.Set(e.Attrs, 0, StringValue("between"))
		between = append(between, e)
		run := a.Run(tc.limit, tc.n)
		if len(run) < 1 || len(run) > max(tc.limit, 1) {
			t.Fatalf("run %d: %d events, want 1 to %d", i, len(run), tc.limit)
		}
		for k := range run {
			e := &run[k]
			if len(e.Attrs) != tc.n || cap(e.Attrs) != tc.n {
				t.Fatalf("run %d event %d: %d attrs (cap %d), want %d", i, k, len(e.Attrs), cap(e.Attrs), tc.n)
			}
			if k > 0 && tc.n > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(e.Attrs))) != uintptr(unsafe.Pointer(unsafe.SliceData(run[k-1].Attrs)))+uintptr(tc.n*valueSize) {
				t.Fatalf("run %d event %d: attrs not after the previous event's", i, k)
			}
			e.Seq = int64(total) // marks what each run got: an overlap overwrites one
			for j := range e.Attrs {
				SetNumber(e.Attrs, j, IntValue(int64(total)))
			}
			handed = append(handed, e)
			total++
		}
	}
	for _, e := range handed {
		for _, v := range e.Attrs {
			if v.Int() != e.Seq {
				t.Fatalf("event %d: attrs %v overwritten", e.Seq, e.Attrs)
			}
		}
	}
	for _, e := range between {
		if e.Attrs[0].Str() != "between" || !e.Attrs[1].IsAbsent() {
			t.Fatalf("an event between runs: attrs %v overwritten", e.Attrs)
		}
	}
}

// TestArenaGrowth checks that blocks double up to their cap, so that a
// large stream's blocks are large and a small one's small.
func TestArenaGrowth(t *testing.T) {
	var a Arena
	var sizes []int
	for range 10 {
		a.Run(1, 1)
		sizes = append(sizes, len(a.events))
		a.nevents = len(a.events) // the next Run starts a block
	}
	for i, got := range sizes {
		if want := arenaEvents << min(i, eventGrowth); got != want {
			t.Fatalf("event block %d: %d events, want %d (all: %v)", i, got, want, sizes)
		}
	}
	var b Arena
	sizes = sizes[:0]
	for range 10 {
		b.Event(1)
		sizes = append(sizes, len(b.values))
		b.nvalues = len(b.values)
	}
	for i, got := range sizes {
		if want := arenaValues << min(i, valueGrowth); got != want {
			t.Fatalf("value block %d: %d values, want %d (all: %v)", i, got, want, sizes)
		}
	}
	if e := b.Event(arenaValues << valueGrowth * 2); len(e.Attrs) != arenaValues<<valueGrowth*2 {
		t.Fatalf("an event of more attrs than a block: %d attrs", len(e.Attrs))
	}
}

// TestArenaLive checks that a live arena hands out each event and its
// values from one block (what holds the event holds them), of one small
// size however many events it hands out, with none allocated ahead, and
// that an event of more values than a block gets a block its size.
func TestArenaLive(t *testing.T) {
	var a Arena
	a.Live()
	inBlock := func(e *Event) {
		t.Helper()
		if len(e.Attrs) == 0 {
			return
		}
		base := uintptr(unsafe.Pointer(unsafe.SliceData(a.events)))
		end := uintptr(unsafe.Pointer(unsafe.SliceData(a.values))) + uintptr(len(a.values)*valueSize)
		p, q := uintptr(unsafe.Pointer(e)), uintptr(unsafe.Pointer(unsafe.SliceData(e.Attrs)))
		if p < base || p >= base+uintptr(arenaEvents*eventSize) || q < base+uintptr(arenaEvents*eventSize) || q+uintptr(len(e.Attrs)*valueSize) > end {
			t.Fatalf("event at %#x, attrs at %#x: not in the block [%#x, %#x)", p, q, base, end)
		}
	}
	for i := range 5 * arenaEvents {
		n := []int{4, 0, 9, 4}[i%4]
		if i%3 == 0 {
			run := a.Run(7, n)
			for k := range run {
				inBlock(&run[k])
			}
			continue
		}
		inBlock(a.Event(n))
		if len(a.events) != arenaEvents || len(a.values) > arenaValues {
			t.Fatalf("a block of %d events and %d values, want %d and at most %d", len(a.events), len(a.values), arenaEvents, arenaValues)
		}
	}
	if a.nextEvents != nil || a.nextValues != nil {
		t.Fatal("a live arena allocated blocks ahead")
	}
	big := 4 * arenaValues
	if e := a.Event(big); len(e.Attrs) != big || len(a.values) != big {
		t.Fatalf("an event of %d values: %d attrs, a block of %d values", big, len(e.Attrs), len(a.values))
	}
}

// TestArenaAhead checks that the blocks an arena allocates ahead, once
// its blocks are at full size, are handed out whole and apart from every
// other block, and that populate, which backs them with memory while
// they may be written, leaves what they hold as it is.
func TestArenaAhead(t *testing.T) {
	var a Arena
	var runs [][]Event
	total := 0
	for total < 3*(arenaEvents<<eventGrowth) { // past several full-size event and value blocks
		run := a.Run(1000, 3)
		for k := range run {
			run[k].Seq = int64(total)
			for j := range run[k].Attrs {
				SetNumber(run[k].Attrs, j, IntValue(int64(total)))
			}
			total++
		}
		runs = append(runs, run)
	}
	if a.nextEvents == nil || a.nextValues == nil {
		t.Fatalf("no blocks allocated ahead after %d event blocks and %d value blocks", a.eventBlocks, a.valueBlocks)
	}
	want := 0
	for _, run := range runs {
		for k := range run {
			if e := &run[k]; e.Seq != int64(want) || e.Attrs[0].Int() != int64(want) || e.Attrs[2].Int() != int64(want) {
				t.Fatalf("event %d: seq %d, attrs %v: overwritten", want, e.Seq, e.Attrs)
			}
			want++
		}
	}
	b := noZero(3 << 20)
	for i := range b {
		b[i] = byte(i * 7)
	}
	populate(b)
	for i := range b {
		if b[i] != byte(i*7) {
			t.Fatalf("populate changed byte %d", i)
		}
	}
}

// TestArenaBatch checks that events an arena keeps (KeepAll) survive
// collections while only its batches, which the collector does not scan,
// point to them, and that batches do not overlap.
func TestArenaBatch(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	a := &Arena{}
	a.Event(1) // a block started before KeepAll is kept too
	a.KeepAll()
	var batches [][]*Event
	for i := range 50_000 {
		if i%300 == 0 {
			b := a.Batch(300)
			if len(b) != 0 || cap(b) != 300 {
				t.Fatalf("batch: len %d cap %d, want 0 and 300", len(b), cap(b))
			}
			batches = append(batches, b)
		}
		e := a.Event(2)
		e.Seq = int64(i)
		a.Set(e.Attrs, 1, StringValue(fmt.Sprint("v", i)))
		last := &batches[len(batches)-1]
		*last = append(*last, e)
	}
	testkit.Churn()
	i := 0
	for _, b := range batches {
		for _, e := range b {
			if e.Seq != int64(i) || e.Attrs[1].Str() != fmt.Sprint("v", i) {
				t.Fatalf("event %d: %+v", i, *e)
			}
			i++
		}
	}
	runtime.KeepAlive(a)
}
