package randquery_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/source"
)

// TestNestedCompiles: every nested pattern the generator makes compiles
// (the differential test takes a compile error for a bug), and together
// they use every construct of §9, three groups deep.
func TestNestedCompiles(t *testing.T) {
	constructs := []string{"SEQ(", "AND(", "OR(", ")?", "? v", "*", "{0,2}", "{2,3}", "{2}", "!", "[sym", "has(", "WITHIN", "ANY("}
	seen := map[string]int{}
	deep := 0
	for seed := range uint64(400) {
		c := randquery.Generate(rand.New(rand.NewPCG(seed, 3)), randquery.Nested())
		stream, err := source.LoadCSV(strings.NewReader(c.StreamCSV), "nested.csv", source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sase.Compile(c.Query, stream); err != nil {
			t.Fatalf("seed %d: %v\nquery: %s", seed, err, c.Query)
		}
		for _, s := range constructs {
			if strings.Contains(c.Query, s) {
				seen[s]++
			}
		}
		if depth(c.Query) >= 3 {
			deep++
		}
	}
	for _, s := range constructs {
		if seen[s] == 0 {
			t.Errorf("no pattern uses %q", s)
		}
	}
	if deep < 40 {
		t.Errorf("%d of 400 patterns nest three groups deep", deep)
	}
}

// depth is how deep the pattern's groups nest.
func depth(q string) int {
	d, most := 0, 0
	for i := range len(q) {
		switch {
		case strings.HasPrefix(q[i:], "SEQ("), strings.HasPrefix(q[i:], "AND("), strings.HasPrefix(q[i:], "OR("), strings.HasPrefix(q[i:], "ANY("):
			if !strings.HasPrefix(q[i:], "ANY(") {
				d++
				most = max(most, d)
			}
		case q[i] == ')' && d > 0 && !anyBefore(q[:i]):
			d--
		}
	}
	return most
}

// anyBefore reports whether the ')' closes an ANY( type list.
func anyBefore(q string) bool {
	i := strings.LastIndex(q, "(")
	return i >= 3 && q[i-3:i] == "ANY"
}
