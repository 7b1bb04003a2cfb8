package minheap

import (
	"math/rand/v2"
	"slices"
	"testing"
)

type num int

func (a num) Less(b num) bool { return a < b }

// TestHeapSorts: pushes and pops interleaved at random give each pop the
// least element held, as a sorted reference does.
func TestHeapSorts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h Heap[num]
	var ref []num
	for range 10000 {
		if r.IntN(3) > 0 || len(ref) == 0 {
			x := num(r.IntN(100))
			h.Push(x)
			ref = append(ref, x)
			slices.Sort(ref)
			continue
		}
		if h.Len() != len(ref) || h.Min() != ref[0] {
			t.Fatalf("len %d min %d, want %d %d", h.Len(), h.Min(), len(ref), ref[0])
		}
		if got := h.Pop(); got != ref[0] {
			t.Fatalf("pop %d, want %d", got, ref[0])
		}
		ref = ref[1:]
	}
}
