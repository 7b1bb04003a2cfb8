package session_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLiveRulesEventTime: on a live stream with a slack and punctuation,
// a rulebook's rules read the stream as the stream's event time orders
// it: events out of order within the slack reordered, late ones skipped,
// a punctuation line releasing the matches that wait on time (a negated
// end). Each rule's lines are what it writes alone, led by its name.
func TestLiveRulesEventTime(t *testing.T) {
	t.Parallel() // its sessions read their own pipes
	rules := append([]string{
		"PATTERN SEQ(A a, !(B n)) WHERE a.x > 50 WITHIN 6 RETURN a.seq, a.x",
		"PATTERN SEQ(C a, !(A n), B b) WHERE [x] WITHIN 8",
	}, liveRules...)
	in := disordered(3000, 4)
	var book strings.Builder
	book.WriteString("SET format = csv; LOAD '-' AS s WITH (slack = 4);")
	for i, q := range rules {
		fmt.Fprintf(&book, "RULE r%d: %s;\n", i, q)
	}
	out := runPiped(t, book.String(), in, 512)
	// The rules' lines interleave as the same queries' lines do, each
	// released at the position (event or punctuation) that released it.
	var plain strings.Builder
	plain.WriteString("SET format = csv; LOAD '-' AS s WITH (slack = 4);")
	for _, q := range rules {
		plain.WriteString(q + ";\n")
	}
	if named, want := lessNames(out), runPiped(t, plain.String(), in, 512); named != want {
		t.Errorf("the rules' lines, less their names:\n%.3000s\nthe queries':\n%.3000s", named, want)
	}
	got := byRule(out, "csv", len(rules))
	for i, q := range rules {
		alone := runPiped(t, "SET format = csv; LOAD '-' AS s WITH (slack = 4); "+q+";", in, 512)
		var want strings.Builder
		for j, line := range strings.SplitAfter(alone, "\n") {
			switch {
			case line == "":
			case j == 0:
				want.WriteString("rule," + line)
			default:
				want.WriteString(fmt.Sprint("r", i) + "," + line)
			}
		}
		if got[i] != want.String() {
			t.Errorf("rule r%d wrote\n%.2000s\nalone, with its name:\n%.2000s", i, got[i], want.String())
		}
		if i < 2 && strings.Count(want.String(), "\n") < 2 {
			t.Errorf("rule r%d has no match alone: the stream does not try it", i)
		}
	}
}

// lessNames is a rulebook's CSV lines less their rules' names (their
// first cells).
func lessNames(out string) string {
	var named strings.Builder
	for _, line := range strings.SplitAfter(out, "\n") {
		_, rest, _ := strings.Cut(line, ",")
		named.WriteString(rest)
	}
	return named.String()
}

// disordered is a random stream of types A, B and C as CSV, its events
// written out of ts order by up to about slack ticks (some more: late),
// with a punctuation line (",ts,") now and then at the time the stream
// has reached.
func disordered(events int, slack int) string {
	r := rand.New(rand.NewPCG(5, 17))
	var in strings.Builder
	in.WriteString("type,ts,x\n")
	pending := make([]int, 0, 8) // the ts drawn, not written yet
	top := 0
	for i := range events {
		pending = append(pending, i)
		if len(pending) < 6 && i < events-1 {
			continue
		}
		// Any pending event may go next: one that waited too long is late.
		k := r.IntN(len(pending))
		ts := pending[k]
		pending = append(pending[:k], pending[k+1:]...)
		fmt.Fprintf(&in, "%c,%d,%d\n", "ABC"[r.IntN(3)], ts, r.IntN(100))
		top = max(top, ts)
		if r.IntN(40) == 0 {
			fmt.Fprintf(&in, ",%d,\n", top-slack)
		}
	}
	for _, ts := range pending {
		fmt.Fprintf(&in, "%c,%d,%d\n", "ABC"[r.IntN(3)], ts, r.IntN(100))
	}
	return in.String()
}
