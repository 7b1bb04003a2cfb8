package rowpattern_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/rowpattern"
)

// table makes events of type t from "col,col;v,v;v,v" (an empty cell is
// NULL); an event's ts is its row number.
func table(text string) ([]*event.Event, *event.Schema) {
	s := event.NewSchema()
	typ := s.AddType("t")
	lines := strings.Split(text, ";")
	var slots []int
	for _, name := range strings.Split(lines[0], ",") {
		slots = append(slots, s.AddAttr(name))
	}
	var events []*event.Event
	for i, line := range lines[1:] {
		e := &event.Event{Type: typ, TS: int64(i), Seq: int64(i), Attrs: make([]event.Value, len(slots))}
		for k, cell := range strings.Split(line, ",") {
			e.Attrs[slots[k]] = event.ParseCell(cell)
		}
		s.Observe(e)
		events = append(events, e)
	}
	return events, s
}

func compile(t *testing.T, schema *event.Schema, query string) (*rowpattern.Query, error) {
	t.Helper()
	src := &ast.Source{Name: "<test>", Text: query}
	stmts, err := grammar.Parse(src)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return compileMR(stmts[0].(*ast.MatchRecognize), src, schema)
}

func compileMR(st *ast.MatchRecognize, src *ast.Source, schema *event.Schema) (*rowpattern.Query, error) {
	return rowpattern.Compile(st, src, schema, 0)
}

// run runs query on the table and returns its rows as "v,v | v,v".
func run(t *testing.T, tbl, query string) string {
	t.Helper()
	events, schema := table(tbl)
	q, err := compile(t, schema, query)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	if _, err := q.Run(context.Background(), events, 1, func(row []event.Value, _ *event.Event) bool {
		var b []byte
		for i, v := range row {
			if i > 0 {
				b = append(b, ',')
			}
			b = v.AppendJSON(b)
		}
		rows = append(rows, string(b))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return strings.Join(rows, " | ")
}

// mr is a query on t of id and classifier per row (ALL ROWS PER MATCH)
// with the given pattern, DEFINE and skip.
func mr(pattern, define, skip string) string {
	define = defineOr(define)
	return "SELECT id, m, c FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES MATCH_NUMBER() AS m, CLASSIFIER() AS c " +
		"ALL ROWS PER MATCH AFTER MATCH SKIP " + skip + " PATTERN (" + pattern + ") " + define + ")"
}

// defineOr is the DEFINE clause (which the syntax requires): A matches
// every row when the test gives none.
func defineOr(define string) string {
	if define == "" {
		return "DEFINE A AS true"
	}
	return define
}

const abc = "id,v;1,1;2,2;3,3;4,4"

func TestPreference(t *testing.T) {
	for _, tc := range []struct{ name, pattern, define, skip, want string }{
		// Alternation prefers its left branch, even when a right one is longer.
		{"alt-left", "A | A B", "", "PAST LAST ROW", `1,1,"A" | 2,2,"A" | 3,3,"A" | 4,4,"A"`},
		{"alt-longer-right", "A B | A", "", "PAST LAST ROW", `1,1,"A" | 2,1,"B" | 3,2,"A" | 4,2,"B"`},
		// Greedy takes as many as it can, reluctant as few.
		{"greedy", "A+", "", "PAST LAST ROW", `1,1,"A" | 2,1,"A" | 3,1,"A" | 4,1,"A"`},
		{"reluctant", "A+?", "", "PAST LAST ROW", `1,1,"A" | 2,2,"A" | 3,3,"A" | 4,4,"A"`},
		{"reluctant-then", "A+? B", "DEFINE B AS B.v >= 3", "PAST LAST ROW", `1,1,"A" | 2,1,"A" | 3,1,"B"`},
		{"greedy-then", "A+ B", "DEFINE B AS B.v >= 3", "PAST LAST ROW", `1,1,"A" | 2,1,"A" | 3,1,"A" | 4,1,"B"`},
		{"range", "A{2,3}", "", "PAST LAST ROW", `1,1,"A" | 2,1,"A" | 3,1,"A"`},
		{"range-reluctant", "A{2,3}?", "", "PAST LAST ROW", `1,1,"A" | 2,1,"A" | 3,2,"A" | 4,2,"A"`},
		{"at-most", "A{,2} B", "", "PAST LAST ROW", `1,1,"A" | 2,1,"A" | 3,1,"B" | 4,2,"B"`},
		{"exactly", "A{3}", "", "PAST LAST ROW", `1,1,"A" | 2,1,"A" | 3,1,"A"`},
		{"at-least-none", "A{5,}", "", "PAST LAST ROW", ``},
		{"optional", "A B? C", "DEFINE B AS B.v = 9", "PAST LAST ROW", `1,1,"A" | 2,1,"C" | 3,2,"A" | 4,2,"C"`},
		{"optional-reluctant", "A?? B", "", "PAST LAST ROW", `1,1,"B" | 2,2,"B" | 3,3,"B" | 4,4,"B"`},
		// A backtrack: the greedy A* gives a row back so that B can match.
		{"give-back", "A* B", "DEFINE B AS B.v = 4", "PAST LAST ROW", `1,1,"A" | 2,1,"A" | 3,1,"A" | 4,1,"B"`},
		// PERMUTE prefers its orders lexicographically.
		{"permute", "PERMUTE(A, B, C)", "DEFINE A AS A.v = 2", "PAST LAST ROW", `1,1,"B" | 2,1,"A" | 3,1,"C"`},
		{"anchors", "^ A | A $", "", "PAST LAST ROW", `1,1,"A" | 4,2,"A"`},
		// The empty pattern matches the empty sequence at every row.
		{"empty", "() | A", "", "PAST LAST ROW", `1,1,null | 2,2,null | 3,3,null | 4,4,null`},
		// A loop whose body can match nothing ends (its empty iteration is cut).
		{"empty-loop", "(A*)* B", "DEFINE A AS A.v < 3, B AS B.v = 3", "PAST LAST ROW", `1,1,"A" | 2,1,"A" | 3,1,"B"`},
		{"exclusion", "A {- B -} C", "", "PAST LAST ROW", `1,1,"A" | 3,1,"C"`},
		// Skip modes.
		{"next-row", "A B", "", "TO NEXT ROW", `1,1,"A" | 2,1,"B" | 2,2,"A" | 3,2,"B" | 3,3,"A" | 4,3,"B"`},
		{"to-last", "A B C", "", "TO LAST C", `1,1,"A" | 2,1,"B" | 3,1,"C"`},
		{"to-first", "A B+", "DEFINE B AS B.v <= 3", "TO FIRST B", `1,1,"A" | 2,1,"B" | 3,1,"B" | 2,2,"A" | 3,2,"B"`},
		{"to-var", "A B C", "", "TO B", `1,1,"A" | 2,1,"B" | 3,1,"C" | 2,2,"A" | 3,2,"B" | 4,2,"C"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(t, abc, mr(tc.pattern, tc.define, tc.skip)); got != tc.want {
				t.Errorf("PATTERN (%s) %s SKIP %s\ngot  %s\nwant %s", tc.pattern, tc.define, tc.skip, got, tc.want)
			}
		})
	}
}

func TestSkipErrors(t *testing.T) {
	events, schema := table(abc)
	for _, tc := range []struct{ query, want string }{
		{mr("A B?", "DEFINE B AS false", "TO LAST B"), "match 1 has no row of B"},
		{mr("A B", "", "TO FIRST A"), "would resume at its own first row"},
	} {
		q, err := compile(t, schema, tc.query)
		if err != nil {
			t.Fatal(err)
		}
		_, err = q.Run(context.Background(), events, 1, func([]event.Value, *event.Event) bool { return true })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.query, err, tc.want)
		}
	}
}

func TestMeasures(t *testing.T) {
	const tbl = "id,v;1,10;2,;3,30;4,5"
	for _, tc := range []struct{ name, measures, rows, pattern, define, want string }{
		{"aggregates", "count(*) AS n; count(A.v) AS k; sum(A.v) AS s; avg(v) AS a; min(v) AS lo; max(v) AS hi", "ONE ROW PER MATCH", "A+", "",
			`4,3,45,15.0,5,30`},
		{"running", "count(*) AS n; sum(v) AS s; FINAL sum(v) AS f", "ALL ROWS PER MATCH", "A+", "",
			`1,10,45 | 2,10,45 | 3,40,45 | 4,45,45`},
		// A NULL in DEFINE is not true: row 2 cannot be B.
		{"null-define", "count(B.v) AS n; FINAL LAST(B.id) AS last_b", "ONE ROW PER MATCH", "A B*", "DEFINE B AS B.v > 0",
			`0,null | 2,4`},
		{"navigation", "FIRST(v) AS f; LAST(v, 1) AS l1; PREV(v, 2) AS p2; NEXT(v) AS n1; FIRST(id, 9) AS none", "ALL ROWS PER MATCH", "A+", "",
			`10,null,null,null,null | 10,10,null,30,null | 10,null,10,5,null | 10,30,null,null,null`},
		{"arith-null", "v * 2 + 1 AS x; v / 0 AS y; v % 7 AS z; -v AS w", "ALL ROWS PER MATCH", "A", "",
			`21,null,3,-10 | null,null,null,null | 61,null,2,-30 | 11,null,5,-5`},
		{"logic", "v > 5 AND v < 20 AS x; v > 5 OR v < 20 AS y; NOT v > 5 AS z", "ALL ROWS PER MATCH", "A", "",
			`true,true,false | null,null,null | false,true,false | false,true,true`},
		{"is-null", "v IS NULL AS a; v IS NOT NULL AS b; v > 5 IS NULL AS c; NOT v IS NULL AS d", "ALL ROWS PER MATCH", "A", "",
			`false,true,false,true | true,false,true,false | false,true,false,true | false,true,false,true`},
		{"is-null-define", "A.id AS i", "ONE ROW PER MATCH", "A", "DEFINE A AS v IS NULL", `2`},
		{"count-var-star", "count(A.*) AS a; count(B.*) AS b; count(*) AS n; count(U.*) AS u; FINAL count(B.*) AS f", "ALL ROWS PER MATCH", "A B+",
			"SUBSET U = (A, B) DEFINE B AS B.id > 1", `1,0,1,1,3 | 1,1,2,2,3 | 1,2,3,3,3 | 1,3,4,4,3`},
		{"classifier-subset", "CLASSIFIER(U) AS u; FINAL LAST(CLASSIFIER()) AS last", "ALL ROWS PER MATCH", "A B C", "SUBSET U = (A, B) DEFINE A AS true",
			`"A","C" | "B","C" | "B","C"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names := []string{}
			for _, m := range strings.Split(tc.measures, "; ") {
				names = append(names, m[strings.LastIndex(m, " ")+1:])
			}
			q := "SELECT " + strings.Join(names, ", ") + " FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES " + strings.ReplaceAll(tc.measures, ";", ",") +
				" " + tc.rows + " PATTERN (" + tc.pattern + ") " + defineOr(tc.define) + ")"
			if got := run(t, tbl, q); got != tc.want {
				t.Errorf("%s\ngot  %s\nwant %s", q, got, tc.want)
			}
		})
	}
}

// TestSelectExpressions: an expression of the SELECT list reads the
// output's columns (measures, and the row's), nulls in unmatched rows.
func TestSelectExpressions(t *testing.T) {
	got := run(t, abc, "SELECT id, v * 2 + 1 AS w, m.c IS NULL AS nc, m * 10 AS mm, 7 AS k FROM t MATCH_RECOGNIZE (ORDER BY id "+
		"MEASURES MATCH_NUMBER() AS m, CLASSIFIER() AS c ALL ROWS PER MATCH WITH UNMATCHED ROWS PATTERN (A) DEFINE A AS v > 2) AS m")
	if want := `1,3,true,null,7 | 2,5,true,null,7 | 3,7,false,10,7 | 4,9,false,20,7`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	got = run(t, "p,id,v;a,1,1;a,2,2;b,3,3", "SELECT p, n - 1 AS more, p = 'a' AS isa FROM t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id "+
		"MEASURES count(*) AS n ONE ROW PER MATCH PATTERN (A+) DEFINE A AS true)")
	if want := `"a",1,true | "b",0,false`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestPartitionsAndOrder(t *testing.T) {
	const tbl = "p,id,v;b,2,1;a,3,2;b,1,3;a,1,4;,1,5"
	got := run(t, tbl, "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id DESC MEASURES count(*) AS n, FIRST(v) AS f ONE ROW PER MATCH PATTERN (A+) DEFINE A AS true)")
	// Partitions in order (NULL last), rows sorted by id descending.
	if want := `"a",2,2 | "b",2,1 | null,1,5`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	got = run(t, tbl, "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id ALL ROWS PER MATCH WITH UNMATCHED ROWS PATTERN (A) DEFINE A AS v > 2)")
	if want := `"a",1,4 | "a",3,2 | "b",1,3 | "b",2,1 | null,1,5`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// 1 and 1.0 are one partition, whose rows show its first row's value.
	got = run(t, "p,id;1.0,2;1,1;2,3", "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id MEASURES count(*) AS n ALL ROWS PER MATCH PATTERN (A+) DEFINE A AS true)")
	if want := `1,1,1 | 1,2,2 | 2,3,1`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestCompileErrors(t *testing.T) {
	_, schema := table(abc)
	for _, tc := range []struct{ query, want string }{
		{"SELECT x FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES B.v AS x PATTERN (A) DEFINE A AS true)", "B is not a pattern variable or SUBSET"},
		{"SELECT x FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES count(B.*) AS x PATTERN (A) DEFINE A AS true)", "B is not a pattern variable or SUBSET"},
		{"SELECT x FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES sum(PREV(v)) AS x PATTERN (A) DEFINE A AS true)", "PREV inside an aggregate"},
		{"SELECT x FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES PREV(1) AS x PATTERN (A) DEFINE A AS true)", "the argument of PREV must read a column"},
		{"SELECT x FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES LAST(A.v + B.v) AS x PATTERN (A B) DEFINE A AS true)", "reads more than one pattern variable"},
		{"SELECT x FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES FIRST(PREV(v)) AS x PATTERN (A) DEFINE A AS true)", "PREV inside FIRST"},
		{"SELECT x FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES PREV(v, -1) AS x PATTERN (A) DEFINE A AS true)", "non-negative integer"},
		// 2^63-1 was refused as "a non-negative integer", which it is.
		{"SELECT x FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES PREV(v, 9223372036854775807) AS x PATTERN (A) DEFINE A AS true)", "a non-negative integer, at most 1073741824"},
		{"SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id PATTERN (A) DEFINE A AS FINAL LAST(v) > 1)", "FINAL is not allowed in DEFINE"},
		{"SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id PATTERN (A) DEFINE A AS MATCH_NUMBER() > 1)", "MATCH_NUMBER is not allowed in DEFINE"},
		{"SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH PATTERN (A) DEFINE B AS true)", "DEFINE names B, which is not a variable of PATTERN"},
		{"SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH PATTERN (A) DEFINE A AS true, A AS false)", "A is defined twice"},
		{"SELECT id FROM t MATCH_RECOGNIZE (ORDER BY nope ALL ROWS PER MATCH PATTERN (A) DEFINE A AS true)", "stream t has no column nope"},
		{"SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id PATTERN (A) DEFINE A AS true)", "neither a measure nor a PARTITION BY column"},
		{"SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH PATTERN (A) SUBSET A = (A) DEFINE A AS true)", "SUBSET A has the name of a pattern variable"},
		{"SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH PATTERN (A) SUBSET U = (B) DEFINE A AS true)", "SUBSET U names B"},
		{"SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH AFTER MATCH SKIP TO FIRST X PATTERN (A) DEFINE A AS true)", "X is not a pattern variable"},
		{"SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH WITH UNMATCHED ROWS PATTERN (A {- B -}) DEFINE A AS true)", "cannot be used with ALL ROWS PER MATCH WITH UNMATCHED ROWS"},
		{"SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH PATTERN (PERMUTE(A, B, C, D, E, F, G)) DEFINE A AS true)", "not supported yet: PERMUTE of more than 6 items"},
		{"SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH PATTERN ((A{1000}){1000}) DEFINE A AS true)", "not supported yet: a row pattern of more than"},
		{"SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH PATTERN (A) WITHIN 5 seconds DEFINE A AS true)", "unit-less timestamps"},
		{"SELECT x.id FROM t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH PATTERN (A) DEFINE A AS true) AS m", "X is not the MATCH_RECOGNIZE's alias"},
		{"SELECT x.v + 1 AS w FROM t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH PATTERN (A) DEFINE A AS true) AS m", "X is not the MATCH_RECOGNIZE's alias"},
		{"SELECT v + 1 FROM t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH PATTERN (A) DEFINE A AS true)", "an expression in the SELECT list needs a name"},
		{"SELECT count(*) + 1 AS n FROM t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH PATTERN (A) DEFINE A AS true)", "COUNT in the SELECT list: compute it in MEASURES"},
		{"SELECT v + 1 AS w FROM t MATCH_RECOGNIZE (ORDER BY id PATTERN (A) DEFINE A AS true)", "v is neither a measure nor a PARTITION BY column"},
	} {
		_, err := compile(t, schema, tc.query)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "^") {
			t.Errorf("%s\ngot  %v\nwant %q with a caret", tc.query, err, tc.want)
		}
	}
}

// stocks is a table of n rows over 10 symbols, prices a random walk.
func stocks(n int) ([]*event.Event, *event.Schema) {
	var b strings.Builder
	b.WriteString("symbol,id,price")
	price := [10]int{}
	seed := uint32(1)
	for i := range n {
		seed = seed*1664525 + 1013904223
		sym := int(seed>>8) % 10
		price[sym] += int(seed>>20)%7 - 3
		fmt.Fprintf(&b, ";s%d,%d,%d", sym, i, price[sym])
	}
	return table(b.String())
}

const vShape = "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY id MEASURES FIRST(id) AS first_id, LAST(id) AS last_id, " +
	"count(B.price) AS falls, MATCH_NUMBER() AS m %s PATTERN (A B+ C+) " +
	"DEFINE B AS B.price < PREV(B.price), C AS C.price > PREV(C.price))"

// TestWorkers checks that partitions matched on several workers give the
// rows one worker gives, in the same order.
func TestWorkers(t *testing.T) {
	events, schema := stocks(5000)
	for _, rows := range []string{"ONE ROW PER MATCH", "ALL ROWS PER MATCH"} {
		q, err := compile(t, schema, fmt.Sprintf(vShape, rows))
		if err != nil {
			t.Fatal(err)
		}
		var outs [2][]string
		for i, workers := range []int{1, 3} {
			if _, err := q.Run(context.Background(), events, workers, func(row []event.Value, _ *event.Event) bool {
				outs[i] = append(outs[i], fmt.Sprint(row))
				return true
			}); err != nil {
				t.Fatal(err)
			}
		}
		if len(outs[0]) < 100 || !slices.Equal(outs[0], outs[1]) {
			t.Errorf("%s: %d rows on 1 worker, %d on 3, or they differ", rows, len(outs[0]), len(outs[1]))
		}
	}
}

func BenchmarkVShape(b *testing.B) {
	events, schema := stocks(100_000)
	for _, rows := range []string{"ONE ROW PER MATCH", "ALL ROWS PER MATCH"} {
		b.Run(strings.Fields(rows)[0], func(b *testing.B) {
			src := &ast.Source{Name: "<bench>", Text: fmt.Sprintf(vShape, rows)}
			stmts, err := grammar.Parse(src)
			if err != nil {
				b.Fatal(err)
			}
			q, err := compileMR(stmts[0].(*ast.MatchRecognize), src, schema)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := q.Run(context.Background(), events, 1, func([]event.Value, *event.Event) bool { return true }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(events))/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func TestWithin(t *testing.T) {
	// Row i's ts is i: WITHIN 1 lets a match span two rows.
	got := run(t, abc, "SELECT id, m FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES MATCH_NUMBER() AS m ALL ROWS PER MATCH PATTERN (A+) WITHIN 1 DEFINE A AS true)")
	if want := `1,1 | 2,1 | 3,2 | 4,2`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestExplain(t *testing.T) {
	_, schema := table(abc)
	q, err := compile(t, schema, "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY v ORDER BY id DESC PATTERN (A | B*?) DEFINE A AS v > 1)")
	if err != nil {
		t.Fatal(err)
	}
	want := `MATCH_RECOGNIZE on t
  partition by V
  sorted by ID DESC
  ONE ROW PER MATCH, AFTER MATCH SKIP PAST LAST ROW
  pattern (A | B*?): 7 instructions, variables A, B
      0 split 1, 3
      1 var A
      2 jump 6
      3 split 6, 4
      4 var B
      5 jump 3
      6 done
`
	if got := q.Explain(); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}

// TestHistory checks DEFINEs that read other rows' labels: the matcher must
// keep threads at one instruction apart when their labels differ.
func TestHistory(t *testing.T) {
	for _, tc := range []struct{ name, pattern, define, want string }{
		// (A | B)+ C: C needs the previous row to be a B; A is preferred, so
		// the match takes B only where C needs it.
		{"prev-classifier", "(A | B)+ C", "DEFINE C AS PREV(CLASSIFIER()) = 'B'", `1,1,"A" | 2,1,"A" | 3,1,"B" | 4,1,"C"`},
		{"other-variable", "(A | B)+ C", "DEFINE C AS LAST(B.v) = 2", `1,1,"A" | 2,1,"B" | 3,1,"A" | 4,1,"C"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(t, abc, mr(tc.pattern, tc.define, "PAST LAST ROW")); got != tc.want {
				t.Errorf("PATTERN (%s) %s\ngot  %s\nwant %s", tc.pattern, tc.define, got, tc.want)
			}
		})
	}
}

// TestTooManyWays: with a DEFINE that reads the match's rows, the threads
// of an ambiguous pattern do not merge and double at each row; past
// maxThreads the query fails with the pattern's position, rather than
// take exponential time and memory. WITHIN bounds them, as the error says.
func TestTooManyWays(t *testing.T) {
	tbl := "id,v"
	for i := range 40 {
		tbl += fmt.Sprintf(";%d,1", i+1)
	}
	events, schema := table(tbl)
	const define = " DEFINE B AS v > 0 AND count(*) >= 0, C AS v > 0, D AS v < 0)"
	for _, tt := range []struct{ within, want string }{
		{"", "<test>:1:75: more than 16384 ways to match from one start row"},
		{" WITHIN 10", ""},
	} {
		q, err := compile(t, schema, "SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id ALL ROWS PER MATCH PATTERN ((B | C)+ D)"+tt.within+define)
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		_, err = q.Run(context.Background(), events, 1, func([]event.Value, *event.Event) bool { rows++; return true })
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("WITHIN 10: %v", err)
		case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
			t.Errorf("error %v, want one beginning %q", err, tt.want)
		case rows != 0:
			t.Errorf("%d rows, want none (D matches no row)", rows)
		}
	}
}

// TestIntOverflow: in MEASURES and DEFINE an int result beyond int64
// (+ - * / unary minus, a sum) is NULL, as a division by zero is, never
// a wrapped int; its neighbours at the edges keep their values.
func TestIntOverflow(t *testing.T) {
	const tbl = "id,v,w,u;1,9223372036854775807,1,9223372036854775807;2,-9223372036854775808,-1,1;3,-1,-9223372036854775808,-1;4,0,9223372036854775807,5"
	for _, tc := range []struct{ name, query, want string }{
		{"measures", "SELECT a, s, m, d, r, n, t FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES v + w AS a, v - w AS s, v * w AS m, v / w AS d, " +
			"v % w AS r, -v AS n, sum(u) AS t ALL ROWS PER MATCH PATTERN (A+) DEFINE A AS true)",
			"null,9223372036854775806,9223372036854775807,9223372036854775807,0,-9223372036854775807,9223372036854775807 | " +
				"null,-9223372036854775807,null,null,0,null,null | " +
				"null,9223372036854775807,null,0,-1,1,9223372036854775807 | " +
				"9223372036854775807,-9223372036854775807,0,0,0,0,null"},
		// v + 1 is a row test's operand, v + w the evaluator's.
		{"define, a row test", "SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES A.id AS id ONE ROW PER MATCH PATTERN (A) DEFINE A AS v + 1 < 0)", "2"},
		{"define", "SELECT id FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES A.id AS id ONE ROW PER MATCH PATTERN (A) DEFINE A AS v + w < 0 OR id = 4)", "4"},
	} {
		if got := run(t, tbl, tc.query); got != tc.want {
			t.Errorf("%s: %s\ngot  %s\nwant %s", tc.name, tc.query, got, tc.want)
		}
	}
}
