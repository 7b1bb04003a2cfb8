package planner

import (
	"runtime"
	"strings"
	"testing"
)

// TestSplitAuto: workers = auto runs one worker on a live stream, into a
// sink that takes each match through the merge, on fewer than
// AutoEvents events a worker, and into an encoded output where the
// estimate says more than autoMatchesPerEvent matches an event; else as
// many workers as the CPUs and the events allow.
func TestSplitAuto(t *testing.T) {
	many := 1 << 22
	all := min(runtime.NumCPU(), many/AutoEvents)
	key := func(m float64) *Split { return &Split{Kind: SplitKey, MatchesPerEvent: m} }
	type autoCase struct {
		split  *Split
		events int
		sink   Sink
		n      int
		why    string
	}
	cases := []autoCase{
		{key(0.1), -1, SinkChunks, 1, ""},
		{key(0.1), many, SinkRows, 1, ""},
		{key(0.1), many, SinkChunks, all, ""},
		{key(-1), many, SinkChunks, all, ""},
		{key(50), many, SinkCount, all, ""},
		{key(7.1), many, SinkChunks, all, ""}, // W2's estimate, 1.4-1.5× on 2 workers into jsonl
		{key(11), many, SinkChunks, 1, "an estimated 11 matches an event"},
		{key(50), many, SinkChunks, 1, "an estimated 50 matches an event"},
		{&Split{Kind: SplitNone, MatchesPerEvent: 50}, many, SinkChunks, all, ""}, // it says why itself
		{&Split{Kind: SplitSegments, MatchesPerEvent: 2}, many, SinkChunks, 1, "does not cut a stream into time segments"},
		{&Split{Kind: SplitSegments, MatchesPerEvent: 0.1}, many, SinkCount, 1, "does not cut a stream into time segments"},
	}
	if runtime.NumCPU() > 1 {
		cases = append(cases, autoCase{key(0.1), 30000, SinkChunks, 1, "workers = auto and 30000 events: a split needs 65536 a worker"})
	}
	for _, c := range cases {
		n, why := c.split.Auto(c.events, c.sink)
		if runtime.NumCPU() == 1 {
			c.n, c.why = 1, ""
		}
		if n != c.n || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
			t.Errorf("%+v, %d events, sink %d: %d (%s), want %d (%s)", *c.split, c.events, c.sink, n, why, c.n, c.why)
		}
	}
}
