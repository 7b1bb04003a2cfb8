package session_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestIntoRulesAsAlone: a script whose INTO rules run in the rulebook
// with its other rules prints, byte for byte, what it prints with each
// INTO rule run alone (written without `RULE name:`), but for the INTO
// rules' summaries, which name the rule: every rule's rows, the notes,
// the derived streams as later rules and queries read them (each event,
// its ts and seq). Rules and queries read a derived stream before and
// after the rules that write it, in the same run of rules and after it;
// a rule on another stream writes into one too.
func TestIntoRulesAsAlone(t *testing.T) {
	const (
		ab  = "PATTERN SEQ(stock1 a, stock2 b) WHERE a.price > 90 AND b.price < a.price - 40 WITHIN 30 RETURN a.seq, b.price"
		neg = "PATTERN SEQ(stock2 a, !(stock3 n), stock4 b) WHERE a.price >= 97 AND n.price > a.price WITHIN 25 RETURN a.price AS p, b.seq AS bs"
		run = "PATTERN SEQ(stock7 a, stock8+ b[], stock9 c) WHERE a.volume < 300 AND b[i].price > a.price WITHIN 9 RETURN count(b[]) AS p, c.price AS q"
		low = "PATTERN SEQ(stock1 a, stock2 b) WHERE a.price > 95 AND b.price < 10 WITHIN 30 RETURN b.price AS p"
		one = "PATTERN stock5 a WHERE a.price > 98 RETURN a.price AS p, a.volume AS v"
	)
	scripts := map[string]string{
		"two into one stream, read by a rule and a query": `
RULE r0: ` + ab + `;
RULE i1: ` + neg + ` INTO d;
RULE r1: PATTERN SEQ(stock3 a, stock3 b) WHERE skip-till-next-match AND a.price < 5 AND b.price > 95 WITHIN 50;
RULE i2: ` + low + ` INTO d;
RULE c: PATTERN SEQ(d x, d y) FROM d WITHIN 20 RETURN x.p, y.p;
PATTERN d x FROM d;`,
		"into two streams, each read by rules": `
RULE i1: ` + run + ` INTO d;
RULE i2: ` + one + ` INTO e;
RULE r0: ` + ab + `;
RULE i3: ` + low + ` INTO e;
RULE c1: PATTERN SEQ(e x, e y) FROM e WHERE y.p > x.p WITHIN 50 RETURN x.seq, y.seq;
RULE c2: PATTERN d x FROM d;
RULE c3: PATTERN e x FROM e WHERE x.p > 50;
RULE r1: ` + ab + `;
PATTERN e x FROM e;`,
		"read before it is written": `
RULE c: PATTERN d x FROM d;
RULE r0: ` + ab + `;
RULE i1: ` + one + ` INTO d;
RULE r1: ` + neg + `;
PATTERN SEQ(d x, d y) FROM d WITHIN 30;`,
		"into a stream an earlier query made": `
` + low + ` INTO d;
RULE i1: ` + one + ` INTO d;
RULE r0: ` + ab + `;
RULE i2: ` + neg + ` INTO d;
PATTERN d x FROM d;`,
		"from another stream into one the rules write": `
GENERATE STOCKS AS t WITH (seed = 7, events = 2000);
RULE i1: PATTERN stock5 a FROM stocks WHERE a.price > 98 RETURN a.price AS p INTO d;
RULE r0: PATTERN SEQ(stock1 a, stock2 b) FROM stocks WHERE b.price < a.price - 40 WITHIN 30;
RULE i2: PATTERN stock5 a FROM t WHERE a.price > 90 RETURN a.price AS p INTO d;
RULE r1: PATTERN SEQ(stock1 a, stock2 b) FROM t WHERE b.price < a.price - 40 WITHIN 30;
PATTERN d x FROM d;`,
		"under a limit, which INTO rules do not have": `
SET limit = 3;
RULE r0: ` + ab + `;
RULE i1: ` + neg + ` INTO d;
RULE r1: ` + neg + `;
SET limit = 0;
PATTERN d x FROM d;`,
	}
	intoRule := regexp.MustCompile(`(?m)^RULE (i\d): (.* INTO \w+;)$`)
	for name, script := range scripts {
		for _, workers := range []int{1, 2} {
			for _, format := range []string{"csv", "jsonl"} {
				prelude := fmt.Sprintf("SET workers = %d; SET format = %s;", workers, format)
				s, stdout, stderr := newSession(t)
				err := exec(t, s, prelude+script)
				got := [3]string{stdout.String(), stderr.String(), fmt.Sprint(err)}

				s, stdout, stderr = newSession(t)
				err = exec(t, s, prelude+intoRule.ReplaceAllString(script, "$2"))
				want := [3]string{stdout.String(), stderr.String(), fmt.Sprint(err)}
				for _, m := range intoRule.FindAllStringSubmatch(script, -1) {
					summary := "(rule " + m[1] + ": "
					if !strings.Contains(got[1], summary) {
						t.Errorf("%s, workers %d, %s: rule %s did not run in the book:\n%s", name, workers, format, m[1], got[1])
					}
					got[1] = strings.ReplaceAll(got[1], summary, "(")
				}
				if got != want {
					t.Errorf("%s, workers %d, %s: in the book\n%s\n%s\n%s\nalone:\n%s\n%s\n%s", name, workers, format, got[0], got[1], got[2], want[0], want[1], want[2])
				}
				if !strings.Contains(got[1], "derived stream") || !strings.Contains(got[0], `"type":"d"`) && format == "jsonl" {
					t.Errorf("%s, %s: no derived stream read:\n%s\n%s", name, format, got[0], got[1])
				}
			}
		}
	}
}
