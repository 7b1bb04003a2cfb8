package queue

import (
	"slices"
	"testing"
)

func TestDue(t *testing.T) {
	for _, c := range []struct {
		n, c, lo int
		due      bool
	}{
		{8, 8, 4, true},  // full, half dropped
		{8, 8, 7, true},  // full, most dropped
		{8, 8, 3, false}, // full, less than half dropped: grow
		{7, 8, 7, false}, // room left: append
		{8, 8, 0, false}, // nothing dropped
		{1, 1, 1, true},  // one slot, dropped
		{0, 0, 0, false}, // empty
	} {
		if got := Due(c.n, c.c, c.lo); got != c.due {
			t.Errorf("Due(%d, %d, %d) = %v, want %v", c.n, c.c, c.lo, got, c.due)
		}
	}
}

func TestDown(t *testing.T) {
	a, b, c, d := 1, 2, 3, 4
	s := []*int{&a, &b, &c, &d}
	got := Down(s, 1)
	if !slices.Equal(got, []*int{&b, &c, &d}) {
		t.Errorf("Down kept %v, want b, c, d", got)
	}
	if s[3] != nil {
		t.Errorf("Down left the slot past the live items pointing to %d", *s[3])
	}
	if cap(got) != 4 {
		t.Errorf("Down's result has capacity %d, want the slice's 4", cap(got))
	}
	if got := Down(s[:3], 3); len(got) != 0 || s[0] != nil {
		t.Errorf("Down of all dropped = %v with s[0] = %v, want empty and cleared", got, s[0])
	}
}
