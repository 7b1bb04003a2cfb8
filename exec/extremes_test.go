package exec_test

import (
	"slices"
	"strings"
	"testing"
)

// TestExtremeTimestamps runs, on every engine, queries whose window
// bounds (ts - W, ts + W) and interval ends (ts - 1, ts + 1) fall beyond
// the smallest or largest timestamp: they must stop there, not wrap
// around to the other end of time.
func TestExtremeTimestamps(t *testing.T) {
	const (
		min = "-9223372036854775808"
		max = "9223372036854775807"
	)
	for _, tc := range []struct {
		name, csv, query string
		want             []string
	}{
		{"min minus window", "A,-9223372036854775802\nA,-9223372036854775802\n",
			"PATTERN SEQ(A a) WITHIN 1000000", []string{`{"a":0}`, `{"a":1}`}},
		{"pair near min", "A," + min + "\nB,-9223372036854775803\nB,-9223372036854775788\n",
			"PATTERN SEQ(A a, B b) WITHIN 10", []string{`{"a":0,"b":1}`}},
		{"pair near max", "A,9223372036854775800\nB,9223372036854775805\nB," + max + "\n",
			"PATTERN SEQ(A a, B b) WITHIN 10", []string{`{"a":0,"b":1}`, `{"a":0,"b":2}`}},
		{"negated end past max", "A,9223372036854775800\nB,9223372036854775803\nC," + max + "\n",
			"PATTERN SEQ(A a, B b, !C c) WITHIN 10", []string{}},
		{"negated end after max", "C,0\nA,1\nB," + max + "\n",
			"PATTERN SEQ(A a, B b, !C c)", []string{`{"a":1,"b":2}`}},
		{"negated start before min", "C," + min + "\nA," + min + "\nB,5\nC,10\n",
			"PATTERN SEQ(!C c, A a, B b)", []string{`{"a":1,"b":2}`}},
		{"negated start, window past min", "C," + min + "\nA,-9223372036854775806\nB,-9223372036854775805\n",
			"PATTERN SEQ(!C c, A a, B b) WITHIN 5", []string{}},
		{"trailing closure past max", "A,9223372036854775800\nB,9223372036854775803\nB," + max + "\n",
			"PATTERN SEQ(A a, B+ b[]) WITHIN 10", []string{`{"a":0,"b":[1,2]}`}},
		{"leading closure before min", "B," + min + "\nB,-9223372036854775807\nA,-9223372036854775806\n",
			"PATTERN SEQ(B+ b[], A a) WITHIN 10", []string{`{"a":2,"b":[0,1]}`}},
		{"next-match near max", "A,9223372036854775800\nB," + max + "\n",
			"PATTERN SEQ(A a, B b) WHERE skip-till-next-match WITHIN 10", []string{`{"a":0,"b":1}`}},
		{"any-match closure near max", "A,9223372036854775800\nB,9223372036854775806\nB," + max + "\nC," + max + "\n",
			"PATTERN SEQ(A a, B+ b[]) WHERE skip-till-any-match WITHIN 10",
			[]string{`{"a":0,"b":[1,2]}`, `{"a":0,"b":[1]}`, `{"a":0,"b":[2]}`}},
		// The largest window: 0 - min is 2^63 ticks, one more than it.
		{"largest window", "A," + min + "\nA,-9223372036854775807\nB,0\n",
			"PATTERN SEQ(A a, B b) WITHIN 9223372036854775807", []string{`{"a":1,"b":2}`}},
		{"largest window, both ends", "A," + min + "\nB," + max + "\n",
			"PATTERN SEQ(A a, B b, !C c) WITHIN 9223372036854775807", []string{}},
		{"largest window, negated start", "C," + min + "\nA,0\nB," + max + "\n",
			"PATTERN SEQ(!C c, A a, B b) WITHIN 9223372036854775807", []string{`{"a":1,"b":2}`}},
	} {
		c := conformanceCase{Name: "extreme", StreamCSV: "type,ts\n" + tc.csv, Query: tc.query}
		want := slices.Sorted(slices.Values(tc.want))
		for _, engine := range engines {
			got, err := runCase(c, engine)
			if err != nil {
				t.Errorf("%s: %s: %v", tc.name, engine, err)
				continue
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s: %s\ngot  %s\nwant %s", tc.name, engine, tc.query, strings.Join(got, " "), strings.Join(want, " "))
			}
		}
	}
}
