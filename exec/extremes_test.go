package exec_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/internal/randquery"
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

// TestIntOverflow runs, on every engine and on one and three workers,
// queries whose int arithmetic passes int64's ends: each must stop with
// the overflow error of the expression, never compare (or return) a
// wrapped int.
// Each stream has one candidate sequence, which every plan evaluates;
// its neighbours at the edges (MaxInt64 + 0, MinInt64 - -1, ...) must
// keep matching. The `b.x < a.x - 5` forms are the searches' int checks
// with offsets (AIS's, ReCEP's numeric ones), which must agree with the
// evaluator.
func TestIntOverflow(t *testing.T) {
	const (
		min = "-9223372036854775808"
		max = "9223372036854775807"
	)
	pair := func(a, b string) string { return "type,ts,x\nA,1," + a + "\nB,2," + b + "\n" }
	for _, tc := range []struct {
		name, csv, query string
		// err is the overflowing expression, caret the query from the
		// error's caret on; empty: the one candidate must match.
		err, caret string
	}{
		{"max + 1", pair(max, "1"), "PATTERN SEQ(A a, B b) WHERE a.x + b.x > 0", "a.x + b.x", "+ b.x"},
		{"max + 0", pair(max, "0"), "PATTERN SEQ(A a, B b) WHERE a.x + b.x > 0", "", ""},
		{"min + -1", pair(min, "-1"), "PATTERN SEQ(A a, B b) WHERE a.x + b.x < 0", "a.x + b.x", "+ b.x"},
		{"min + max", pair(min, max), "PATTERN SEQ(A a, B b) WHERE a.x + b.x = -1", "", ""},
		{"min - 1", pair(min, "1"), "PATTERN SEQ(A a, B b) WHERE a.x - b.x < 0", "a.x - b.x", "- b.x"},
		{"0 - min", pair("0", min), "PATTERN SEQ(A a, B b) WHERE a.x - b.x > 0", "a.x - b.x", "- b.x"},
		{"-1 - min", pair("-1", min), "PATTERN SEQ(A a, B b) WHERE a.x - b.x = " + max, "", ""},
		{"min * -1", pair(min, "-1"), "PATTERN SEQ(A a, B b) WHERE a.x * b.x > 0", "a.x * b.x", "* b.x"},
		{"-1 * min", pair("-1", min), "PATTERN SEQ(A a, B b) WHERE a.x * b.x > 0", "a.x * b.x", "* b.x"},
		{"max * 2", pair(max, "2"), "PATTERN SEQ(A a, B b) WHERE a.x * b.x > 0", "a.x * b.x", "* b.x"},
		{"max * -1", pair(max, "-1"), "PATTERN SEQ(A a, B b) WHERE a.x * b.x = -" + max, "", ""},
		{"min * 1", pair(min, "1"), "PATTERN SEQ(A a, B b) WHERE a.x * b.x = " + min, "", ""},
		{"min % -1", pair(min, "-1"), "PATTERN SEQ(A a, B b) WHERE a.x % b.x = 0", "", ""},
		{"-min", pair(min, "0"), "PATTERN SEQ(A a, B b) WHERE -a.x > b.x", "-a.x", "-a.x"},
		{"-(min + 1)", pair("-9223372036854775807", "0"), "PATTERN SEQ(A a, B b) WHERE -a.x = " + max, "", ""},
		{"abs(min)", pair(min, "0"), "PATTERN SEQ(A a, B b) WHERE abs(a.x) > b.x", "abs(a.x)", "abs"},
		{"abs(min + 1)", pair("-9223372036854775807", "0"), "PATTERN SEQ(A a, B b) WHERE abs(a.x) = " + max, "", ""},
		{"a constant", pair("0", "0"), "PATTERN SEQ(A a, B b) WHERE a.x < " + max + " + 1", max + " + 1", "+ 1"},
		{"sum over max", "type,ts,x\nA,1,0\nB,2," + max + "\nB,3,1\nC,4,0\n",
			"PATTERN SEQ(A a, B+ b[], C c) WHERE sum(b[].x) > 0", "sum(b[].x)", "sum"},
		{"sum back under max", "type,ts,x\nA,1,0\nB,2," + max + "\nB,3,1\nB,4,-1\nC,5,0\n",
			"PATTERN SEQ(A a, B+ b[], C c) WHERE sum(b[].x) = " + max, "", ""},
		{"sum under min", "type,ts,x\nA,1,0\nB,2," + min + "\nB,3,-1\nC,4,0\n",
			"PATTERN SEQ(A a, B+ b[], C c) WHERE sum(b[].x) < 0", "sum(b[].x)", "sum"},
		// The searches' int checks with offsets, the constant on either side.
		{"b.x < a.x - 5", pair("-9223372036854775804", min), "PATTERN SEQ(A a, B b) WHERE b.x < a.x - 5", "a.x - 5", "- 5"},
		{"b.x <= a.x - 5, no overflow", pair("-9223372036854775803", min), "PATTERN SEQ(A a, B b) WHERE b.x <= a.x - 5", "", ""},
		{"b.x + 5 > a.x", pair("0", "9223372036854775803"), "PATTERN SEQ(A a, B b) WHERE b.x + 5 > a.x", "b.x + 5", "+ 5"},
		{"a.x + 5 > b.x", pair("9223372036854775803", "0"), "PATTERN SEQ(A a, B b) WHERE a.x + 5 > b.x", "a.x + 5", "+ 5"},
		{"a.x - min", pair("0", "0"), "PATTERN SEQ(A a, B b) WHERE b.x < a.x - " + min, "a.x - " + min, "- " + min},
		{"-1 - min as an offset", pair("-1", "0"), "PATTERN SEQ(A a, B b) WHERE b.x < a.x - " + min, "", ""},
		{"offsets, three states", "type,ts,x\nA,1,0\nB,2," + max + "\nC,3,0\n",
			"PATTERN SEQ(A a, B b, C c) WHERE b.x > a.x AND c.x < b.x + 1", "b.x + 1", "+ 1"},
		{"offsets, partitioned", "type,ts,x,s\nA,1," + max + ",k\nB,2,0,k\n",
			"PATTERN SEQ(A a, B b) WHERE [s] AND b.x < a.x + 1 WITHIN 10", "a.x + 1", "+ 1"},
		// Timestamps at both ends of time: their difference is 2^64 - 1.
		{"b.ts - a.ts", "type,ts,x\nA," + min + ",0\nB," + max + ",0\n",
			"PATTERN SEQ(A a, B b) WHERE b.ts - a.ts > 10", "b.ts - a.ts", "- a.ts"},
		{"b.ts - a.ts, no overflow", "type,ts,x\nA,0,0\nB," + max + ",0\n",
			"PATTERN SEQ(A a, B b) WHERE b.ts - a.ts > 10", "", ""},
		// RETURN, on the one match.
		{"RETURN a.x * 2", pair(max, "0"), "PATTERN SEQ(A a, B b) RETURN a.x * 2 AS y", "a.x * 2", "* 2"},
		{"RETURN a.x * 1", pair(max, "0"), "PATTERN SEQ(A a, B b) RETURN a.x * 1 AS y", "", ""},
		{"RETURN sum", "type,ts,x\nA,1,0\nB,2," + min + "\nB,3," + min + "\nC,4,0\n",
			"PATTERN SEQ(A a, B+ b[], C c) RETURN sum(b[].x) AS s", "sum(b[].x)", "sum"},
	} {
		c := conformanceCase{Name: "overflow", StreamCSV: tc.csv, Query: tc.query}
		stream, err := loadCase(c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := ""
		if tc.err != "" {
			caret := strings.Index(tc.query, tc.caret)
			want = fmt.Sprintf("<query>:1:%d: integer overflow at run time in %s\n    %s\n    %s^", caret+1, tc.err, tc.query, strings.Repeat(" ", caret))
		}
		for _, engine := range engines {
			cq, err := randquery.Parse(tc.query).Compile(stream, engine, true)
			if err != nil {
				t.Fatalf("%s: %s: %v", tc.name, engine, err)
			}
			for _, workers := range []int{1, 3} {
				rows := 0
				_, err := cq.Run(context.Background(), stream.All(), func([]sase.Cell) bool { rows++; return true }, sase.WithWorkers(workers))
				switch {
				case want != "" && (err == nil || err.Error() != want):
					t.Errorf("%s: %s, %d workers: got %d rows, %v; want\n%s", tc.name, engine, workers, rows, err, want)
				case want == "" && (err != nil || rows != 1):
					t.Errorf("%s: %s, %d workers: got %d rows, %v; want one match", tc.name, engine, workers, rows, err)
				}
			}
		}
	}
}
