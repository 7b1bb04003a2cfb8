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
		name := "stock" + strconv.Itoa(i+1)
		if id, ok := tn.lookup([]byte(name)); !ok || id != i {
			t.Errorf("%s: %d, %v; want %d from the cache", name, id, ok, i)
		}
		if id, ok := tn.cached(inBuffer(name, "xx")); !ok || id != i {
			t.Errorf("%s in a buffer: %d, %v; want %d from the cache", name, id, ok, i)
		}
	}
}

// TestTypeNamesCached looks up short names in a read buffer, as the fast
// paths do, each followed by other bytes: cached finds a name of up to 8
// bytes that lookup has just found, never another name's id (names that
// share a word's bytes, a NUL among them, or a slot of recent), whatever
// follows it; longer names are lookup's alone.
func TestTypeNamesCached(t *testing.T) {
	names := []string{"a", "ab", "a\x00", "stock1", "stock10", "abcdefgh", "abcdefg", "abcdefghi", "\xff\xfe"}
	for i := range 100 {
		names = append(names, "t"+strconv.Itoa(i))
	}
	var tn typeNames
	for id, n := range names {
		tn.add([]byte(n), id)
	}
	inBuf := func(name string) []byte { return inBuffer(name, "xyz\x00\x00abcdefgh") }
	for id, n := range names {
		if got, ok := tn.lookup(inBuf(n)); !ok || got != id {
			t.Fatalf("lookup(%q) = %d, %v; want %d", n, got, ok, id)
		}
		if got, ok := tn.cached(inBuf(n)); ok != (len(n) <= 8) || ok && got != id {
			t.Errorf("cached(%q) just after its lookup = %d, %v; want %d, %v", n, got, ok, id, len(n) <= 8)
		}
		for other, m := range names {
			if got, ok := tn.cached(inBuf(m)); ok && got != other {
				t.Errorf("after %q: cached(%q) = %d, want %d", n, m, got, other)
			}
		}
	}
	for _, n := range []string{"b", "a\x00\x00", "stock2", "abcdefgx"} {
		if id, ok := tn.cached(inBuf(n)); ok {
			t.Errorf("cached(%q) = %d: an unknown name is known", n, id)
		}
	}
}
