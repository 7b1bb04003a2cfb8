package exec_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	recepLong = flag.Bool("recep.long", false, "run the recep differential test for a minute instead of a few seconds")
	recepSeed = flag.Uint64("recep.seed", 0, "replay one recep differential-test seed")
)

// TestReCEPDifferential compares recep with basic on random streams and
// queries aimed at ReCEP's own paths: constant filters on every kind of
// element, negations narrowed by the search or checked per candidate,
// closures counted from their buffers, partitions with events lacking the
// attribute, and streams long enough for the buffers to be pruned.
func TestReCEPDifferential(t *testing.T) {
	budget := 4 * time.Second
	if *recepLong {
		budget = time.Minute
	}
	deadline := time.Now().Add(budget)
	n := 0
	for seed := uint64(1); time.Now().Before(deadline); seed++ {
		if *recepSeed != 0 {
			seed, deadline = *recepSeed, time.Now()
		}
		c := recepCase(seed)
		want, err := runCase(c, "basic")
		if err != nil {
			t.Fatalf("seed %d: basic: %v\nquery: %s", seed, err, c.Query)
		}
		got, err := runCase(c, "recep")
		if err != nil {
			t.Fatalf("seed %d: recep: %v\nquery: %s", seed, err, c.Query)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d (replay with -recep.seed %d): recep differs from basic\nquery: %s\nstream:\n%s\nrecep: %d %v\nbasic: %d %v",
				seed, seed, c.Query, c.StreamCSV, len(got), got, len(want), want)
		}
		n++
	}
	t.Logf("%d random cases agree", n)
}

func recepCase(seed uint64) conformanceCase {
	r := rand.New(rand.NewPCG(seed, 0x7ecef))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	types := []string{"A", "B", "C", "D"}

	var csv strings.Builder
	csv.WriteString("type,ts,price,vol,sym,id\n")
	holes := r.IntN(3) == 0
	cell := func(s string) string {
		if holes && r.IntN(6) == 0 {
			return ""
		}
		return s
	}
	events := 15 + r.IntN(40)
	if r.IntN(5) == 0 {
		events = 150 + r.IntN(250) // long enough to prune and compact buffers
	}
	ts := 1
	for range events {
		ts += r.IntN(3)
		fmt.Fprintf(&csv, "%s,%d,%s,%s,%s,%s\n", pick(types...), ts,
			cell(fmt.Sprint(1+r.IntN(20))), cell(fmt.Sprint(r.IntN(8))),
			cell(pick("x", "y", "z")), cell(pick("1", "2", "3", "2.0")))
	}

	n := 1 + r.IntN(5)
	kinds := make([]byte, n)
	for i := range kinds {
		kinds[i] = "sssssnncc"[r.IntN(9)]
	}
	for i := range kinds {
		if kinds[i] == 'c' && ((i > 0 && kinds[i-1] != 's') || (i+1 < n && kinds[i+1] != 's')) {
			kinds[i] = 's'
		}
	}
	if kinds[0] == 'c' && kinds[n-1] == 'c' {
		kinds[n-1] = 's'
	}
	if !slices.Contains(kinds, 's') {
		kinds[r.IntN(n)] = 's'
	}
	var comps, singles, conds []string
	for i, k := range kinds {
		v := fmt.Sprintf("v%d", i)
		typ := pick(types...)
		if r.IntN(5) == 0 {
			typ = "ANY(" + pick(types...) + ", " + pick(types...) + ")"
		}
		switch k {
		case 's':
			comps = append(comps, typ+" "+v)
			singles = append(singles, v)
			if r.IntN(3) == 0 {
				conds = append(conds, fmt.Sprintf("%s.price > %d", v, r.IntN(15)))
			}
		case 'n':
			comps = append(comps, "!"+typ+" "+v)
		case 'c':
			comps = append(comps, typ+pick("+", "^2", "^3")+" "+v+"[]")
		}
	}
	for i, k := range kinds {
		v := fmt.Sprintf("v%d", i)
		switch k {
		case 'n':
			switch r.IntN(5) {
			case 0:
				conds = append(conds, fmt.Sprintf("%s.price > %d", v, r.IntN(15)))
			case 1:
				conds = append(conds, fmt.Sprintf("%s.price > %s.price", v, pick(singles...)))
			case 2:
				conds = append(conds, fmt.Sprintf("%s.vol < %s.vol", v, singles[len(singles)-1]))
			case 3:
				conds = append(conds, fmt.Sprintf("%s.sym = 'y'", v))
			}
		case 'c':
			switch r.IntN(5) {
			case 0:
				conds = append(conds, fmt.Sprintf("%s[i].price > %d", v, r.IntN(12)))
			case 1:
				conds = append(conds, fmt.Sprintf("%s[i].price > %s[i-1].price", v, v))
			case 2:
				conds = append(conds, fmt.Sprintf("%s[i].vol > %s.vol", v, pick(singles...)))
			case 3:
				conds = append(conds, fmt.Sprintf("%s[i].price >= avg(%s[..i-1].price)", v, v))
			}
			if r.IntN(3) == 0 {
				conds = append(conds, fmt.Sprintf("count(%s[]) <= %d", v, 2+r.IntN(4)))
			}
		}
	}
	for i := r.IntN(3); i > 0; i-- {
		a, b := pick(singles...), pick(singles...)
		conds = append(conds, pick(
			fmt.Sprintf("%s.price < %s.price + %d", a, b, r.IntN(6)),
			fmt.Sprintf("%s.vol != %s.vol", a, b),
			fmt.Sprintf("(%s.price > 10 OR %s.sym = 'x')", a, b)))
	}
	if r.IntN(2) == 0 {
		conds = append(conds, pick("[sym]", "[id]", "[sym, id]", "[sym = 'x']", "[id] AND [sym = 'y']", "[vol]"))
	}
	q := "PATTERN SEQ(" + strings.Join(comps, ", ") + ")"
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	if kinds[0] == 'c' || kinds[n-1] == 'c' || r.IntN(5) > 0 {
		q += fmt.Sprintf(" WITHIN %d", r.IntN(15))
	}
	return conformanceCase{Name: fmt.Sprintf("recep-diff-%d", seed), StreamCSV: csv.String(), Query: q}
}
