package rowpattern_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRowTestAgrees runs DEFINEs of the forms compiled to read the
// partition's columns directly (col op PREV(col), col op constant, with a
// number added, multiplied, divided), and
// again inside an AND with true, which the general expressions evaluate:
// both must give the same rows, nulls and mixed ints and floats included.
func TestRowTestAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var b strings.Builder
	b.WriteString("p,price")
	cells := []string{"", "1", "2", "2.0", "2.5", "3", "x"}
	for range 300 {
		fmt.Fprintf(&b, ";%d,%s", r.IntN(2), cells[r.IntN(len(cells))])
	}
	for _, defs := range [][3]string{
		{"price > 1", "B.price > PREV(B.price)", "C.price < PREV(C.price)"},
		{"2 <= A.price", "PREV(price) < price", "price <> 2.5"},
		{"price = PREV(price, 2)", "B.price >= PREV(B.price, 0)", "PREV(C.price, 3) <> C.price"},
		{"price < 2.5", "price = 2", "price <= PREV(price)"},
		{"price > PREV(price) + 1", "2 * B.price >= PREV(B.price, 2) - 0.5", "C.price / 2 <> 1"},
		{"1 - price < PREV(price) % 2", "B.price + 0.5 > 3", "PREV(C.price) / 0 = C.price"},
	} {
		var outs [2]string
		for i, wrap := range []string{"%s", "(%s) AND true"} {
			define := fmt.Sprintf("DEFINE A AS "+wrap+", B AS "+wrap+", C AS "+wrap,
				defs[0], defs[1], defs[2])
			outs[i] = run(t, b.String(), "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY p ORDER BY ts MEASURES MATCH_NUMBER() AS n, CLASSIFIER() AS c ALL ROWS PER MATCH "+
				"PATTERN (A B+ C | A C*? B) "+define+")")
		}
		if outs[0] != outs[1] || outs[0] == "" {
			t.Errorf("%v: direct\n%s\ngeneral\n%s", defs, outs[0], outs[1])
		}
	}
}

// TestStartRowAgrees runs DEFINEs that read the row of a pattern's first
// variable, which a DEFINE without history reads at the match's start
// row, and again with LAST(S.price) for S.price (the same value), which
// makes the matcher keep the match's labels and find S's last row among
// them: both must give the same rows, also on patterns whose first
// variable's row is not (only) the start row, where the start row is not
// the answer.
func TestStartRowAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	cells := []string{"", "1", "2", "2.5", "3", "4", "6"}
	patterns := []string{
		"S (U | D)*? X", "S (U | D)* X", "S (U D?)* X", "^ S {- U -}* D? X", "S (U X | D X)+", "S (D | U)* X{1,2}",
		"S+ (D | U)? X", "(S | U) D* X", "U? S D* X", "(S U)+ D? X", "PERMUTE(S, U, D) X", "S U* S D? X",
	}
	defines := []string{
		"U AS U.price > PREV(U.price), D AS D.price < PREV(D.price), X AS X.price < S.price - 1",
		"U AS U.price >= S.price, D AS D.price < S.price AND (PREV(S.price) IS NULL OR D.price <> PREV(S.price)), X AS X.price <> NEXT(S.price) AND CLASSIFIER() = 'X'",
		"S AS S.price > 1, U AS price < T.price + 1, D AS D.price >= T.price + 1, X AS X.price = S.price",
	}
	for k := range 3 {
		var b strings.Builder
		b.WriteString("p,price")
		for range 80 {
			fmt.Fprintf(&b, ";%d,%s", r.IntN(2), cells[r.IntN(len(cells))])
		}
		for _, pattern := range patterns {
			for _, define := range defines {
				skip := []string{"PAST LAST ROW", "TO NEXT ROW", "TO LAST X"}[k]
				rows := []string{"ONE ROW PER MATCH", "ALL ROWS PER MATCH"}[k%2]
				var outs [2]string
				for i, d := range []string{define, strings.NewReplacer("S.price", "LAST(S.price)", "T.price", "LAST(T.price)").Replace(define)} {
					outs[i] = run(t, b.String(), "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY p ORDER BY ts "+
						"MEASURES MATCH_NUMBER() AS n, CLASSIFIER() AS c, S.price AS s, LAST(X.price) AS x "+rows+
						" AFTER MATCH SKIP "+skip+" PATTERN ("+pattern+") SUBSET T = (S) DEFINE "+d+")")
				}
				if outs[0] != outs[1] {
					t.Errorf("%s / %s / %s: start row\n%s\nmatch's labels\n%s", pattern, define, skip, outs[0], outs[1])
				}
			}
		}
	}
}
