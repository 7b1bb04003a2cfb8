package exec

import (
	"math"
	"testing"
)

func TestSaturate(t *testing.T) {
	const lo, hi = math.MinInt64, math.MaxInt64
	for _, tc := range []struct{ a, b, sum, diff int64 }{
		{1, 2, 3, -1},
		{hi, 1, hi, hi - 1},
		{hi, hi, hi, 0},
		{lo, 1, lo + 1, lo},
		{lo, -1, lo, lo + 1},
		{lo, lo, lo, 0},
		{lo, hi, -1, lo},
		{hi, lo, -1, hi},
		{-5, hi, hi - 5, lo},
		{5, lo, lo + 5, hi},
		{0, lo, lo, hi},
	} {
		if got := satAdd(tc.a, tc.b); got != tc.sum {
			t.Errorf("satAdd(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.sum)
		}
		if got := satSub(tc.a, tc.b); got != tc.diff {
			t.Errorf("satSub(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.diff)
		}
	}
}
