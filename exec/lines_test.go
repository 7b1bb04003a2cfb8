package exec

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestOfRunLines checks that the arrays ofRun makes for a split run's
// worker, one after the other as a worker's engines make them, never share
// a cache line, and that one run's are packed.
func TestOfRunLines(t *testing.T) {
	type span struct{ first, last uintptr } // cache lines
	lines := func(p unsafe.Pointer, size uintptr) span {
		a := uintptr(p)
		return span{a / cacheLine, (a + size - 1) / cacheLine}
	}
	for _, split := range []bool{false, true} {
		r := &runner{split: split}
		var spans []span
		var keep []any // alive, so that no address is reused
		for i := range 200 {
			n := 1 + i%4
			var s span
			switch i % 3 {
			case 0:
				a := ofRun[bool](r, n)
				s, keep = lines(unsafe.Pointer(&a[0]), uintptr(n)), append(keep, a)
			case 1:
				a := ofRun[int64](r, n)
				s, keep = lines(unsafe.Pointer(&a[0]), uintptr(n)*8), append(keep, a)
			default:
				a := ofRun[Cell](r, n)
				s, keep = lines(unsafe.Pointer(&a[0]), uintptr(n)*unsafe.Sizeof(Cell{})), append(keep, a)
				if len(a) != n || cap(a) != n {
					t.Fatalf("split %v: len %d cap %d, want %d", split, len(a), cap(a), n)
				}
			}
			spans = append(spans, s)
		}
		runtime.KeepAlive(keep)
		shared := 0
		for i, a := range spans {
			for _, b := range spans[i+1:] {
				if a.first <= b.last && b.first <= a.last {
					shared++
				}
			}
		}
		if split && shared > 0 {
			t.Errorf("split: %d pairs of arrays share a cache line", shared)
		}
		if !split && shared == 0 {
			t.Errorf("one run: no two of 200 small arrays share a line: are they padded?")
		}
	}
}

// TestRunnerLines: a runner's size is a whole number of cache lines, so
// that the heap's size class for it starts each one on a line, and the
// fields that each item reads (runner's first two lines) take two lines,
// not three (a field added may have to take the room of padding).
func TestRunnerLines(t *testing.T) {
	if n := unsafe.Sizeof(runner{}); n%cacheLine != 0 {
		t.Errorf("a runner is %d bytes, not a multiple of %d", n, cacheLine)
	}
}
