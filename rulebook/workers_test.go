package rulebook_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/rulebook"
	"github.com/sase-cep/sase/source"
)

// TestSplitShares: a split's passes take consecutive rules, every rule
// once, balanced by the types each reads (a contiguity rule reads all 4).
func TestSplitShares(t *testing.T) {
	const csv = "type,ts,x\nA,1,1\nB,2,5\nC,3,0\nD,4,6\n"
	stream, err := source.LoadCSV(strings.NewReader(csv), "s.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const (
		two    = "PATTERN SEQ(A a, B b)"
		one    = "PATTERN SEQ(A a, A b)"
		strict = "PATTERN SEQ(A a, B b) WHERE strict-contiguity"
	)
	for _, tc := range []struct {
		rules   []string
		workers int
		want    string
	}{
		{[]string{two, two, two, two}, 2, "[[0 1] [2 3]]"},
		{[]string{strict, one, one, one, one}, 2, "[[0] [1 2 3 4]]"},
		{[]string{one, one, one, one, strict}, 2, "[[0 1 2 3] [4]]"},
		{[]string{one, two, strict, one, two, one}, 3, "[[0 1] [2] [3 4 5]]"},
		{[]string{two, two, two}, 5, "[[0] [1] [2]]"},
		{[]string{two, two, two}, 1, "[]"},
	} {
		var rules []rulebook.Rule
		for _, text := range tc.rules {
			q, err := sase.Compile(text, stream)
			if err != nil {
				t.Fatal(err)
			}
			rules = append(rules, rulebook.Rule{Query: q})
		}
		split := rulebook.New(stream.Schema, rules).Split(tc.workers)
		if got := fmt.Sprint(split.Shares()); got != tc.want {
			t.Errorf("%q on %d workers: %s, want %s", tc.rules, tc.workers, got, tc.want)
		}
	}
}

// TestAutoWorkers: workers = auto splits a book only at AutoRules rules a
// pass, on as many passes as the CPUs at most.
func TestAutoWorkers(t *testing.T) {
	stream := bench.Stocks(10, 0)()
	for _, n := range []int{1, rulebook.AutoRules - 1, 2*rulebook.AutoRules + 1} {
		rules := make([]rulebook.Rule, n)
		for i, text := range bench.Rules(n) {
			q, err := sase.Compile(text, stream)
			if err != nil {
				t.Fatal(err)
			}
			rules[i] = rulebook.Rule{Query: q}
		}
		want := min(runtime.NumCPU(), max(1, n/rulebook.AutoRules))
		if got := rulebook.New(stream.Schema, rules).AutoWorkers(); got != want {
			t.Errorf("%d rules on %d CPUs: %d workers, want %d", n, runtime.NumCPU(), got, want)
		}
	}
}
