package grammar_test

import (
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/internal/testkit"
)

func parseMR(t *testing.T, text string) *ast.MatchRecognize {
	t.Helper()
	stmts, err := grammar.Parse(&ast.Source{Name: "<test>", Text: text})
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	mr, ok := stmts[0].(*ast.MatchRecognize)
	if !ok {
		t.Fatalf("%s: got %T", text, stmts[0])
	}
	return mr
}

// TestMatchRecognizeConformanceParses parses every conformance query, and
// String() of each parses back to the same String().
func TestMatchRecognizeConformanceParses(t *testing.T) {
	cases := testkit.ReadJSONL[struct{ Name, Query string }](t, "testdata/match_recognize.jsonl")
	n := len(cases)
	for _, c := range cases {
		first := parseMR(t, c.Query).String()
		if again := parseMR(t, first).String(); again != first {
			t.Errorf("%s: String() does not round-trip:\n%s\n%s", c.Name, first, again)
		}
	}
	if n != 26 {
		t.Fatalf("read %d cases, want 26", n)
	}
}

func TestMatchRecognizeString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT * FROM s MATCH_RECOGNIZE (PATTERN (a b+? (c | d){2,3} PERMUTE(e, f) {- g -} ^ $ h{,4}) DEFINE b AS b.price > PREV(b.price, 2))",
			"SELECT * FROM S MATCH_RECOGNIZE (ONE ROW PER MATCH PATTERN (A B+? (C | D){2,3} PERMUTE(E, F) {- G -} ^ $ H{0,4}) DEFINE B AS B.PRICE > PREV(B.PRICE, 2))"},
		{"select `x`.id as i from t match_recognize (partition by p order by id desc measures running last(v) as l, count(*) as c all rows per match with unmatched rows after match skip to first a pattern (() | a*) within 5 subset u = (a) define a as not v < -1) as `x`",
			"SELECT `x`.ID AS I FROM T MATCH_RECOGNIZE (PARTITION BY P ORDER BY ID DESC MEASURES RUNNING LAST(V) AS L, COUNT(*) AS C ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH SKIP TO FIRST A PATTERN (() | A*) WITHIN 5 SUBSET U = (A) DEFINE A AS NOT V < -1) AS `x`"},
		{"SELECT * FROM s MATCH_RECOGNIZE (PATTERN (a) DEFINE a AS true) m INTO Downs",
			"SELECT * FROM S MATCH_RECOGNIZE (ONE ROW PER MATCH PATTERN (A) DEFINE A AS true) AS M INTO Downs"},
		{"SELECT * FROM s MATCH_RECOGNIZE (MEASURES count(a.*) AS n, v = 1 is not null AS k, (v is null) = true AS b PATTERN (a) DEFINE a AS not v is null is null)",
			"SELECT * FROM S MATCH_RECOGNIZE (MEASURES COUNT(A.*) AS N, V = 1 IS NOT NULL AS K, (V IS NULL) = true AS B ONE ROW PER MATCH PATTERN (A) DEFINE A AS NOT V IS NULL IS NULL)"},
		{"SELECT m.id, v + 1 AS w, (v IS NULL) AS n FROM s MATCH_RECOGNIZE (ALL ROWS PER MATCH PATTERN (a) DEFINE a AS true) m",
			"SELECT M.ID, V + 1 AS W, V IS NULL AS N FROM S MATCH_RECOGNIZE (ALL ROWS PER MATCH PATTERN (A) DEFINE A AS true) AS M"},
		{"SELECT * FROM s MATCH_RECOGNIZE (PATTERN (a) DEFINE a AS true) into d2",
			"SELECT * FROM S MATCH_RECOGNIZE (ONE ROW PER MATCH PATTERN (A) DEFINE A AS true) INTO d2"},
	} {
		if got := parseMR(t, tc.in).String(); got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.in, got, tc.want)
		}
		if got := parseMR(t, tc.want).String(); got != tc.want {
			t.Errorf("round trip of %s gives %s", tc.want, got)
		}
	}
}

func TestMatchRecognizeErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) )", "1:46: expected DEFINE, found ')'"},
		{"SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A**) DEFINE A AS true)", "1:45: a quantifier cannot follow a quantifier"},
		{"SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A{3,2}) DEFINE A AS true)", "1:47: a quantifier's upper bound 2 is below its lower bound 3"},
		{"SELECT * FROM t MATCH_RECOGNIZE (MEASURES foo(x) AS y PATTERN (A) DEFINE A AS true)", "1:43: unknown function 'foo'"},
		{"SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A |) DEFINE A AS true) extra stuff", "1:72: expected end of statement, found 'stuff'"},
		{"SELECT FROM", "1:12: expected FROM, found end of input"},
		{"SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS v IS 5)", "1:63: expected NULL, found '5'"},
		{"SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS v IS NOT)", "1:66: expected NULL, found ')'"},
		{"SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS true) INTO", "1:68: expected a stream name, found end of input"},
	} {
		_, err := grammar.Parse(&ast.Source{Name: "<test>", Text: tc.in})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.in, err, tc.want)
		}
	}
}
