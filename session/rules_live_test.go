package session_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// liveRules are rules of every kind on the piped stream of ruleStream:
// a filter the index reads, a negation, a closure, skip-till-next-match,
// one of an unseen type.
var liveRules = []string{
	"PATTERN SEQ(A a, B b) WHERE a.x > 80 AND b.x < a.x - 30 WITHIN 20 RETURN a.seq, b.x",
	"PATTERN SEQ(B a, !(C n), A b) WHERE a.x >= 90 AND n.x > a.x WITHIN 15",
	"PATTERN SEQ(C a, A+ b[], B c) WHERE a.x = 7 AND b[i].x > a.x WITHIN 9 RETURN a, count(b[]) AS n, c.seq",
	"PATTERN SEQ(A a, A b) WHERE skip-till-next-match AND a.x < 5 AND b.x > 95 WITHIN 40",
	"PATTERN SEQ(D a, A b) WITHIN 5",
}

// ruleStream is a random stream of types A, B and C, as CSV.
func ruleStream(events int) string {
	r := rand.New(rand.NewPCG(3, 31))
	var in strings.Builder
	in.WriteString("type,ts,x\n")
	for i := range events {
		fmt.Fprintf(&in, "%c,%d,%d\n", "ABC"[r.IntN(3)], i, r.IntN(100))
	}
	return in.String()
}

// TestLiveRulesAsAlone: the rules on a live stream run as one rulebook,
// and each rule's lines are, byte for byte and in their order, what it
// writes as a query of its own on the stream, led by its name.
func TestLiveRulesAsAlone(t *testing.T) {
	in := ruleStream(20000)
	for _, format := range []string{"csv", "jsonl"} {
		var rules strings.Builder
		fmt.Fprintf(&rules, "SET format = %s; LOAD '-' AS s;", format)
		for i, q := range liveRules {
			fmt.Fprintf(&rules, "RULE r%d: %s;\n", i, q)
		}
		got := byRule(runPiped(t, rules.String(), in, 4096), format, len(liveRules))
		for i, q := range liveRules {
			alone := runPiped(t, fmt.Sprintf("SET format = %s; LOAD '-' AS s; %s;", format, q), in, 4096)
			var want strings.Builder
			for j, line := range strings.SplitAfter(alone, "\n") {
				switch {
				case line == "":
				case format == "jsonl":
					want.WriteString(`{"rule":"` + fmt.Sprint("r", i) + `",` + line[1:])
				case j == 0: // the header
					want.WriteString("rule," + line)
				default:
					want.WriteString(fmt.Sprint("r", i) + "," + line)
				}
			}
			if got[i] != want.String() {
				t.Errorf("%s: rule r%d wrote\n%.2000s\nalone, with its name:\n%.2000s", format, i, got[i], want.String())
			}
		}
	}
}

// byRule splits the output of n rules by rule: a CSV's headers come
// first, one per rule in rule order.
func byRule(out, format string, n int) []string {
	got := make([]string, n)
	for j, line := range strings.SplitAfter(out, "\n") {
		switch {
		case line == "":
		case format == "csv" && j < n:
			got[j] += line
		default:
			var i int
			if format == "jsonl" {
				fmt.Sscanf(line, `{"rule":"r%d"`, &i)
			} else {
				fmt.Sscanf(line, "r%d,", &i)
			}
			got[i] += line
		}
	}
	return got
}
