package source

import (
	"strconv"
	"testing"
)

// TestTypeNames looks up names that share a slot of the recent cache
// (same length, same last byte) and many others, in turns: each gets its
// own id, and an unknown name none.
func TestTypeNames(t *testing.T) {
	var tn typeNames
	var names []string
	for i := range 300 {
		names = append(names, "t"+strconv.Itoa(i%10)+strconv.Itoa(i)) // "t00", "t11", ...: last bytes repeat
	}
	for id, n := range names {
		if _, ok := tn.lookup([]byte(n)); ok {
			t.Fatalf("%q known before it was added", n)
		}
		tn.add([]byte(n), id)
	}
	for round := range 3 {
		for id, n := range names {
			if got, ok := tn.lookup([]byte(n)); !ok || got != id {
				t.Fatalf("round %d: %q is %d, %v; want %d", round, n, got, ok, id)
			}
		}
	}
	if _, ok := tn.lookup([]byte("t0")); ok {
		t.Error("an unknown name is known")
	}
	if _, ok := tn.lookup(nil); ok {
		t.Error("the empty name is known")
	}
}
