package rowpattern_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRowTestAgrees runs DEFINEs of the forms compiled to read the
// partition's columns directly (col op PREV(col), col op constant), and
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
