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

// TestTypeNamesStocks checks that the stock stream's names each have a
// slot of the recent cache: the map behind it is not asked once they are
// known.
func TestTypeNamesStocks(t *testing.T) {
	var tn typeNames
	for i := range 10 {
		tn.add([]byte("stock"+strconv.Itoa(i+1)), i)
	}
	for i := range 10 {
		tn.lookup([]byte("stock" + strconv.Itoa(i+1)))
	}
	tn.ids = nil // a lookup that reaches the map finds nothing now
	for i := range 10 {
		if id, ok := tn.lookup([]byte("stock" + strconv.Itoa(i+1))); !ok || id != i {
			t.Errorf("stock%d: %d, %v; want %d from the cache", i+1, id, ok, i)
		}
	}
}
