package grammar

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
)

type conformanceCase struct {
	Name  string `json:"name"`
	Query string `json:"query"`
	Error string `json:"error"`
}

func loadConformance(t testing.TB) []conformanceCase {
	t.Helper()
	var out []conformanceCase
	for _, f := range []string{"cases.jsonl", "strategies.jsonl"} {
		fh, err := os.Open("../testdata/conformance/" + f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var c conformanceCase
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out = append(out, c)
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		fh.Close()
	}
	return out
}

// parserErrors are the conformance cases whose error is the parser's; the
// other error cases are rejected later, by the planner.
var parserErrors = map[string]string{
	"hand-err-other_invalid_queries-39": "<input>:1:13: ANY(...) needs a variable",
	"hand-err-other_invalid_queries-40": "<input>:1:34: expected an expression at end of input",
	"hand-err-other_invalid_queries-41": "<input>:1:29: expected a condition (comparison or equivalence test) at 'a.x'",
	"hand-err-other_invalid_queries-42": "<input>:1:32: unknown time unit 'fortnights'; units are ms, s, m, h or d",
	"hand-err-other_invalid_queries-43": "<input>:1:1: expected PATTERN or EVENT at 'SEQ'",
}

func TestConformanceQueries(t *testing.T) {
	cases := loadConformance(t)
	if len(cases) == 0 {
		t.Fatal("no conformance cases")
	}
	for _, c := range cases {
		q, err := ParseQuery(&ast.Source{Name: "<input>", Text: c.Query})
		want, isParseErr := parserErrors[c.Name]
		switch {
		case isParseErr && err == nil:
			t.Errorf("%s: %q parsed, want error %q", c.Name, c.Query, want)
		case isParseErr && !strings.HasPrefix(err.Error(), want+"\n"):
			t.Errorf("%s: error\n%s\nwant first line %q", c.Name, err, want)
		case !isParseErr && err != nil:
			t.Errorf("%s: %q: %v", c.Name, c.Query, err)
		case err == nil:
			checkRoundTrip(t, c.Query, q)
			checkSpans(t, c.Query, q)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"SEQ(A a, B b)", `
<input>:1:1: expected PATTERN or EVENT at 'SEQ'
    SEQ(A a, B b)
    ^`},
		{"PATTERN SEQ(A a, B b) WHERE a.x >", `
<input>:1:34: expected an expression at end of input
    PATTERN SEQ(A a, B b) WHERE a.x >
                                     ^`},
		{"PATTERN SEQ(A a, B b)\nWHERE a.x", `
<input>:2:7: expected a condition (comparison or equivalence test) at 'a.x'
    WHERE a.x
          ^`},
		{"PATTERN SEQ(A a, B b) WITHIN 5 fortnights", `
<input>:1:32: unknown time unit 'fortnights'; units are ms, s, m, h or d
    PATTERN SEQ(A a, B b) WITHIN 5 fortnights
                                   ^`},
		{"PATTERN SEQ(ANY(A, B), C c)", `
<input>:1:13: ANY(...) needs a variable
    PATTERN SEQ(ANY(A, B), C c)
                ^`},
		{"PATTERN SEQ(A a) WHERE a.sym = 'IBM", `
<input>:1:32: unterminated string
    PATTERN SEQ(A a) WHERE a.sym = 'IBM
                                   ^`},
		{"PATTERN SEQ(A a, B b))", `
<input>:1:22: unexpected ')'
    PATTERN SEQ(A a, B b))
                         ^`},
		{"PATTERN SEQ(A a B b)", `
<input>:1:16: expected ')' or ',' after 'a'
    PATTERN SEQ(A a B b)
                   ^`},
		{"PATTERN SEQ(A a) WHERE a.x < 1 < 2", `
<input>:1:32: comparisons cannot be chained; join them with AND
    PATTERN SEQ(A a) WHERE a.x < 1 < 2
                                   ^`},
		// An int literal is an int64: one beyond it is neither wrapped
		// nor a float (-9223372036854775808 is one).
		{"PATTERN SEQ(A a) WHERE a.x < 9223372036854775808", `
<input>:1:30: integer '9223372036854775808' is out of range
    PATTERN SEQ(A a) WHERE a.x < 9223372036854775808
                                 ^`},
		{"PATTERN SEQ(A a) WHERE a.x < -9223372036854775809", `
<input>:1:31: integer '-9223372036854775809' is out of range
    PATTERN SEQ(A a) WHERE a.x < -9223372036854775809
                                  ^`},
		{"PATTERN SEQ(A a) WHERE a.x # 1", `
<input>:1:28: unexpected character '#'
    PATTERN SEQ(A a) WHERE a.x # 1
                               ^`},
		{"LOAD 'x.csv' FORMAT xml", `
<input>:1:21: unknown format 'xml' (expected csv or jsonl)
    LOAD 'x.csv' FORMAT xml
                        ^`},
		{"SHOW STREAMS;\n\tFOO", `
<input>:2:2: unknown statement FOO; statements are PATTERN, EVENT, EXPLAIN, LOAD, GENERATE, USE, SHOW, DESCRIBE, SET, LISTEN, STOP, SELECT or RULE
    	FOO
    	^`},
		{"SHOW", `
<input>:1:5: expected STREAMS, TYPES, QUERIES or SETTINGS at end of input
    SHOW
        ^`},
		{"PATTERN SEQ(A a, B+ b[]) WHERE b[j].x = 1 AND b[..i-2].x = 1", `
<input>:1:34: a closure index is i, i-k, a number, b.LEN or b.LEN-k
    PATTERN SEQ(A a, B+ b[]) WHERE b[j].x = 1 AND b[..i-2].x = 1
                                     ^
<input>:1:49: a running aggregate reads the elements before i: write [..i-1]
    PATTERN SEQ(A a, B+ b[]) WHERE b[j].x = 1 AND b[..i-2].x = 1
                                                    ^`},
		{"PATTERN A a WHERE foo(a) { a.x = 1 }", `
<input>:1:19: 'foo' is not an event selection strategy
    PATTERN A a WHERE foo(a) { a.x = 1 }
                      ^`},
		{"PATTERN A a WHERE a.x = 1 /* never closed", `
<input>:1:27: unterminated comment
    PATTERN A a WHERE a.x = 1 /* never closed
                              ^`},
		{"PATTERN SEQ(A a,", `
<input>:1:17: expected a pattern at end of input
    PATTERN SEQ(A a,
                    ^`},
		{"PATTERN A a WHERE a.x ≥ 1 ∧\nLOAD 'x'", `
<input>:2:6: unexpected string 'x'
    LOAD 'x'
         ^`},
		{"PATTERN A a WHERE a.x ≥ 1 ∧", `
<input>:1:28: expected an expression at end of input
    PATTERN A a WHERE a.x ≥ 1 ∧
                               ^`},
		{"PATTERN SEQ(A a, B b) WITHIN 5\n  INTO pairs", `
<input>:2:3: INTO needs RETURN: the derived stream's attributes are the RETURN columns
      INTO pairs
      ^`},
		{"PATTERN A a WHERE a.x = 1 INTO d", `
<input>:1:27: INTO needs RETURN: the derived stream's attributes are the RETURN columns
    PATTERN A a WHERE a.x = 1 INTO d
                              ^`},
		// Not where a missing ')' is the error, nor outside a query.
		{"PATTERN SEQ(A a, B b INTO d", `
<input>:1:21: expected ')' or ',' after 'b'
    PATTERN SEQ(A a, B b INTO d
                        ^`},
		{"SHOW STREAMS INTO d", `
<input>:1:14: unexpected 'INTO'
    SHOW STREAMS INTO d
                 ^`},
		{"PATTERN A a RETURN a.x INTO", `
<input>:1:28: expected a name at end of input
    PATTERN A a RETURN a.x INTO
                               ^`},
		{"PATTERN A a RETURN a.x INTO s WITHIN 5", `
<input>:1:31: unexpected 'WITHIN'
    PATTERN A a RETURN a.x INTO s WITHIN 5
                                  ^`},
	}
	for _, tt := range tests {
		checkParseError(t, tt.src, tt.want)
	}
}

// TestParseErrorsPointAtTheFix: an error names what the grammar accepts
// where the caret is, and the caret is on the token to fix.
func TestParseErrorsPointAtTheFix(t *testing.T) {
	const statements = "PATTERN, EVENT, EXPLAIN, LOAD, GENERATE, USE, SHOW, DESCRIBE, SET, LISTEN, STOP, SELECT or RULE"
	tests := []struct{ src, want string }{
		{"USE ;", `
<input>:1:5: expected a name at ';'
    USE ;
        ^`},
		{"DESCRIBE ;", `
<input>:1:10: expected a name at ';'
    DESCRIBE ;
             ^`},
		{") ;", `
<input>:1:1: expected a statement (` + statements + `) at ')'
    ) ;
    ^`},
		{"PATTERN SEQ(A a) WITHN 5", `
<input>:1:18: unexpected 'WITHN'; did you mean WITHIN?
    PATTERN SEQ(A a) WITHN 5
                     ^`},
		{"pattern seq(A a, B b) retrun a", `
<input>:1:23: unexpected 'retrun'; did you mean RETURN?
    pattern seq(A a, B b) retrun a
                          ^`},
		{"PATTERN SEQ(A a, B b) WHERE a.x = 1 AN b.y = 2", `
<input>:1:37: unexpected 'AN'; did you mean AND?
    PATTERN SEQ(A a, B b) WHERE a.x = 1 AN b.y = 2
                                        ^`},
		// SQE is a type name until the '(' after it.
		{"PATTERN SQE(A a, B b)", `
<input>:1:9: unexpected 'SQE'; did you mean SEQ?
    PATTERN SQE(A a, B b)
            ^`},
		{"PATTERN SEQ(A a, ORR(B b, C c))", `
<input>:1:18: unexpected 'ORR'; did you mean OR?
    PATTERN SEQ(A a, ORR(B b, C c))
                     ^`},
		{"PATTERN SEQUENCE(A a, B b)", `
<input>:1:9: unexpected 'SEQUENCE'; did you mean SEQ?
    PATTERN SEQUENCE(A a, B b)
            ^`},
		{"pattern seq(A a, permute(B b, C c))", `
<input>:1:18: unexpected 'permute'; did you mean AND?
    pattern seq(A a, permute(B b, C c))
                     ^`},
		{"SHOW TYPE", `
<input>:1:6: unexpected 'TYPE'; did you mean TYPES?
    SHOW TYPE
         ^`},
		// A keyword that does not fit is not suggested (WITH is as near).
		{"PATTERN SEQ(A a) WITHIN 5 WITH 3", `
<input>:1:27: unexpected 'WITH'
    PATTERN SEQ(A a) WITHIN 5 WITH 3
                              ^`},
		{"PATTERN SEQ(A a) WITHIN 5 secs", `
<input>:1:27: unknown time unit 'secs'; did you mean sec?
    PATTERN SEQ(A a) WITHIN 5 secs
                              ^`},
		// A missing ')' is reported where it belongs, not at what follows.
		{"PATTERN SEQ(stock1 a, stock2 b WITHIN 10", `
<input>:1:31: expected ')' or ',' after 'b'
    PATTERN SEQ(stock1 a, stock2 b WITHIN 10
                                  ^`},
		{"PATTERN SEQ(A a, B b)\nWHERE (a.x = 1 OR a.y = 2\nWITHIN 10", `
<input>:2:26: expected ')' after '2'
    WHERE (a.x = 1 OR a.y = 2
                             ^`},
		{"LOAD 'x.csv' WITH (type_column = 'sym'", `
<input>:1:39: expected ')' or ',' after string 'sym'
    LOAD 'x.csv' WITH (type_column = 'sym'
                                          ^`},
		{"PATTERN SEQ(A a]", `
<input>:1:16: expected ')' or ',' at ']'
    PATTERN SEQ(A a]
                   ^`},
		{"SELECT * FROM stocks;", `
<input>:1:21: expected MATCH_RECOGNIZE, found end of input
    SELECT * FROM stocks;
                        ^`},
		{"quit;", `
<input>:1:1: unknown statement quit; statements are ` + statements + `
    quit;
    ^`},
		{"exit;", `
<input>:1:1: unknown statement exit; statements are ` + statements + `
    exit;
    ^`},
		{"SHOW STREAMS; EXPLAN PATTERN A", `
<input>:1:15: unknown statement EXPLAN; did you mean EXPLAIN?
    SHOW STREAMS; EXPLAN PATTERN A
                  ^`},
		{"SET = 1", `
<input>:1:5: expected a name at '='
    SET = 1
        ^`},
		{"SET limit 5", `
<input>:1:11: expected '=' at '5'
    SET limit 5
              ^`},
		{"EXPLAIN SHOW TYPES", `
<input>:1:9: expected PATTERN, EVENT, ANALYZE, SELECT or '(' at 'SHOW'
    EXPLAIN SHOW TYPES
            ^`},
		{"STOP QUERY", `
<input>:1:11: expected a number at end of input
    STOP QUERY
              ^`},
	}
	for _, tt := range tests {
		checkParseError(t, tt.src, tt.want)
	}
}

func checkParseError(t *testing.T, src, want string) {
	t.Helper()
	_, err := Parse(&ast.Source{Name: "<input>", Text: src})
	if err == nil {
		t.Errorf("%q: no error", src)
		return
	}
	if got, want := err.Error(), strings.TrimPrefix(want, "\n"); got != want {
		t.Errorf("%q:\ngot:\n%s\nwant:\n%s", src, got, want)
	}
	var list ast.ErrorList
	if !errors.As(err, &list) {
		t.Errorf("%q: error is %T, want ast.ErrorList", src, err)
	}
}

func TestParseQueryNeedsOneQuery(t *testing.T) {
	for src, want := range map[string]string{
		"":                        "<input>:1:1: expected a query (PATTERN or EVENT) at end of input",
		"SHOW STREAMS":            "<input>:1:1: expected a query (PATTERN or EVENT)",
		"PATTERN A; PATTERN B":    "<input>:1:12: expected a single query, found a second statement",
		"-- only a comment\n;;  ": "<input>:2:5: expected a query (PATTERN or EVENT) at end of input",
	} {
		_, err := ParseQuery(&ast.Source{Name: "<input>", Text: src})
		if err == nil || !strings.HasPrefix(err.Error(), want+"\n") {
			t.Errorf("%q: got %v, want %q", src, err, want)
		}
	}
}

// statements parse and print back as written (the canonical form).
var canonical = []string{
	"SELECT * FROM T MATCH_RECOGNIZE (ONE ROW PER MATCH PATTERN (A) DEFINE A AS true)",
	"EXPLAIN SELECT * FROM T MATCH_RECOGNIZE (ONE ROW PER MATCH PATTERN (A) DEFINE A AS true)",
	"EXPLAIN ANALYZE (FORMAT json) SELECT * FROM T MATCH_RECOGNIZE (ONE ROW PER MATCH PATTERN (A) DEFINE A AS true)",
	"PATTERN SEQ(A a, B b)",
	"RULE dip: PATTERN SEQ(stock1 a, stock2 b) WHERE a.price > 90 WITHIN 20",
	"RULE `rule`: EXPLAIN PATTERN SEQ(`rule` a, B b) RETURN a.`rule`",
	// The pattern algebra: every node, and docs/LANGUAGE.md's examples.
	"PATTERN SEQ(A a, OR(B b, SEQ(C c, AND(D d, E? e))?), (F f; G* g[]; H h)?, I{2,5} i[], J{3} j[], K k) WITHIN 9",
	"PATTERN OR(A x, ANY(A, B)? x, AND(C c, D d))",
	"PATTERN SEQ(login a, OR(pwchange p, mfareset m), transfer t) WHERE [user] WITHIN 30 m",
	"PATTERN AND(door d, alarm x) WHERE [site] WITHIN 10 s",
	"PATTERN SEQ(order o, retry? r, payment p) WHERE [order_id] WITHIN 1 h",
	"PATTERN SEQ(stock1 a, stock2{3,5} b[], stock3 c) WITHIN 50",
	"EXPLAIN ANALYZE EVENT (A a; !(B b); C{2,} c[]; D^3 d[]; ANY(E, F) e) FROM s WHERE [sym, id = 3] AND a.x = -7 WITHIN 1.5e-3 h RETURN *",
	"EXPLAIN PATTERN !A a",
	"PATTERN SEQ(A a, !B n, C+ c[]) FROM s WHERE a.x < c[i].x WITHIN 10 RETURN a.x, count(c[]) AS n, a.x + 1 INTO spikes",
	"EXPLAIN ANALYZE PATTERN A a RETURN a.`into` AS `from` INTO `SHELF-READING`",
	"EXPLAIN (FORMAT dot) PATTERN SEQ(A a, B b)",
	"EXPLAIN ANALYZE (FORMAT json) PATTERN A a",
	"SHOW SETTINGS",
	"EVENT SEQ(A a, B b)",
	"PATTERN A",
	"PATTERN SEQ(A a, B{3,} b, C c)",
	"PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x AND b[b.LEN].x = b[1].x AND b[b.LEN-1].x < 3 AND b.LEN >= 2 AND count(b[]) > 1 AND avg(b[..i-1].x) < b[i].x AND count(b[..i-1]) = 0 AND sum(b[].x) != 1.0",
	"PATTERN SEQ(A a, B b) WHERE skip-till-any-match AND NOT (a.x = 1 OR b.y = 2) AND true",
	"PATTERN SEQ(A a, B b) WHERE skip_till_next_match(a, b) { b.x > a.x AND b.y = 'it''s' }",
	"PATTERN SEQ(A a, B b) WHERE strict_contiguity",
	"PATTERN SEQ(`SHELF-READING` a, `stocks` s) WHERE a.`format` = s.`len` AND a.type = abs(-(a.x - 1)) * 2 % 3 / 4 WITHIN 10 s RETURN a.x AS `AS`, s, a.x + 1",
	"PATTERN A a WHERE (a.x = 1) = (a.y < 2) AND a.z - (a.y - 1) = - -3 AND -a.x = 9223372036854775807 AND a.f = 1e+21",
	"LOAD 'a''b.csv' FOLLOW AS s FORMAT jsonl WITH (type_column = 'symbol', x = -1.5, `format` = true)",
	"LOAD '-'",
	"GENERATE STOCKS AS g WITH (events = 10, seed = 11)",
	"GENERATE STOCKS",
	"USE s",
	"SHOW STREAMS",
	"SHOW QUERIES",
	"STOP QUERY 3",
	"LISTEN 'tcp://127.0.0.1:0' AS feed FORMAT csv WITH (on_error = 'stop')",
	"SHOW TYPES",
	"SHOW TYPES FROM `stocks`",
	"DESCRIBE `SHELF-READING`",
	"SET engine = 'basic'",
	"SET `format` = 'table'",
	"SET limit = -1",
	// Dotted names of nested JSON keys (issue 29).
	"PATTERN SEQ(A a, B+ b[], C c) WHERE [geo.country] AND a.geo.country != c.geo.`zip-code` AND b[i].geo.lat > b[i-1].geo.lat AND sum(b[].geo.lat) > 1 AND avg(b[..i-1].geo.lat) < 2 RETURN a.geo.city, c.x.`from`.y",
	"PATTERN A a WHERE [geo.country = 'NO', geo.n.`len` = 3] AND a.`x..y` = 1 AND a.`.x` = 2",
}

func TestCanonicalForms(t *testing.T) {
	for _, src := range canonical {
		stmts, err := Parse(&ast.Source{Name: "<input>", Text: src})
		if err != nil {
			t.Errorf("%q: %v", src, err)
			continue
		}
		if len(stmts) != 1 {
			t.Errorf("%q: %d statements", src, len(stmts))
			continue
		}
		if got := stmts[0].String(); got != src {
			t.Errorf("String():\ngot  %s\nwant %s", got, src)
		}
		checkRoundTrip(t, src, stmts[0])
		checkSpans(t, src, stmts[0])
	}
}

func TestNormalizedForms(t *testing.T) {
	tests := []struct{ src, want string }{
		{"pattern seq(A a, B b) -- a comment\n   where /* block\n comment */ a.x ≥ 1 ∧ ¬(b.x ≠ 2) ∨ a.x = 100\n   within 10 seconds\n   return a.x AS ax, b",
			"PATTERN SEQ(A a, B b) WHERE a.x >= 1 AND NOT b.x != 2 OR a.x = 100 WITHIN 10 s RETURN a.x AS ax, b"},
		{"PATTERN SEQ(A a, B b) WHERE skip_till_any_match(a, b) { b.x <> 3 AND a.x == 1 } WITHIN 10;",
			"PATTERN SEQ(A a, B b) WHERE skip_till_any_match(a, b) { b.x != 3 AND a.x = 1 } WITHIN 10"},
		{"PATTERN SEQ(shelf a, !(counter b), exit c)\nWHERE Skip-Till-Any-Match\nAND [tag_id]\nAND a[I].x > A[i - 1].x\nWITHIN 3 Hours",
			"PATTERN SEQ(shelf a, !(counter b), exit c) WHERE Skip-Till-Any-Match AND [tag_id] AND a[i].x > A[i-1].x WITHIN 3 h"},
		{`PATTERN "x y" "a""b" WHERE "a""b".c = - 7 AND COUNT(b[]) = -(2.5) AND b.len = B.Len`,
			"PATTERN `x y` `a\"b` WHERE `a\"b`.c = -7 AND count(b[]) = -2.5 AND b.LEN = B.LEN"},
		{"load 'x' format CSV as s follow", "LOAD 'x' FOLLOW AS s FORMAT csv"},
		{"generate stocks with (Events = 5) as Stocks", "GENERATE STOCKS AS `Stocks` WITH (events = 5)"},
		{"set ENGINE = Basic", "SET engine = 'Basic'"},
		{"PATTERN A a WITHIN 5000ms", "PATTERN A a WITHIN 5000 ms"},
		{"PATTERN A a WITHIN 2 MIN", "PATTERN A a WITHIN 2 m"},
		{"PATTERN A a WITHIN 1 day", "PATTERN A a WITHIN 1 d"},
		{"PATTERN A a WHERE [x == 'v', y = -0.0]", "PATTERN A a WHERE [x = 'v', y = -0.0]"},
		{"pattern A a return a.into into `into`", "PATTERN A a RETURN a.`into` INTO `into`"},
		{"PATTERN A a RETURN a.x\n  Into \"stocks\"", "PATTERN A a RETURN a.x INTO `stocks`"},
		{"PATTERN A a WHERE a.`geo.country` = a . geo . city AND [`geo`.country] RETURN a.geo.\"zip\"",
			"PATTERN A a WHERE a.geo.country = a.geo.city AND [geo.country] RETURN a.geo.zip"},
	}
	for _, tt := range tests {
		stmts, err := Parse(&ast.Source{Name: "<input>", Text: tt.src})
		if err != nil {
			t.Errorf("%q: %v", tt.src, err)
			continue
		}
		if len(stmts) != 1 {
			t.Errorf("%q: %d statements", tt.src, len(stmts))
			continue
		}
		if got := stmts[0].String(); got != tt.want {
			t.Errorf("%q:\ngot  %s\nwant %s", tt.src, got, tt.want)
		}
		checkRoundTrip(t, tt.src, stmts[0])
		checkSpans(t, tt.src, stmts[0])
	}
}

func TestScript(t *testing.T) {
	src := ";; LOAD 'a.csv' AS a;\nSHOW STREAMS ;; PATTERN (A x; B y) WHERE x.v = ';' ;\n"
	stmts, err := Parse(&ast.Source{Name: "<input>", Text: src})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range stmts {
		got = append(got, s.String())
		sp := s.NodeSpan()
		if text := src[sp.Start:sp.End]; strings.HasSuffix(text, ";") || strings.TrimSpace(text) != text {
			t.Errorf("span of %s is %q", s, text)
		}
	}
	want := []string{"LOAD 'a.csv' AS a", "SHOW STREAMS", "PATTERN (A x; B y) WHERE x.v = ';'"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if stmts, err := Parse(&ast.Source{Text: " -- nothing\n"}); err != nil || len(stmts) != 0 {
		t.Errorf("empty script: %v, %v", stmts, err)
	}
}

func TestAST(t *testing.T) {
	const src = "PATTERN SEQ(A, ANY(B, C) b, D+ d[]) WHERE d[d.LEN-1].x = -7 AND skip_till_any_match RETURN b"
	q, err := ParseQuery(&ast.Source{Name: "<input>", Text: src})
	if err != nil {
		t.Fatal(err)
	}
	c := q.Pattern.Components
	if c[0].Var != nil || c[0].VarName() != "A" || !c[1].Any || len(c[1].Types) != 2 ||
		c[2].Closure.Kind != ast.ClosurePlus || c[2].Closure.K != 1 || !c[2].List {
		t.Errorf("components: %#v", c)
	}
	and := q.Where.(*ast.BinaryExpr)
	if and.Op != ast.OpAnd || src[and.OpPos:and.OpPos+3] != "AND" {
		t.Errorf("where: %#v", and)
	}
	cmp := and.X.(*ast.BinaryExpr)
	lit := cmp.Y.(*ast.Literal)
	if lit.Kind != ast.LitInt || lit.Int != -7 || src[lit.Span.Start:lit.Span.End] != "-7" {
		t.Errorf("literal: %#v", lit)
	}
	ref := cmp.X.(*ast.AttrRef)
	if ref.Index.Kind != ast.IndexLen || ref.Index.Offset != -1 || src[ref.Index.Span.Start:ref.Index.Span.End] != "d.LEN-1" {
		t.Errorf("index: %#v", ref.Index)
	}
	if s, ok := and.Y.(*ast.Strategy); !ok || s.Name != "skip_till_any_match" {
		t.Errorf("strategy: %#v", and.Y)
	}
	if v, ok := q.Return.Items[0].Expr.(*ast.VarRef); !ok || v.Var.Name != "b" {
		t.Errorf("return: %#v", q.Return.Items[0].Expr)
	}
}

// INTO keeps the derived stream's name with its span, apart from FROM's.
func TestIntoSpan(t *testing.T) {
	const src = "PATTERN A a FROM s RETURN a.x INTO `d s`"
	q, err := ParseQuery(&ast.Source{Text: src})
	if err != nil {
		t.Fatal(err)
	}
	if q.From.Name != "s" || q.Into.Name != "d s" || src[q.Into.Span.Start:q.Into.Span.End] != "`d s`" {
		t.Errorf("FROM %q, INTO %q spans %q", q.From.Name, q.Into.Name, src[q.Into.Span.Start:q.Into.Span.End])
	}
}

// SET keeps where its key is written, so that an unknown setting is
// reported there.
func TestSetKeySpan(t *testing.T) {
	const src = "SHOW STREAMS; SET `Limit` = 5"
	stmts, err := Parse(&ast.Source{Text: src})
	if err != nil {
		t.Fatal(err)
	}
	set := stmts[1].(*ast.Set)
	if got := src[set.KeySpan.Start:set.KeySpan.End]; got != "`Limit`" || set.Key != "limit" {
		t.Errorf("key %q spans %q", set.Key, got)
	}
}

// checkRoundTrip parses n.String() and compares the result to n, spans
// aside.
func checkRoundTrip(t testing.TB, src string, n ast.Stmt) {
	t.Helper()
	printed := n.String()
	again, err := Parse(&ast.Source{Name: "<printed>", Text: printed})
	if err != nil {
		t.Errorf("%q printed as %q, which does not parse:\n%v", src, printed, err)
		return
	}
	if len(again) != 1 {
		t.Errorf("%q printed as %q: %d statements", src, printed, len(again))
		return
	}
	if !equalIgnoringSpans(n, again[0]) {
		t.Errorf("%q printed as %q, which parses to a different tree:\n%#v\n%#v", src, printed, n, again[0])
	}
	if p2 := again[0].String(); p2 != printed {
		t.Errorf("%q printed as %q, then as %q", src, printed, p2)
	}
}

// equalIgnoringSpans compares two trees with their Span and OpPos fields
// zeroed (on copies, a and b are left alone).
func equalIgnoringSpans(a, b any) bool {
	return reflect.DeepEqual(withoutSpans(reflect.ValueOf(a)).Interface(), withoutSpans(reflect.ValueOf(b)).Interface())
}

var spanType = reflect.TypeOf(ast.Span{})

func withoutSpans(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(withoutSpans(v.Elem()))
		return p
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(withoutSpans(v.Elem()))
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(withoutSpans(v.Index(i)))
		}
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			switch {
			case f.Type == spanType, f.Name == "OpPos":
				// left zero
			default:
				out.Field(i).Set(withoutSpans(v.Field(i)))
			}
		}
		return out
	}
	return v
}

// checkSpans checks that every node's span lies inside the source and
// inside its parent's span, and that identifiers span their text.
func checkSpans(t testing.TB, src string, root ast.Node) {
	t.Helper()
	var walk func(v reflect.Value, parent ast.Span)
	walk = func(v reflect.Value, parent ast.Span) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return
			}
			if n, ok := v.Interface().(ast.Node); ok && v.Kind() == reflect.Pointer {
				sp := n.NodeSpan()
				if sp.Start < parent.Start || sp.End > parent.End || sp.Start >= sp.End {
					t.Errorf("%q: span %v of %T %s is outside %v", src, sp, n, n, parent)
					return
				}
				if id, ok := n.(*ast.Ident); ok && ast.QuoteName(id.Name) == id.Name && !ast.IsKeyword(id.Name) &&
					src[sp.Start:sp.End] != id.Name {
					t.Errorf("%q: identifier %q spans %q", src, id.Name, src[sp.Start:sp.End])
				}
				parent = sp
			}
			walk(v.Elem(), parent)
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), parent)
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				walk(v.Field(i), parent)
			}
		}
	}
	walk(reflect.ValueOf(root), ast.Span{Start: 0, End: len(src)})
}

func FuzzParse(f *testing.F) {
	for _, c := range loadConformance(f) {
		f.Add(c.Query)
	}
	for _, s := range canonical {
		f.Add(s)
	}
	for _, s := range []string{"PATTERN A a WHERE a.x = 'ab", "LOAD 'x' WITH (a = b); SET x = -1.5e3", "`x", "\"", "/*", "SHOW TYPES FROM \xff"} {
		f.Add(s)
	}
	// Issue 30: deep nesting and long statements, past the limits and up to them.
	for _, s := range []string{deep(300_000), deep(MaxDepth), "PATTERN A a WHERE " + strings.Repeat("[", 100_000),
		conjuncts(30_000), conjuncts(2_000), "PATTERN A a WHERE " + strings.Repeat("NOT ", 10_000) + "a.x > 1",
		"PATTERN A a WHERE a.x > " + strings.Repeat("- ", 10_000) + "1"} {
		f.Add(s)
	}
	// MATCH_RECOGNIZE's null tests, count(var.*) and SELECT expressions.
	for _, s := range []string{"SELECT v + 1 AS w, m.id FROM s MATCH_RECOGNIZE (MEASURES count(a.*) AS n, v IS NOT NULL AS k " +
		"ALL ROWS PER MATCH PATTERN (a) DEFINE a AS NOT v = 1 IS NULL) m",
		"SELECT * FROM s MATCH_RECOGNIZE (PATTERN (a) DEFINE a AS v" + strings.Repeat(" IS NULL", 10_000) + ")"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		src := &ast.Source{Name: "<fuzz>", Text: text}
		stmts, err := Parse(src)
		if err != nil {
			if strings.Contains(err.Error(), "internal parser error") {
				t.Fatalf("%q: %v", text, err)
			}
			return
		}
		for _, s := range stmts {
			checkRoundTrip(t, text, s)
		}
	})
}

func ExampleParse() {
	src := &ast.Source{Name: "<input>", Text: "LOAD 'ticks.csv' AS t; PATTERN SEQ(A a, B+ b[]) WHERE b[i].price > a.price within 10 seconds"}
	stmts, err := Parse(src)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range stmts {
		fmt.Println(s)
	}

	_, err = Parse(&ast.Source{Name: "<input>", Text: "PATTERN SEQ(A a) WITHIN 3 weeks"})
	fmt.Println(err)
	// Output:
	// LOAD 'ticks.csv' AS t
	// PATTERN SEQ(A a, B+ b[]) WHERE b[i].price > a.price WITHIN 10 s
	// <input>:1:27: unknown time unit 'weeks'; units are ms, s, m, h or d
	//     PATTERN SEQ(A a) WITHIN 3 weeks
	//                               ^
}
