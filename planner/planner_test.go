package planner_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/planner"
	"github.com/sase-cep/sase/source"
)

// testStream has types A..E with attributes price (int), sym (string) and
// the SASE paper's attr1..attr4.
func testStream(t testing.TB) *event.Stream {
	t.Helper()
	csv := "type,ts,price,sym,attr1,attr2,attr3,attr4\n" +
		"A,1,10,x,1,1,x,1\nB,2,20,x,1,1,x,2\nC,3,30,y,1,1,x,3\nD,4,40,x,1,1,x,4\nE,5,50,x,1,1,x,5\n"
	s, err := source.LoadCSV(strings.NewReader(csv), "test.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Name = "test"
	return s
}

func compile(t testing.TB, stream *event.Stream, text string) (*planner.Plan, error) {
	t.Helper()
	src := &ast.Source{Name: "<input>", Text: text}
	q, err := grammar.ParseQuery(src)
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	p, err := planner.Compile(q, src, stream)
	if err == nil {
		if verr := p.Validate(); verr != nil {
			t.Fatalf("%s: the basic plan is invalid: %v", text, verr)
		}
	}
	return p, err
}

// TestChecks asserts the exact message, position and caret of each check
// that runs before a query does.
func TestChecks(t *testing.T) {
	stream := testStream(t)
	for _, tc := range []struct{ query, want string }{
		{"PATTERN SEQ(A a, B b) WHERE z.price > 1",
			"<input>:1:29: unknown variable \"z\" (the pattern has a, b)\n    PATTERN SEQ(A a, B b) WHERE z.price > 1\n                                ^"},
		{"PATTERN SEQ(A, A)",
			"<input>:1:16: variable 'A' used by two components (A and A)\n    PATTERN SEQ(A, A)\n                   ^"},
		{"PATTERN SEQ(A a, B a)",
			"<input>:1:20: variable 'a' used by two components (A a and B a)\n    PATTERN SEQ(A a, B a)\n                       ^"},
		{"PATTERN SEQ(A a, B b) WHERE a.volume > 1",
			"<input>:1:31: no type of a has attribute \"volume\" (A has attr1, attr2, attr3, attr4, price, sym, ts, seq)\n    PATTERN SEQ(A a, B b) WHERE a.volume > 1\n                                  ^"},
		{"PATTERN SEQ(A a, B b) WHERE a.sym > 1",
			"<input>:1:29: cannot compare a string with a number: a.sym > 1\n    PATTERN SEQ(A a, B b) WHERE a.sym > 1\n                                ^"},
		{"PATTERN SEQ(A a, !B b, C c, !D d, E e) WHERE b.price = d.price",
			"<input>:1:46: a conjunct mentions more than one negated variable: b, d\n    PATTERN SEQ(A a, !B b, C c, !D d, E e) WHERE b.price = d.price\n                                                 ^"},
		{"PATTERN SEQ(A a, B+ b[], C+ c[], D d) WITHIN 10",
			"<input>:1:26: closures b and c are adjacent\n    PATTERN SEQ(A a, B+ b[], C+ c[], D d) WITHIN 10\n                             ^"},
		{"PATTERN SEQ(A a, B+ b[], !C c, D d) WITHIN 10",
			"<input>:1:26: closure b is adjacent to negated component c\n    PATTERN SEQ(A a, B+ b[], !C c, D d) WITHIN 10\n                             ^"},
		{"PATTERN SEQ(A a, B+ b[])",
			"<input>:1:18: closure b is first or last in the pattern and there is no WITHIN\n    PATTERN SEQ(A a, B+ b[])\n                     ^"},
		{"PATTERN SEQ(A a, B b) WHERE skip-till-next-match AND strict-contiguity",
			"<input>:1:54: a query names one selection strategy, not two: skip-till-next-match and strict-contiguity\n    PATTERN SEQ(A a, B b) WHERE skip-till-next-match AND strict-contiguity\n                                                         ^"},
		{"PATTERN SEQ(A a, B+ b[], C c) WHERE skip-till-any-match AND b[i].price < c.price WITHIN 5",
			"<input>:1:61: per-element predicate of b reads c, a component after the closure; under a selection strategy it is checked when each element is taken, before c is bound\n    PATTERN SEQ(A a, B+ b[], C c) WHERE skip-till-any-match AND b[i].price < c.price WITHIN 5\n                                                                ^"},
		{"PATTERN SEQ(A a, B b) WHERE skip-till-next-match OR a.price = 1",
			"<input>:1:29: an event selection strategy must be a top-level conjunct of WHERE\n    PATTERN SEQ(A a, B b) WHERE skip-till-next-match OR a.price = 1\n                                ^"},
		{"PATTERN SEQ(A a, B b) WHERE skip-till-some-match",
			"<input>:1:29: unknown event selection strategy 'skip-till-some-match' (strategies: skip-till-any-match, skip-till-next-match, partition-contiguity, strict-contiguity)\n    PATTERN SEQ(A a, B b) WHERE skip-till-some-match\n                                ^"},
		{"PATTERN SEQ(A a, B b) WITHIN 5 s",
			"<input>:1:30: WITHIN 5 s names a time unit, but stream test has unit-less timestamps (write WITHIN 5, or load the stream WITH (time_unit = 'ms'))\n    PATTERN SEQ(A a, B b) WITHIN 5 s\n                                 ^"},
		{"PATTERN SEQ(A a, B b) WITHIN 1e30",
			"<input>:1:30: WITHIN 1e30 is more than the largest window, 9223372036854775807 ticks\n    PATTERN SEQ(A a, B b) WITHIN 1e30\n                                 ^"},
		{"PATTERN SEQ(A a, B b) WITHIN 9.3e18",
			"<input>:1:30: WITHIN 9.3e18 is more than the largest window, 9223372036854775807 ticks\n    PATTERN SEQ(A a, B b) WITHIN 9.3e18\n                                 ^"},
		{"PATTERN SEQ(!A a) WITHIN 5",
			"<input>:1:9: the pattern needs at least one positive single component\n    PATTERN SEQ(!A a) WITHIN 5\n            ^"},
		{"PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].price > avg(b[].price)",
			"<input>:1:50: per-element predicate of b uses a whole-list aggregate of b\n    PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].price > avg(b[].price)\n                                                     ^"},
		{"PATTERN SEQ(A a, B b) WHERE a.price / 0 > 1 RETURN c.price",
			"<input>:1:52: unknown variable \"c\" (the pattern has a, b)\n    PATTERN SEQ(A a, B b) WHERE a.price / 0 > 1 RETURN c.price\n                                                       ^"},
	} {
		checkError(t, stream, tc.query, tc.want)
	}
}

// checkError asserts that query fails to compile with the message want.
func checkError(t *testing.T, stream *event.Stream, query, want string) {
	t.Helper()
	if _, err := compile(t, stream, query); err == nil || err.Error() != want {
		t.Errorf("%s:\ngot\n%v\nwant\n%s", query, err, want)
	}
}

// TestUnits converts WITHIN durations to the stream's ticks.
func TestUnits(t *testing.T) {
	stream := testStream(t)
	stream.Unit = 1e6 // one tick is a millisecond
	for query, want := range map[string]int64{
		"PATTERN SEQ(A a, B b) WITHIN 5 s":       5000,
		"PATTERN SEQ(A a, B b) WITHIN 1.5 min":   90000,
		"PATTERN SEQ(A a, B b) WITHIN 250 ms":    250,
		"PATTERN SEQ(A a, B b) WITHIN 2 hours":   7200000,
		"PATTERN SEQ(A a, B b) WITHIN 1 d":       86400000,
		"PATTERN SEQ(A a, B b) WITHIN 42":        42,
		"PATTERN SEQ(A a, B b) WITHIN 3 seconds": 3000,
		// The largest windows convert exactly, not through a float64.
		"PATTERN SEQ(A a, B b) WITHIN 9223372036854775807":    math.MaxInt64,
		"PATTERN SEQ(A a, B b) WITHIN 9223372036854775807 ms": math.MaxInt64,
		"PATTERN SEQ(A a, B b) WITHIN 9223372036854775 s":     9223372036854775000,
		"PATTERN SEQ(A a, B b) WITHIN 1.5e18":                 1.5e18,
	} {
		p, err := compile(t, stream, query)
		if err != nil {
			t.Fatal(err)
		}
		if p.Window != want {
			t.Errorf("%s: window %d ticks, want %d", query, p.Window, want)
		}
	}
}

// TestWindowOverflow rejects, at the duration, a window that a unit
// makes larger than an int64 of ticks.
func TestWindowOverflow(t *testing.T) {
	stream := testStream(t)
	stream.Unit = 1e6 // one tick is a millisecond
	for _, tc := range []struct{ query, want string }{
		{"PATTERN SEQ(A a, B b) WITHIN 9223372036854775807 hours",
			"<input>:1:30: WITHIN 9223372036854775807 h is more than the largest window, 9223372036854775807 ticks\n    PATTERN SEQ(A a, B b) WITHIN 9223372036854775807 hours\n                                 ^"},
		{"PATTERN SEQ(A a, B b) WITHIN 9223372036854776 s",
			"<input>:1:30: WITHIN 9223372036854776 s is more than the largest window, 9223372036854775807 ticks\n    PATTERN SEQ(A a, B b) WITHIN 9223372036854776 s\n                                 ^"},
		{"PATTERN SEQ(A a, B b) WITHIN 1e17 d",
			"<input>:1:30: WITHIN 1e17 d is more than the largest window, 9223372036854775807 ticks\n    PATTERN SEQ(A a, B b) WITHIN 1e17 d\n                                 ^"},
	} {
		checkError(t, stream, tc.query, tc.want)
	}
}

// TestExplainGolden prints basic plans; testdata/explain holds the
// expected trees (go test ./planner -update rewrites them).
func TestExplainGolden(t *testing.T) {
	stream := testStream(t)
	for name, query := range map[string]string{
		"q3":      "EVENT SEQ(A x1, B x2, !(C x3), D x4) WHERE [attr1, attr2] AND x1.attr3 = 'x' AND x1.attr4 < x4.attr4 WITHIN 6",
		"closure": "PATTERN SEQ(!C c, A a, B+ b[], D d, !C e) WHERE [sym] AND b[i].price > b[i-1].price AND avg(b[].price) > 3 AND e.price > a.price WITHIN 10 RETURN a.price * 2 AS p2, b, count(b[])",
		"single":  "PATTERN A",
		"any":     "PATTERN SEQ(ANY(A, B) x, C c) WHERE x.price > 10",
		"algebra": "PATTERN SEQ(A a, OR(B b, AND(C c, D d))?, !C n, D h, B{2,4} e[], D? f, C g) WHERE [sym] AND e[i].price > a.price AND n.price > 5 AND b.price < 3 WITHIN 10",
	} {
		t.Run(name, func(t *testing.T) {
			p, err := compile(t, stream, query)
			if err != nil {
				t.Fatal(err)
			}
			testkit.Golden(t, filepath.Join("..", "testdata", "explain", name+".basic.golden"), p.Explain(nil))
		})
	}
}
