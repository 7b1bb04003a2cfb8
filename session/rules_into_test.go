package session_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
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

// TestLiveIntoRulesAsAlone: on a live stream, INTO rules run in the
// stream's rulebook as producers of live derived streams, which rules and
// queries read: every query's lines (the rules', the derived streams'
// events as queries print them) and the notes are what the script prints
// with each INTO rule run alone, but for the INTO rules' names in their
// notes and the events in their summaries: a rule's are those the index
// gave it, fewer than the stream's. The stream comes in order, and out of
// order within its slack, which the rules read in event time.
func TestLiveIntoRulesAsAlone(t *testing.T) {
	t.Parallel() // its sessions read their own pipes
	in := ruleStream(20000)
	lines := strings.SplitAfter(in, "\n")
	r := rand.New(rand.NewPCG(5, 44))
	for i := 1; i+1 < len(lines); i++ {
		if r.IntN(3) == 0 {
			lines[i], lines[i+1] = lines[i+1], lines[i]
			i++
		}
	}
	for _, run := range []struct{ with, in string }{{"", in}, {" WITH (slack = 3)", strings.Join(lines, "")}} {
		liveIntoRulesAsAlone(t, run.with, run.in)
	}
}

// liveIntoRulesAsAlone is a run of TestLiveIntoRulesAsAlone, the stream
// loaded with options with from in.
func liveIntoRulesAsAlone(t *testing.T, with, in string) {
	t.Helper()
	const text = `SET format = jsonl; LOAD '-' AS s%s;
RULE r0: PATTERN SEQ(A a, B b) WHERE a.x > 80 AND b.x < a.x - 30 WITHIN 20 RETURN a.seq, b.x;
RULE i1: PATTERN SEQ(B a, !(C n), A b) WHERE a.x >= 90 AND n.x > a.x WITHIN 15 RETURN a.x AS p, b.seq AS q INTO d;
RULE r1: PATTERN SEQ(A a, A b) WHERE skip-till-next-match AND a.x < 5 AND b.x > 95 WITHIN 40;
RULE i2: PATTERN SEQ(C a, A+ b[], B c) WHERE a.x = 7 AND b[i].x > a.x WITHIN 9 RETURN count(b[]) AS p, c.x AS q INTO d;
RULE i3: PATTERN SEQ(A a, B b, !(C n)) WHERE a.x > 90 WITHIN 6 RETURN b.x AS p INTO e;
RULE c: PATTERN SEQ(d x, d y) FROM d WHERE y.p > x.p WITHIN 20 RETURN x.seq, y.seq;
RULE i4: PATTERN d x FROM d WHERE x.p > 50 RETURN x.p AS p INTO e;
PATTERN d x FROM d WITHIN 0;
PATTERN e x FROM e WITHIN 0;
`
	script := fmt.Sprintf(text, with)
	intoRule := regexp.MustCompile(`(?m)^RULE (i\d): (.* INTO \w+;)$`)
	// A summary's events: an INTO rule's are the events the index gave it.
	events := regexp.MustCompile(`, \d+ events? on `)
	notes := func(stderr string) []string {
		lines := strings.Split(events.ReplaceAllString(stderr, ", N events on "), "\n")
		slices.Sort(lines) // the queries' summaries come as they end
		return lines
	}
	out, stderr := runPipedNotes(t, script, in, 4096)
	want, wantErr := runPipedNotes(t, intoRule.ReplaceAllString(script, "$2"), in, 4096)
	started := regexp.MustCompile(`query (\d+) \(rule i\d\) started on s,`).FindAllStringSubmatch(stderr, -1)
	for _, m := range started {
		read := 20000
		if sum := regexp.MustCompile(`\(query ` + m[1] + ` ended: \d+ match(es)?, (\d+) events? on s\)`).FindStringSubmatch(stderr); sum != nil {
			read, _ = strconv.Atoi(sum[2])
		}
		if read >= 20000 {
			t.Errorf("%s: query %s did not run in the book:\n%s", with, m[1], stderr)
		}
	}
	if len(started) != 3 {
		t.Errorf("%s: %d INTO rules on s, want 3:\n%s", with, len(started), stderr)
	}
	stderr = regexp.MustCompile(` \(rule i\d\)`).ReplaceAllString(stderr, "")
	got, all := byLine(out), byLine(want)
	for _, k := range []string{`"rule":"r0"`, `"rule":"r1"`, `"rule":"c"`, `"type":"d"`, `"type":"e"`} {
		if got[k] != all[k] || got[k] == "" {
			t.Errorf("%s, %s: in the book\n%.3000s\nalone:\n%.3000s", with, k, got[k], all[k])
		}
	}
	if len(got) != len(all) {
		t.Errorf("%s: lines of %d kinds, alone %d", with, len(got), len(all))
	}
	if g, w := notes(stderr), notes(wantErr); !slices.Equal(g, w) {
		t.Errorf("%s: notes in the book\n%s\nalone:\n%s", with, strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
}

// byLine splits JSON Lines by what wrote them: a rule's by its name, a
// query's of a whole event by the event's type; each in its order.
func byLine(out string) map[string]string {
	kind := regexp.MustCompile(`^\{"rule":"\w+"|^\{"x":\{"type":"\w+"`)
	by := map[string]string{}
	for line := range strings.Lines(out) {
		k := kind.FindString(line)
		k = k[strings.LastIndex(k, "{")+1:]
		by[k] += line
	}
	return by
}

// TestLiveIntoRuleStop: in the shell, a live INTO rule is a query of its
// own in its stream's rulebook: its derived events are released as its
// input's time passes them, not at its end; SHOW QUERIES lists it; STOP
// QUERY ends it alone, and with it its derived stream, whose consumer
// ends, while the book's other rule goes on.
func TestLiveIntoRuleStop(t *testing.T) {
	s, pw, stdout, stderr := shellOnPipe(t)
	exec(t, s, "RULE ab: PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.x, b.x;")
	exec(t, s, "RULE i: PATTERN SEQ(A a, !(C n)) WITHIN 1 RETURN a.x AS x INTO d;")
	exec(t, s, "PATTERN d e FROM d WITHIN 1 RETURN e.x;")
	testkit.WaitFor(t, stderr, "query 2 (rule i) started on s, into d\n")
	io.WriteString(pw, "type,ts,x\nA,1,7\nB,2,20\nB,3,30\nB,4,40\n")
	testkit.WaitFor(t, stdout, "ab,7,40\n")
	// Its match of A,1 waits out its window; then the producer holds it
	// until its input has passed ts 1 by the window (at B,4).
	testkit.WaitFor(t, stdout, "[3] 7\n")
	exec(t, s, "SHOW QUERIES;")
	testkit.WaitFor(t, stdout, "2,s,running,1,1,\"RULE i: PATTERN SEQ(A a, !(C n)) WITHIN 1 RETURN a.x AS x INTO d\"\n")
	exec(t, s, "STOP QUERY 2;")
	testkit.WaitFor(t, stderr, "(query 2 stopped: 1 match, 1 event on s)")
	testkit.WaitFor(t, stderr, "(query 3 ended: 1 match, 1 event on d)")
	testkit.WaitFor(t, stderr, "(stream d ended: 1 line read, 1 event used, 0 late, 0 lines rejected)")
	io.WriteString(pw, "A,10,9\nB,11,50\n")
	testkit.WaitFor(t, stdout, "ab,9,50\n")
	pw.Close()
	testkit.WaitFor(t, stderr, "(query 1 ended: 4 matches, 6 events on s)")
	if strings.Contains(stdout.String(), "[3] 9") {
		t.Errorf("the stopped rule's stream has an event after its stop:\n%s", stdout)
	}
}
