package event

import (
	"math"
	"testing"
)

// TestNumberCompare compares ints with floats exactly, in agreement with
// PartitionKey: values equal exactly when their keys are equal.
func TestNumberCompare(t *testing.T) {
	i, f := IntValue, FloatValue
	for _, tc := range []struct {
		a, b Value
		want int
		ok   bool
	}{
		{i(1), f(1), 0, true},
		{i(1), f(1.5), -1, true},
		{i(2), f(1.5), 1, true},
		{i(-1), f(-1.5), 1, true},
		{i(-2), f(-1.5), -1, true},
		{i(1<<53 + 1), f(1 << 53), 1, true}, // the float the int rounds to
		{i(1<<53 - 1), f(1 << 53), -1, true},
		{i(math.MaxInt64), f(0x1p63), -1, true},
		{i(math.MinInt64), f(-0x1p63), 0, true},
		{i(math.MinInt64), f(-0x1p64), 1, true},
		{i(math.MinInt64 + 1), f(-0x1p63), 1, true},
		{i(0), f(math.Inf(1)), -1, true},
		{i(0), f(math.Inf(-1)), 1, true},
		{i(0), f(math.NaN()), 0, false},
		{f(1.5), f(2.5), -1, true},
		{i(3), i(2), 1, true},
	} {
		c, ok := tc.a.Compare(tc.b)
		if c != tc.want || ok != tc.ok {
			t.Errorf("Compare(%v, %v) = %d, %v; want %d, %v", tc.a, tc.b, c, ok, tc.want, tc.ok)
		}
		if c, ok := tc.b.Compare(tc.a); c != -tc.want || ok != tc.ok {
			t.Errorf("Compare(%v, %v) = %d, %v; want %d, %v", tc.b, tc.a, c, ok, -tc.want, tc.ok)
		}
		eq := tc.ok && tc.want == 0
		if tc.a.Equal(tc.b) != eq || tc.b.Equal(tc.a) != eq {
			t.Errorf("Equal(%v, %v) = %v, want %v", tc.a, tc.b, tc.a.Equal(tc.b), eq)
		}
		if keys := PartitionKey(tc.a) == PartitionKey(tc.b); tc.ok && keys != eq {
			t.Errorf("PartitionKey(%v) == PartitionKey(%v) is %v, but Equal is %v", tc.a, tc.b, keys, eq)
		}
	}
}
