package exec

import (
	"math"
	"testing"

	"github.com/sase-cep/sase/event"
)

// TestRecepSetReuse checks that a buffer set a sweep released holds no
// event (not even in the arrays' dead ends) but keeps its arrays, and that
// reseeding it gives it exactly the live events of wild, with their
// timestamps and columns, as a new set seeded from wild has.
func TestRecepSetReuse(t *testing.T) {
	ev := func(ts int64, price float64) *event.Event {
		return &event.Event{TS: ts, Attrs: []event.Value{event.FloatValue(price)}}
	}
	c := &eventCache{}
	newSet := func() *rset { return &rset{bufs: []rbuf{{cols: make([][]float64, 1)}, {cols: make([][]float64, 1)}}} }
	s := newSet()
	for i := range 40 {
		s.bufs[i%2].push(ev(int64(i), math.NaN()), []int{0})
	}
	for i := range s.bufs {
		s.bufs[i].prune(100) // everything: the set is empty, its arrays full of dead events
	}
	if !s.empty() {
		t.Fatal("pruned set not empty")
	}
	s.release()
	for i, b := range s.bufs {
		if len(b.evs) != 0 || len(b.ts) != 0 || len(b.cols[0]) != 0 || b.head != 0 || b.nan {
			t.Fatalf("buffer %d after release: %+v", i, b)
		}
		if cap(b.evs) == 0 || cap(b.cols[0]) == 0 {
			t.Fatalf("buffer %d lost its arrays", i)
		}
		for k, e := range b.evs[:cap(b.evs)] {
			if e != nil {
				t.Fatalf("buffer %d keeps event %d alive after release", i, k)
			}
		}
	}
	wild := newSet()
	for i, p := range []float64{1, 2, 3, 4} {
		wild.bufs[i%2].push(ev(int64(200+i), p), []int{0})
	}
	wild.bufs[0].prune(201) // the first of buffer 0's is dead
	c.reseed(wild, s)
	fresh := newSet()
	c.reseed(wild, fresh)
	for i := range s.bufs {
		got, want := &s.bufs[i], &fresh.bufs[i]
		if len(got.live()) != len(wild.bufs[i].live()) {
			t.Fatalf("buffer %d: %d events, want %d", i, len(got.live()), len(wild.bufs[i].live()))
		}
		for k := range got.live() {
			if got.evs[got.head+k] != want.evs[want.head+k] || got.ts[got.head+k] != want.ts[want.head+k] || got.cols[0][got.head+k] != want.cols[0][want.head+k] {
				t.Fatalf("buffer %d event %d differs from a fresh set's", i, k)
			}
		}
		if got.nan != want.nan {
			t.Fatalf("buffer %d: nan %v, want %v", i, got.nan, want.nan)
		}
	}
}
