package session_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestRulesAsAlone: a script's rules print, rule by rule, what each
// prints as a query of its own, with the rule's name as the first column.
func TestRulesAsAlone(t *testing.T) {
	queries := []string{
		"PATTERN SEQ(stock1 a, stock2 b) WHERE a.price > 90 AND b.price < a.price - 40 WITHIN 30 RETURN a.seq, b.price",
		"PATTERN SEQ(stock2 a, !(stock3 n), stock4 b) WHERE a.price >= 97 AND n.price > a.price WITHIN 25",
		"PATTERN SEQ(stock7 a, stock8+ b[], stock9 c) WHERE a.volume = 100 AND b[i].price > a.price WITHIN 9 RETURN a, count(b[]) AS n, c.seq",
		"PATTERN SEQ(stock3 a, stock3 b) WHERE skip-till-next-match AND a.price < 5 AND b.price > 95 WITHIN 50",
	}
	for _, format := range []string{"csv", "jsonl"} {
		var rules, alone strings.Builder
		fmt.Fprintf(&rules, "SET format = %s;\n", format)
		for i, q := range queries {
			fmt.Fprintf(&rules, "RULE r%d: %s;\n", i, q)
		}
		s, stdout, _ := newSession(t)
		if err := exec(t, s, rules.String()); err != nil {
			t.Fatal(err)
		}
		got := stdout.String()
		for i, q := range queries {
			s, stdout, _ := newSession(t)
			if err := exec(t, s, fmt.Sprintf("SET format = %s; %s", format, q)); err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.SplitAfter(stdout.String(), "\n") {
				switch {
				case line == "":
				case format == "jsonl":
					alone.WriteString(`{"rule":"` + fmt.Sprint("r", i) + `",` + line[1:])
				case strings.HasPrefix(line, "a"): // the header
					alone.WriteString("rule," + line)
				default:
					alone.WriteString(fmt.Sprint("r", i) + "," + line)
				}
			}
		}
		if got != alone.String() {
			t.Errorf("%s: rules printed\n%s\nalone, with their names:\n%s", format, got, alone.String())
		}
	}
}

// TestRulesWorkers: a rules file run with SET workers = 2, its rules
// shared among two passes in parallel, prints byte for byte what it
// prints on one: the rules one after another, each its rows, its
// summary, its limit and its error.
func TestRulesWorkers(t *testing.T) {
	rules, err := os.ReadFile("../testdata/repl/rules.sase")
	if err != nil {
		t.Fatal(err)
	}
	var want [2]string
	for _, workers := range []int{1, 2} {
		s, stdout, stderr := newSession(t)
		err := exec(t, s, fmt.Sprintf("SET workers = %d;\n%s", workers, rules))
		_, notes, _ := strings.Cut(stderr.String(), "\n") // after SET's own note
		// EXPLAIN of the 4-rule book says how 2 workers share its rules;
		// all else is as on one.
		out, split := stdout.String(), "Parallel: 2 passes, each reading every event: rules 1-2, rules 3-4\n"
		if workers == 2 {
			if strings.Count(out, split) != 1 {
				t.Errorf("workers = 2: EXPLAIN does not say the split %q once:\n%s", split, out)
			}
			out = strings.Replace(out, split, "", 1)
		}
		got := [2]string{out, fmt.Sprint(notes, err)}
		if workers == 1 {
			want = got
			continue
		}
		if got != want {
			t.Errorf("workers = %d printed\n%s\n%s\non 1:\n%s\n%s", workers, got[0], got[1], want[0], want[1])
		}
	}
}
