package source

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sase-cep/sase/event"
)

// TestRing pushes events shuffled within the slack, passing the stream's
// time as the reorder stage does (before each push, and through it at
// random releases), near both ends of int64 too: they come out in stable
// ts order.
func TestRing(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, base := range []int64{0, -500, math.MinInt64, math.MaxInt64 - 3000} {
		for _, slack := range []int64{0, 1, 3, 63, 64, 200} {
			var in []*event.Event
			ts := base
			for range 2000 {
				if r.IntN(3) > 0 && (base < 0 || ts < base+2000) {
					ts += int64(r.IntN(3))
				}
				in = append(in, &event.Event{TS: ts, Seq: int64(len(in))})
			}
			// Shuffle within the slack: by ts plus a random delay of
			// at most the slack, so no event is late.
			key := func(e *event.Event) int64 { return e.TS + int64(e.Seq*7919%(slack+1)) }
			slices.SortStableFunc(in, func(a, b *event.Event) int { return cmp.Compare(key(a), key(b)) })
			g := newRing(slack)
			var out []*event.Event
			maxTS := int64(math.MinInt64)
			for _, e := range in {
				maxTS = max(maxTS, e.TS)
				now := int64(math.MinInt64)
				if maxTS >= math.MinInt64+slack {
					now = maxTS - slack
				}
				g.pass(now)
				g.push(e)
				if r.IntN(10) == 0 {
					g.passThrough(now)
					out = append(out, g.ready...)
					g.ready = g.ready[:0]
				}
			}
			g.passThrough(math.MaxInt64)
			out = append(out, g.ready...)
			want := slices.Clone(in)
			slices.SortStableFunc(want, func(a, b *event.Event) int { return cmp.Compare(a.TS, b.TS) })
			// Equal ts keep arrival order: compare by identity.
			if len(out) != len(want) {
				t.Fatalf("base %d slack %d: %d events out, want %d", base, slack, len(out), len(want))
			}
			for i := range want {
				if out[i] != want[i] {
					t.Fatalf("base %d slack %d: event %d is ts %d (#%d), want ts %d (#%d)", base, slack, i, out[i].TS, out[i].Seq, want[i].TS, want[i].Seq)
				}
			}
		}
	}
}
