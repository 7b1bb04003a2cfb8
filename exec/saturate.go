package exec

import "math"

// satAdd and satSub are a+b and a-b clamped to int64's range: a window
// bound (ts - W, ts + W) near the extreme timestamps must stop at the end
// of time, not wrap around to the other end. For the comparisons they
// feed (t >= ts - W, t <= ts + W) the clamped bound gives the exact answer.
func satAdd(a, b int64) int64 {
	s := a + b
	if (a^s)&(b^s) < 0 { // a and b have the same sign, s the other
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

func satSub(a, b int64) int64 {
	s := a - b
	if (a^b)&(a^s) < 0 { // a and b have opposite signs, s b's
		if b > 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return s
}
