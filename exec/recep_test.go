package exec_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/planner"
	"github.com/sase-cep/sase/source"
)

// compileEngine compiles query on stream for an engine.
func compileEngine(t *testing.T, stream *event.Stream, query, engine string) *sase.Query {
	t.Helper()
	q, err := bench.Compile(stream, query, engine)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// runEngine compiles query on stream for an engine and runs it.
func runEngine(t *testing.T, stream *event.Stream, query, engine string) (*sase.Query, *sase.Stats) {
	t.Helper()
	q := compileEngine(t, stream, query, engine)
	stats, err := q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	return q, stats
}

// TestReCEPWorkedExample is the paper's Examples 3-5 (case
// hand-recep_worked_example): a.price > 1000 filters A's buffer, the
// search from a1 finds four candidates (a1 b1 c2, a1 b1 c3, a1 b2 c3,
// a1 b3 c3), and attribute verification rejects a1 b2 c3. That is the
// paper's plan; the recep engine checks a.price > 1.44 * b.price in the
// recursion already, so a1 b2 c3 is never a candidate.
func TestReCEPWorkedExample(t *testing.T) {
	csv := "type,ts,price\nC,1,2000\nA,2,1100\nB,3,700\nA,4,900\nC,6,2200\nB,8,800\nB,9,750\nC,10,2200\n"
	stream, err := source.LoadCSV(strings.NewReader(csv), "ex.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const query = "PATTERN (A a; B b; C c) WHERE a.price > 1000 AND a.price > 1.44 * b.price AND a.price < 0.51 * c.price WITHIN 10"
	names := []string{"EventCache", "QueryFilter", "AttributeVerify", "Transformation"}
	for _, tc := range []struct {
		paper  bool
		counts [][2]int64
	}{
		{true, [][2]int64{
			{8, 7}, // events read; cached (a at ts 4 fails a.price > 1000)
			{3, 4}, // a search per c; four candidates
			{4, 3}, // four candidates; three verified
			{3, 3},
		}},
		{false, [][2]int64{{8, 7}, {3, 3}, {3, 3}, {3, 3}}},
	} {
		q := compileEngine(t, stream, query, "recep")
		if tc.paper {
			paperPlan(q.Plan())
		}
		for i, op := range q.Plan().Operators() {
			if op.Name() != names[i] {
				t.Fatalf("op %d is %s, want %s", i, op.Name(), names[i])
			}
		}
		stats, err := q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range tc.counts {
			if got := [2]int64{stats.Operators[i].In, stats.Operators[i].Out}; got != want {
				t.Errorf("paper plan %v: %s: in/out %v, want %v", tc.paper, names[i], got, want)
			}
		}
		if stats.MaxBuffer != 3 {
			t.Errorf("max buffer %d, want 3 (B's and C's)", stats.MaxBuffer)
		}
		if a := stats.Annotate(2); tc.paper && !strings.HasPrefix(a, "(in=4 out=3") {
			t.Errorf("AttributeVerify annotation %q", a)
		}
	}
}

// paperPlan moves the predicates that the recep engine checks in the
// recursion back to AttributeVerify, as the paper has it.
func paperPlan(plan *planner.Plan) {
	r := plan.Source.(*planner.ReCEP)
	qf, av := &r.Filter, &r.Verify
	for j := range qf.Checks {
		av.Preds = append(append(av.Preds, qf.Pre[j]...), qf.Checks[j]...)
	}
	qf.Checks, qf.Pre = nil, nil
}

// TestReCEPPruning checks that the buffers follow the window, not the
// stream: ten times the events, the same longest buffer (a trailing
// negation makes held candidates read back 2W, which pruning respects).
func TestReCEPPruning(t *testing.T) {
	maxBuf := func(events int, query string) int64 {
		cfg := source.DefaultStockConfig()
		cfg.Events = events
		_, stats := runEngine(t, source.GenerateStocks("s", cfg), query, "recep")
		return stats.MaxBuffer
	}
	for _, q := range []string{
		"PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120",
		"PATTERN SEQ(stock1 a, stock2 b, !stock3 c) WHERE b.price > a.price WITHIN 120",
		"PATTERN SEQ(!stock4 n, stock1 a, stock2+ b[], stock3 c) WHERE [symbol] WITHIN 60",
	} {
		small, large := maxBuf(10_000, q), maxBuf(100_000, q)
		t.Logf("%s: max buffer %d on 10K events, %d on 100K", q, small, large)
		// ts = seq: a window of W ticks holds at most 2W+1 events of a type
		// (held candidates), in practice about a tenth of that.
		if large > 2*120+1 || large > 2*small {
			t.Errorf("%s: max buffer %d on 10K events, %d on 100K", q, small, large)
		}
	}
}

// TestReCEPPartitions checks ReCEP x PAIS: with [symbol] each symbol has
// its own buffers, so every candidate has one symbol and passes the
// equivalence test; a trigger lacking the attribute searches the global
// buffers, where the test is verified.
func TestReCEPPartitions(t *testing.T) {
	cfg := source.DefaultStockConfig()
	cfg.Events = 20_000
	cfg.IncreaseProbability = 55
	stream := source.GenerateStocks("s", cfg)
	// The paper's plan: b.price > a.price is verified after the search.
	q := compileEngine(t, stream, "PATTERN SEQ(stock a, stock b, stock c) WHERE [symbol] AND b.price > a.price WITHIN 30", "recep")
	paperPlan(q.Plan())
	stats, err := q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	cand, verified := stats.Operators[1].Out, stats.Operators[2].Out
	_, auto := runEngine(t, stream, "PATTERN SEQ(stock a, stock b, stock c) WHERE [symbol] AND b.price > a.price WITHIN 30", "auto")
	if verified != auto.Matches || stats.Matches != auto.Matches {
		t.Fatalf("recep %d matches, auto %d", stats.Matches, auto.Matches)
	}
	if stats.Operators[2].In != cand {
		t.Fatalf("verify saw %d of %d candidates", stats.Operators[2].In, cand)
	}
	// Candidates fail only b.price > a.price, never [symbol]: half-ish pass.
	t.Logf("%d candidates, %d matches", cand, verified)
	if cand > 3*verified {
		t.Errorf("%d candidates for %d matches: the partitions leak", cand, verified)
	}

	csv := "type,ts,sym,price\nA,1,x,1\nA,2,y,2\nB,3,,3\nB,4,x,4\n"
	s, err := source.LoadCSV(strings.NewReader(csv), "p.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// b at 3 lacks sym: both a's match it; b at 4 matches a at 1 only.
	if _, st := runEngine(t, s, "PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 5", "recep"); st.Matches != 3 {
		t.Errorf("absent attribute: %d matches, want 3", st.Matches)
	}
}

// TestReCEPNumericChecks runs the forms the search compares as float64
// columns (x op y, x op k * y, in the trigger's filter and in the
// recursion) on values where float64 would not be exact or does not
// apply: ints beyond 2^53, floats, products that overflow to infinity,
// strings, bools and absent cells; an int k stays with the evaluator.
// recep must find basic's matches.
func TestReCEPNumericChecks(t *testing.T) {
	stream := "type,ts,sym,x\n" +
		"A,1,s,5\nA,2,s,7.5\nA,3,t,9007199254740993\nA,4,s,hello\nA,5,s,\nA,6,t,1e300\nA,7,s,-2\n" +
		"B,8,s,4\nB,9,t,9007199254740992\nB,10,s,6.25\nB,11,s,\nB,12,t,true\nB,13,s,1e10\nB,14,s,-3\nB,15,t,9007199254740993\n" +
		"C,16,s,10\nC,17,t,9007199254740994\nC,18,s,\nC,19,s,20.5\nC,20,s,abc\nC,21,s,-1\nC,22,t,9007199254740992\n"
	for _, where := range []string{
		"a.x > 1.1 * b.x AND b.x < 0.9 * c.x",
		"a.x >= b.x AND b.x <= c.x",
		"a.x = b.x OR a.x < c.x",
		"a.x = b.x AND b.x * 0.5 != c.x",
		"a.x != b.x AND c.x = b.x",
		"a.x < 1e300 * b.x AND c.x > b.x",
		"a.x > 2 * b.x AND c.x > 0.5 * b.x",
		"[sym] AND a.x < b.x * 1.5 AND b.x > c.x",
		"a.x > 0.5 * c.x AND 2.5 * b.x >= a.x",
	} {
		// The third pattern's b2, unchecked, is the level before the
		// trigger: b's loop delivers its matches over its whole buffer.
		for _, pattern := range []string{"SEQ(A a, B b, C c)", "SEQ(A a, B+ b[], C c)", "SEQ(A a, B b, B b2, C c)"} {
			w := where
			if strings.Contains(pattern, "b[]") {
				w = strings.ReplaceAll(where, "b.x", "b[b.LEN].x")
			}
			c := conformanceCase{Name: w, StreamCSV: stream, Query: "PATTERN " + pattern + " WHERE " + w + " WITHIN 30"}
			want, err := runCase(c, "basic")
			if err != nil {
				t.Fatal(err)
			}
			got, err := runCase(c, "recep")
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Errorf("%s: no matches: the case checks nothing", c.Query)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s:\nrecep %d %v\nbasic %d %v", c.Query, len(got), got, len(want), want)
			}
		}
	}
}

// TestReCEPFastPaths runs, over random streams of ints with fractions
// among them, and also ints beyond 2^53, strings and absent values (which
// float64 does not order exactly: NaN in a buffer's column), the forms the
// search and the cache test as floats: buffer filters `attr op number`
// (either side, every operator, int, float and inexact constants), the
// trigger's filter of the level before it (one column kept in one loop,
// NaNs decided after) and the pair loop's check against the level
// before it (its bound read from that level's column), every operator;
// with a type that one buffer takes and one that two do, with and
// without partitions. Every engine must find basic's matches.
func TestReCEPFastPaths(t *testing.T) {
	t.Parallel()
	for _, q := range fastPathQueries {
		for _, nan := range []bool{false, true} {
			c := randquery.Case{Name: fmt.Sprintf("recep fast paths (NaN %v)", nan), StreamCSV: fastPathStream(nan), Query: q}
			t.Run(fmt.Sprintf("%s/NaN %v", q, nan), func(t *testing.T) {
				t.Parallel() // each query runs on its own
				agreeWithBasic(t, c)
			})
		}
	}
}

// TestReCEPCount runs TestReCEPFastPaths' queries with a sink that only
// counts, which recep's last level hands the number of its matches
// without a row each: the counts must be the callback's.
func TestReCEPCount(t *testing.T) {
	for _, nan := range []bool{false, true} {
		stream, err := source.LoadCSV(strings.NewReader(fastPathStream(nan)), "fast.csv", source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, query := range fastPathQueries {
			q, want := runEngine(t, stream, query, "recep")
			counted := int64(-1)
			count := &sase.Chunks{Put: func(_ [][]byte, rows int) bool { counted = int64(rows); return true }}
			got, err := q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true }, sase.WithChunks(count))
			if err != nil {
				t.Fatal(err)
			}
			if counted != want.Matches || got.Matches != want.Matches || want.Matches == 0 {
				t.Errorf("%s (NaN %v): counted %d (stats %d), the callback %d", query, nan, counted, got.Matches, want.Matches)
			}
		}
	}
}

// fastPathStream is TestReCEPFastPaths' stream, with or without values
// that are NaN in a column.
func fastPathStream(nan bool) string {
	r := rand.New(rand.NewPCG(5, 8))
	var b strings.Builder
	b.WriteString("type,ts,x,sym\n")
	ts := 0
	for range 300 {
		ts += r.IntN(2)
		var x string
		switch v := r.IntN(24); {
		case v == 0:
			x = "12.5"
		case v == 4:
			x = "-3"
		case v == 1 && nan:
			x = "word"
		case v == 2 && nan:
		case v == 3 && nan:
			x = "9007199254740993"
		default:
			x = fmt.Sprint(r.IntN(40))
		}
		fmt.Fprintf(&b, "%c,%d,%s,%d\n", "AABBC"[r.IntN(5)], ts, x, r.IntN(2))
	}
	return b.String()
}

var fastPathQueries = []string{
	"PATTERN SEQ(A a, B b, C c) WHERE a.x > 20 AND a.x > 1.1 * b.x AND b.x < 0.9 * c.x WITHIN 12",
	"PATTERN SEQ(A a, B b, C c) WHERE a.x <= 20.5 AND a.x <= b.x AND b.x >= c.x WITHIN 12",
	"PATTERN SEQ(A a, B b, C c) WHERE 30 > a.x AND a.x = b.x AND b.x != 1.1 * c.x WITHIN 12",
	"PATTERN SEQ(A a, B b, C c) WHERE a.x != 7 AND a.x < b.x AND b.x = c.x WITHIN 12",
	"PATTERN SEQ(A a, B b, C c) WHERE (a.x >= 9007199254740993 OR a.x < 9) AND b.x * 0.5 > a.x AND c.x > 1.5 * b.x WITHIN 20",
	"PATTERN SEQ(A a, B b, C c) WHERE 1.5 * a.x < 30 AND a.x >= b.x AND b.x > c.x AND c.x != 5 WITHIN 12",
	"PATTERN SEQ(A a, B b, C c) WHERE [sym] AND a.x > 10 AND a.x > b.x AND b.x < c.x WITHIN 12",
	"PATTERN SEQ(A a, A a2, B b, C c) WHERE a.x > a2.x AND a2.x < 1.1 * b.x AND b.x <= c.x WITHIN 10",
	"PATTERN SEQ(A a, B b, C c) WHERE a.x > 0 * b.x AND b.x > -1.0 * c.x WITHIN 12",
	"PATTERN SEQ(A a, B b, C c) WHERE a.x >= -1.0 * b.x AND b.x <= -1.0 * c.x WITHIN 12",
	"PATTERN SEQ(A a, B b) WHERE a.x > 5 AND b.x <= 1.1 * a.x WITHIN 12",
}

// TestReCEPInfinities runs a trigger's filter whose factor is 0 over a
// column with infinities (0 * inf is NaN, which the evaluator decides),
// on a stream only the API can make: loaders read no infinity. recep
// must find basic's matches.
func TestReCEPInfinities(t *testing.T) {
	schema := event.NewSchema()
	x := schema.AddAttr("x")
	s := &event.Stream{Name: "inf", Source: "generated", Schema: schema}
	for i, typ := range "ABCBCABCBBC" {
		id := schema.AddType(string(typ))
		schema.Declare(id, x)
		v := event.FloatValue(float64(i))
		if i%3 == 0 {
			v = event.FloatValue(math.Inf(1 - 2*(i%2)))
		}
		e := &event.Event{Type: id, TS: int64(i), Seq: int64(i), Attrs: []event.Value{v}}
		schema.Observe(e)
		s.Events = append(s.Events, e)
	}
	for _, q := range []string{
		"PATTERN SEQ(A a, B b, C c) WHERE 0.0 * b.x >= c.x - 20 AND a.x < b.x WITHIN 10",
		"PATTERN SEQ(A a, B b, C c) WHERE 0.0 * b.x != c.x WITHIN 10",
		// partners' pair bound 0 * inf is NaN: the general search decides.
		"PATTERN SEQ(A a, B b, C c) WHERE b.x >= 0.0 * a.x AND b.x < 1.5 * c.x WITHIN 10",
	} {
		_, want := runEngine(t, s, q, "basic")
		_, got := runEngine(t, s, q, "recep")
		if want.Matches == 0 || got.Matches != want.Matches {
			t.Errorf("%s: recep %d matches, basic %d (and more than 0)", q, got.Matches, want.Matches)
		}
	}
}

// TestReCEPPartners runs Exp. 1's shape, which recep searches by
// partners (each b's a's listed when it comes, recep_partners.go), on
// 20,000 stock events, long enough that the arena of partners is
// compacted many times, for short and long windows and each kind of
// comparison: recep must find ais's matches, on one worker and split by
// time over three.
func TestReCEPPartners(t *testing.T) {
	t.Parallel()
	cfg := source.DefaultStockConfig()
	cfg.Events = testkit.Size(5_000, 20_000)
	stream := source.GenerateStocks("stocks", cfg)
	matches := func(query, engine string, workers int) []string {
		q := compileEngine(t, stream, query, engine)
		var out []string
		_, err := q.Run(context.Background(), stream.All(), func(row []sase.Cell) bool {
			out = append(out, fmt.Sprint(row[0].Event.Seq, row[1].Event.Seq, row[2].Event.Seq))
			return true
		}, sase.WithWorkers(workers))
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	for _, w := range []int{30, 300} {
		for _, cond := range []string{
			"a.price > 50 AND a.price > 1.1 * b.price AND b.price < 0.9 * c.price",
			"a.price >= 1.1 * b.price AND b.price <= c.price",
			"a.price != b.price AND b.price = c.price",
			"b.price * 2.0 < a.price AND 0.5 * c.price > b.price",
		} {
			query := fmt.Sprintf("PATTERN SEQ(stock1 a, stock2 b, stock3 c) WHERE %s WITHIN %d", cond, w)
			want := matches(query, "ais", 1)
			if len(want) == 0 {
				t.Fatalf("%s: no matches: the case checks nothing", query)
			}
			for _, workers := range []int{1, 3} {
				if got := matches(query, "recep", workers); !slices.Equal(got, want) {
					t.Errorf("%s on %d workers: recep %d matches, ais %d (first difference at %d)", query, workers, len(got), len(want), firstDiff(got, want))
				}
			}
		}
	}
}

// TestReCEPOffsetChecks runs checks between components with a constant
// added to either side (`b.p < a.p - 3`), which ReCEP compares as
// float64 columns: ints around each other, at 2^53 (where an int sum
// leaves float64) and far past it (8.2e18, which no constant here takes
// past int64: TestIntOverflow has the overflows), an equal float,
// fractions, strings and absent values; int, float and scaled terms, the
// constant on either side of +, each operator; in the trigger's filter
// of the level before it and in the pair loop. Every engine must find
// basic's matches.
func TestReCEPOffsetChecks(t *testing.T) {
	t.Parallel()
	vals := []string{"1", "2", "3", "4", "-2", "3.0", "2.5", "x", "", "0",
		"8223372036854775807", "-8223372036854775807", "9007199254740991", "9007199254740992", "-9007199254740990"}
	// 3 + 9007199254740990 is 2^53 + 1, which float64 rounds to 2^53:
	// a pair of each order first.
	stream := "type,ts,p,q\nA,-4,3,0\nA,-3,9007199254740992,0\nB,-2,9007199254740992,0\nB,-1,3,0\n" +
		strings.TrimPrefix(valuesCSV(rand.New(rand.NewPCG(3, 31)), 150, "ABC", vals), "type,ts,p,q\n")
	c := randquery.Case{Name: "recep offset checks", StreamCSV: stream}
	for _, op := range []string{"<", "<=", ">", ">=", "=", "!="} {
		for _, sides := range [][2]string{
			{"b.p", "a.p - 2"}, {"a.p + 1", "b.p"}, {"1 + b.p", "a.p - 1"}, {"b.p", "a.p + 0"},
			{"b.p", "a.p + 9007199254740990"}, {"a.p", "9007199254740990 + b.p"}, {"a.p - 9007199254740991", "b.p"}, {"b.p", "a.p + 1000000000000000000"},
			{"b.p", "a.p - 1.5"}, {"0.5 + a.p", "b.p"}, {"b.p", "2.5 * a.p - 2"}, {"a.p * 0.5 + 1", "b.p - 1"},
		} {
			c.Query = fmt.Sprintf("PATTERN SEQ(A a, B b) WHERE %s %s %s WITHIN 8", sides[0], op, sides[1])
			agreeWithBasic(t, c)
		}
		c.Query = fmt.Sprintf("PATTERN SEQ(A a, B b, C c) WHERE b.p %s a.p - 1 AND c.p + 2 > b.p WITHIN 20", op)
		agreeWithBasic(t, c)
		c.Query = fmt.Sprintf("PATTERN SEQ(A a, B b, C c) WHERE [q] AND b.p + 1.5 %s a.p AND c.p > 1 + b.p WITHIN 20", op)
		agreeWithBasic(t, c)
	}
}
