package exec_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/exec"
	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/internal/randquery"
)

// TestAISIntChecks runs checks between positive singles, which AIS tests
// on int keys without the evaluator, over values of every kind (ints,
// an equal float, a fraction, a string, absent cells, the int extremes):
// every engine must find basic's matches.
func TestAISIntChecks(t *testing.T) {
	stream := "type,ts,p,q,s\n" +
		"A,1,2,1,x\nA,1,5,,y\nB,2,3,2,x\nA,3,2.0,3,x\nB,3,2,x,y\nC,4,4,1,x\n" +
		"A,5,,2,y\nB,6,2.5,5,x\nC,7,3,3,y\nA,8,-9223372036854775808,1,x\nB,9,x,2,x\n" +
		"C,10,9223372036854775807,2,y\nB,11,-1,4,x\nC,12,2,,x\nA,13,3,2,y\nB,14,3,3,y\nC,15,3,4,y\n"
	queries := []string{
		"PATTERN SEQ(A a, B b, C c) WHERE b.p > a.p AND c.p > b.p",
		"PATTERN SEQ(A a, B b, C c) WHERE a.p <= b.p AND c.p != b.p WITHIN 6",
		"PATTERN SEQ(A a, B b, C c) WHERE b.p = a.p AND b.p < c.p",
		"PATTERN SEQ(A a, B b, C c) WHERE a.p >= b.p OR c.p > b.p",
		"PATTERN SEQ(A a, B b, C c) WHERE a.p < b.q AND b.p < c.p AND a.p < c.p WITHIN 8",
		"PATTERN SEQ(A a, B b, C c) WHERE [s] AND b.p > a.p AND c.p > b.p WITHIN 10",
		"PATTERN SEQ(A a, B b, C c) WHERE [s] AND a.p > 1 WITHIN 5",
		"PATTERN SEQ(A a, B b) WHERE b.ts > a.ts AND a.q < b.q",
		"PATTERN SEQ(A a, B b, C c) RETURN c, a",
	}
	for _, q := range queries {
		agreeWithBasic(t, randquery.Case{Name: "intchecks", StreamCSV: stream, Query: q})
	}
}

// valuesCSV is a stream of n events of the types (one letter each) at ts
// 0, 1, ..., each with p one of vals and q a key from 0 to 2.
func valuesCSV(r *rand.Rand, n int, types string, vals []string) string {
	var b strings.Builder
	b.WriteString("type,ts,p,q\n")
	for i := range n {
		fmt.Fprintf(&b, "%c,%d,%s,%d\n", types[r.IntN(len(types))], i, vals[r.IntN(len(vals))], r.IntN(3))
	}
	return b.String()
}

// TestAISOffsetChecks runs checks between positive singles with an int
// constant added to either side (`b.p < a.p - 3`), which AIS tests on
// int keys, for each order and offset, over ints around each other and
// at the extremes (where the sums just fit), an equal float, fractions,
// strings and absent values: every engine must find basic's matches. A
// constant that takes most values past int64 must stop every engine with
// the evaluator's overflow error.
func TestAISOffsetChecks(t *testing.T) {
	t.Parallel()
	vals := []string{"1", "2", "3", "4", "5", "-2", "3.0", "2.5", "x", "", "9223372036854775805", "-9223372036854775806", "0"}
	c := randquery.Case{Name: "offsetchecks", StreamCSV: valuesCSV(rand.New(rand.NewPCG(7, 31)), 150, "ABC", vals)}
	for _, op := range []string{"<", "<=", ">", ">=", "=", "!="} {
		for _, sides := range [][2]string{
			{"b.p", "a.p - 2"}, {"a.p + 1", "b.p"}, {"1 + b.p", "a.p - 1"}, {"b.p", "a.p + 0"}, {"b.p", "a.p - 1.5"},
		} {
			c.Query = fmt.Sprintf("PATTERN SEQ(A a, B b) WHERE %s %s %s WITHIN 8", sides[0], op, sides[1])
			agreeWithBasic(t, c)
		}
		for _, o := range []struct{ cond, overflows string }{
			{"b.p %s a.p + 9223372036854775807", "a.p + 9223372036854775807"},
			{"a.p - 9223372036854775807 %s b.p", "a.p - 9223372036854775807"},
		} {
			c.Query = "PATTERN SEQ(A a, B b) WHERE " + fmt.Sprintf(o.cond, op) + " WITHIN 8"
			matches := caseMatches(t, c)
			for _, engine := range sase.EngineNames() {
				if _, err := matches(engine); err == nil || !strings.Contains(err.Error(), "integer overflow at run time in "+o.overflows+"\n") {
					t.Errorf("%s: %s: got %v, want the overflow of %s", c.Query, engine, err, o.overflows)
				}
			}
		}
		c.Query = fmt.Sprintf("PATTERN SEQ(A a, B b, C c) WHERE [q] AND b.p %s a.p - 1 AND c.p + 2 > b.p WITHIN 20", op)
		agreeWithBasic(t, c)
	}
}

// TestConstFilters runs transition filters that compare an attribute
// with a number, which the scans test in place on ints, over ints around
// the constants and at the extremes, an equal float, fractions, strings
// and absent values, with the constant on either side, a float constant,
// and other filters of the same state after them: every engine must find
// basic's matches.
func TestConstFilters(t *testing.T) {
	vals := []string{"2", "3", "4", "-2", "-1", "3.0", "2.5", "x", "", "9223372036854775807", "-9223372036854775808", "0"}
	c := randquery.Case{Name: "constfilters", StreamCSV: valuesCSV(rand.New(rand.NewPCG(5, 9)), 200, "AB", vals)}
	for _, q := range []string{
		"PATTERN SEQ(A a, B b) WHERE a.p > 2 AND b.p <= 3 WITHIN 6",
		"PATTERN SEQ(A a, B b) WHERE 3 >= a.p AND b.p != 3 WITHIN 6",
		"PATTERN SEQ(A a, B b) WHERE a.p = 3.0 AND b.p > -1.5 WITHIN 8",
		"PATTERN SEQ(A a, B b) WHERE a.p < 2.5 AND b.p >= 2.5 WITHIN 6",
		"PATTERN SEQ(A a, B b) WHERE a.p != 2.5 AND b.p < 9223372036854775807 WITHIN 6",
		"PATTERN SEQ(A a, B b) WHERE a.p >= -9223372036854775808 AND b.p = 2 WITHIN 6",
		"PATTERN SEQ(A a, B b) WHERE a.p > 0 AND a.p % 5 < 3 AND a.q > 0 WITHIN 6",
		"PATTERN SEQ(A a, B b, A c) WHERE [q] AND a.p > 2 AND c.p < 3 AND b.p > a.p WITHIN 10",
	} {
		c.Query = q
		agreeWithBasic(t, c)
	}
}

// longStream is a CSV stream of n events of types A–E, one per tick, a
// price, and a symbol that one event in five lacks: PAIS's wild stack.
func longStream(n int) string {
	r := rand.New(rand.NewPCG(7, 11))
	var b strings.Builder
	b.WriteString("type,ts,price,sym\n")
	for i := range n {
		sym := ""
		if r.IntN(5) > 0 {
			sym = fmt.Sprint(r.IntN(2))
		}
		fmt.Fprintf(&b, "%c,%d,%d,%s\n", 'A'+r.IntN(5), i, r.IntN(100), sym)
	}
	return b.String()
}

// longSeq is SEQ(A c0, B c1, ..., E c4, A c5, ...) of n components with
// the rest of the query after it.
func longSeq(n int, rest string) string {
	comps := make([]string, n)
	for i := range comps {
		comps[i] = fmt.Sprintf("%c c%d", 'A'+i%5, i)
	}
	return fmt.Sprintf("PATTERN SEQ(%s) %s", strings.Join(comps, ", "), rest)
}

// TestAISLongPatterns runs patterns of 8 to 12 components, whose search
// the lower bound per state cuts, with windows that cut, partitions with
// wild events, predicates and dynamic filtering: the AIS engines must
// find ReCEP's matches.
func TestAISLongPatterns(t *testing.T) {
	t.Parallel()
	c := randquery.Case{Name: "long", StreamCSV: longStream(300)}
	for _, q := range []string{
		longSeq(8, "WITHIN 40"),
		longSeq(10, "WITHIN 45"),
		longSeq(12, "WHERE c1.price > c0.price AND c6.price < c5.price WITHIN 55"),
		longSeq(10, "WHERE [sym] WITHIN 70"),
		longSeq(9, "WHERE [sym] AND c8.price > c2.price WITHIN 65"),
		longSeq(4, "WHERE [sym] WITHIN 12"),
	} {
		c.Query = q
		matches := caseMatches(t, c)
		want, err := matches("recep")
		if err != nil {
			t.Fatalf("%s: recep: %v", q, err)
		}
		if len(want) == 0 {
			t.Errorf("%s: no matches on recep, so nothing is compared", q)
		}
		for _, engine := range []string{"ais", "pais", "multipais", "dynamic"} {
			got, err := matches(engine)
			if err != nil {
				t.Fatalf("%s: %s: %v", q, engine, err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s finds %d matches, recep %d", q, engine, len(got), len(want))
			}
		}
	}
}

// TestAISLongSearchSteps checks that the search of a long pattern without
// predicates visits only instances on the way to a match: at most one per
// state before the last and match (none when no sequence completes),
// where without the bound it visits e^(events per type in a window)
// suffixes per trigger (874,055 steps for the first case's 9,088 matches,
// 10,824,294 for none in the second).
func TestAISLongSearchSteps(t *testing.T) {
	stream := bench.Stocks(300, 0)()
	for _, c := range []struct {
		n       int
		window  int64
		matches bool
	}{{16, 120, true}, {20, 150, false}} {
		for _, engine := range []string{"ais", "pais", "dynamic"} {
			q, err := bench.Compile(stream, bench.LongSeq(c.n, c.window), engine)
			if err != nil {
				t.Fatal(err)
			}
			stats, err := q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true })
			if err != nil {
				t.Fatal(err)
			}
			counters := stats.Operators[0].Counters
			i := slices.IndexFunc(counters, func(c exec.Counter) bool { return c.Name == "steps" })
			if i < 0 {
				t.Fatalf("%s: no steps counter in %v", engine, counters)
			}
			steps, limit := counters[i].N, int64(c.n-1)*stats.Matches
			if (stats.Matches > 0) != c.matches || steps > limit {
				t.Errorf("LongSeq(%d, %d) on %s: %d steps for %d matches, want at most %d", c.n, c.window, engine, steps, stats.Matches, limit)
			}
		}
	}
}

// TestAISMaskedLeaf runs queries whose state-0 checks read only states 0
// and 1, which AIS tests once per state-1 instance and keeps as a mask,
// and some whose checks read a later state, which must not be kept: over
// a stream of ints with floats, strings and absent values among them,
// windows that prune state 0 between two visits of an instance, stacks
// longer than a mask and partitions with wild events, every engine must
// find basic's matches.
func TestAISMaskedLeaf(t *testing.T) {
	t.Parallel()
	stream := maskedStream()
	for _, q := range []string{
		"PATTERN SEQ(A a, B b, C c) WHERE b.p > a.p AND c.p > b.p WITHIN 150",
		"PATTERN SEQ(A a, B b, C c) WHERE a.p >= b.p WITHIN 25",
		"PATTERN SEQ(A a, B b, C c) WHERE [s] AND a.p < b.p AND a.q != b.q WITHIN 40",
		// PAIS with a window that holds more state-0 instances than a mask.
		"PATTERN SEQ(A a, B b, C c) WHERE [s] AND b.p > a.p AND c.p > b.p WITHIN 300",
		"PATTERN SEQ(A a, B b, C c) WHERE b.p > a.p + 3 AND c.q > 1 WITHIN 30",
		"PATTERN SEQ(A a, B b, C c) WHERE c.p > a.p AND b.p > a.p WITHIN 30",
		"PATTERN SEQ(A a, B b, C c) WHERE c.q = a.q WITHIN 30",
		"PATTERN SEQ(A a, B b, C c, C d) WHERE b.p <= a.p AND d.q > c.q WITHIN 20",
		"PATTERN SEQ(A a, B b, C c) WHERE b.p > a.p WITHIN 30 RETURN c, a",
		"PATTERN SEQ(A a, B b) WHERE b.p > a.p WITHIN 30",
	} {
		c := randquery.Case{Name: "masked", StreamCSV: stream, Query: q}
		t.Run(q, func(t *testing.T) {
			t.Parallel() // each query runs on its own
			agreeWithBasic(t, c)
		})
	}
}

// maskedStream is a CSV stream of types A, B and C with int values of p
// and q, and among p's a float, a string and absent cells; s is x, y or
// absent (PAIS's wild events), and several events share a time.
func maskedStream() string {
	r := rand.New(rand.NewPCG(3, 5))
	var b strings.Builder
	b.WriteString("type,ts,p,q,s\n")
	ts := 0
	for range 400 {
		ts += r.IntN(2)
		var p string
		switch x := r.IntN(20); {
		case x == 0:
			p = "2.5"
		case x == 1:
			p = "z"
		case x == 2:
		default:
			p = fmt.Sprint(r.IntN(30))
		}
		fmt.Fprintf(&b, "%c,%d,%s,%d,%s\n", "AAABBC"[r.IntN(6)], ts, p, r.IntN(4), []string{"x", "y", ""}[r.IntN(3)])
	}
	return b.String()
}

// TestAISCountOnly runs queries whose matches a count-only sink takes, so
// that AIS adds up masks and leaf ranges without handing each match over,
// and the same with a limit, which takes the one-by-one path: on every
// engine each must count the matches that a callback sees (up to the
// limit).
func TestAISCountOnly(t *testing.T) {
	t.Parallel()
	stream := mustLoad(t, "masked", maskedStream())
	for _, q := range []string{
		"PATTERN SEQ(A a, B b, C c) WHERE b.p > a.p AND c.p > b.p WITHIN 150",
		"PATTERN SEQ(A a, B b, C c) WHERE [s] AND b.p > a.p AND c.p > b.p WITHIN 40",
		"PATTERN SEQ(A a, B b, C c) WHERE [s] AND a.p > 5 WITHIN 40",
		"PATTERN SEQ(A a, B b, C c)",
		"PATTERN SEQ(A a, B b, C c) WHERE a.p < b.p WITHIN 30",
	} {
		for _, engine := range sase.EngineNames() {
			countsAgree(t, stream, q, engine)
		}
	}
}

// mustLoad loads a test's stream of CSV text (loadCase).
func mustLoad(t *testing.T, name, csv string) *event.Stream {
	t.Helper()
	stream, err := loadCase(conformanceCase{Name: name, StreamCSV: csv})
	if err != nil {
		t.Fatal(err)
	}
	return stream
}

// caseMatches loads c's stream and parses its query once for the
// matches of several engines (randquery's Matches): a load and a parse
// cost more than a small case's run.
func caseMatches(t *testing.T, c randquery.Case) func(engine string) ([]string, error) {
	t.Helper()
	stream := mustLoad(t, c.Name, c.StreamCSV)
	p := randquery.Parse(c.Query)
	return func(engine string) ([]string, error) { return p.Matches(context.Background(), stream, engine) }
}

// countsAgree runs q on stream on engine with a callback, then with a
// count sink and with one whose limit is a third of the callback's
// matches (the one-by-one path): each must count the matches that the
// callback sees, up to the limit, and the callback must see some.
func countsAgree(t *testing.T, stream *event.Stream, q, engine string) {
	t.Helper()
	matches := countOn(t, stream, q, engine)
	if matches == 0 {
		t.Fatalf("%s on %s: no matches, so nothing is compared", q, engine)
	}
	cq, err := bench.Compile(stream, q, engine)
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int64{0, matches / 3} {
		var got int64
		count := &sase.Chunks{Put: func(_ [][]byte, rows int) bool { got += int64(rows); return true }, Limit: limit}
		if _, err := cq.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true }, sase.WithChunks(count)); err != nil {
			t.Fatal(err)
		}
		if want := cmp.Or(limit, matches); got != want {
			t.Errorf("%s on %s, limit %d: a count finds %d matches, the callback %d", q, engine, limit, got, matches)
		}
	}
}

// agreeWithBasic checks that every engine finds c's matches as basic does,
// in its order, and that there are some.
func agreeWithBasic(t *testing.T, c randquery.Case) {
	t.Helper()
	matches := caseMatches(t, c)
	want, err := matches("basic")
	if err != nil {
		t.Fatalf("%s: basic: %v", c.Query, err)
	}
	if len(want) == 0 {
		t.Errorf("%s: no matches on basic, so nothing is compared", c.Query)
	}
	for _, engine := range sase.EngineNames() {
		got, err := matches(engine)
		if err != nil {
			t.Fatalf("%s: %s: %v", c.Query, engine, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %s finds %d matches, basic %d (first difference at %d)", c.Query, engine, len(got), len(want), firstDiff(got, want))
		}
	}
}

// firstDiff is the first index where a and b differ.
func firstDiff(a, b []string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// TestAISPair runs two-state patterns without an equivalence test, which
// AIS runs by aisPair (a rulebook's commonest rule), in each of their
// forms: a start's filter and an offset check (int or not: the
// evaluator's, with the binding), one type for both states, no window,
// no check (leaf without a test), a check of the evaluator's only, an ANY
// component, over ints, floats, strings and absent values: every engine
// must find basic's matches, and a count or a limit as many as the
// callback.
func TestAISPair(t *testing.T) {
	vals := []string{"1", "2", "3", "4", "5", "6", "3.0", "2.5", "x", ""}
	c := randquery.Case{Name: "pair", StreamCSV: valuesCSV(rand.New(rand.NewPCG(3, 17)), 300, "ABC", vals)}
	stream := mustLoad(t, c.Name, c.StreamCSV)
	for _, q := range []string{
		"PATTERN SEQ(A a, B b) WHERE a.p > 3 AND b.p < a.p - 1 WITHIN 9",
		"PATTERN SEQ(A a, A b) WHERE a.p >= 2 AND b.p <= a.p WITHIN 7",
		"PATTERN SEQ(A a, B b) WHERE b.p < a.p",
		"PATTERN SEQ(B a, C b) WITHIN 4",
		"PATTERN SEQ(A a, B b) WHERE a.p > 1 AND b.p * 2 > a.p + b.q WITHIN 8",
		"PATTERN SEQ(ANY(A, C) a, B b) WHERE a.q = 1 AND b.p != a.p + 1 WITHIN 6",
	} {
		c.Query = q
		agreeWithBasic(t, c)
		countsAgree(t, stream, q, "ais")
	}
}
