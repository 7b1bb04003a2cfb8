package session_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/internal/teststream"
)

// TestLiveRulebookWorkers runs random rulebooks (the differential
// generator's queries that have a window, as a live stream needs) on a
// piped stream: on 2 and 3 workers the book writes, byte for byte, what
// it writes on one, every rule's lines in the stream's line order, and
// each rule's lines are what it writes alone on the stream, led by its
// name.
func TestLiveRulebookWorkers(t *testing.T) {
	t.Parallel() // its sessions read their own pipes
	seeds := 16
	if testing.Short() {
		seeds = 6
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			liveRulebookCase(t, seed)
		})
	}
}

// liveRulebookCase is one seed's case of TestLiveRulebookWorkers.
func liveRulebookCase(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 44))
	csv := randquery.Generate(r, randquery.Strategies(), randquery.Long()).StreamCSV
	stream := teststream.CSV(t, "s", csv)
	n := 2 + r.IntN(12)
	if seed%4 == 1 {
		n = 30 + r.IntN(30)
	}
	var rules []string
	for len(rules) < n {
		q := randquery.Generate(r, randquery.Strategies()).Query
		if !strings.Contains(q, " WITHIN ") {
			continue
		}
		if _, err := sase.Compile(q, stream); err != nil {
			continue // a strategy's rules reject some random queries
		}
		rules = append(rules, q)
	}
	var book strings.Builder
	for i, q := range rules {
		fmt.Fprintf(&book, "RULE r%d: %s;\n", i, q)
	}
	run := func(script string) string {
		return runPiped(t, "SET format = csv; LOAD '-' AS s; "+script, csv, 64)
	}
	one := run("SET workers = 1; " + book.String())
	for _, workers := range []int{2, 3} {
		if got := run(fmt.Sprintf("SET workers = %d; %s", workers, book.String())); got != one {
			t.Fatalf("seed %d: on %d workers the rulebook wrote\n%s\non one:\n%s\nrules:\n%s\nstream:\n%s", seed, workers, got, one, book.String(), csv)
		}
	}
	got := byRule(one, "csv", len(rules))
	for i, q := range rules {
		var want strings.Builder
		for j, line := range strings.SplitAfter(run(q+";"), "\n") {
			switch {
			case line == "":
			case j == 0: // the header
				want.WriteString("rule," + line)
			default:
				fmt.Fprintf(&want, "r%d,%s", i, line)
			}
		}
		if got[i] != want.String() {
			t.Fatalf("seed %d: rule r%d (%s) wrote\n%s\nalone, with its name:\n%s", seed, i, q, got[i], want.String())
		}
	}
}
