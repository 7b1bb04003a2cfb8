package event

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestArenaStrings checks that strings in an arena's value blocks, which
// the collector does not scan, survive collections while their events
// live, and that a value copied out keeps its text after its events are
// gone: under frequent collections, with garbage reusing freed memory.
func TestArenaStrings(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	text := func(i int) string {
		return fmt.Sprintf("s%d-%s", i, strings.Repeat("x", i%40)) + strings.Repeat("long", (i%500)/499*5000)
	}
	var a Arena
	var events []*Event
	var copied []Value
	var garbage [][]byte
	for i := range 60_000 {
		e := a.Event(3)
		buf := []byte(text(i)) // a read buffer, reused below
		a.Set(e.Attrs, 0, IntValue(int64(i)))
		a.Set(e.Attrs, 2, StringValue(string(buf)))
		clear(buf)
		if i%7 == 0 {
			copied = append(copied, e.Attrs[2])
		}
		if i%3 == 0 {
			events = append(events, e)
		}
		garbage = append(garbage, make([]byte, 64))
		if len(garbage) > 1000 {
			garbage = garbage[:0]
		}
	}
	a = Arena{}
	runtime.GC()
	for range 3 {
		for range 10_000 {
			garbage = append(garbage[:0], []byte(strings.Repeat("y", 48)))
		}
		runtime.GC()
	}
	for k, e := range events {
		i := 3 * k
		if e.Attrs[0].Int() != int64(i) || !e.Attrs[1].IsAbsent() || e.Attrs[2].Str() != text(i) {
			t.Fatalf("event %d: attrs %v", i, e.Attrs)
		}
	}
	events = nil
	runtime.GC()
	runtime.GC() // the first runs the blocks' cleanups; the second may free their text
	for range 10_000 {
		garbage = append(garbage[:0], []byte(strings.Repeat("z", 48)))
	}
	for k, v := range copied {
		if want := text(7 * k); v.Str() != want {
			t.Fatalf("copied value %d: %q, want %q", 7*k, v.Str(), want)
		}
	}
}
