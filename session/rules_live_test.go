package session_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
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
// on one pass or shared among SET workers passes, and each rule's lines are,
// byte for byte and in their order, what it writes as a query of its own
// on the stream, led by its name.
func TestLiveRulesAsAlone(t *testing.T) {
	t.Parallel() // its sessions read their own pipes
	in := ruleStream(20000)
	alone := map[string]string{} // a rule's run alone, by format and query: the same for any workers
	for _, run := range []struct {
		format  string
		workers int
	}{{"csv", 1}, {"jsonl", 1}, {"csv", 2}} {
		format := run.format
		var rules strings.Builder
		fmt.Fprintf(&rules, "SET workers = %d; SET format = %s; LOAD '-' AS s;", run.workers, format)
		for i, q := range liveRules {
			fmt.Fprintf(&rules, "RULE r%d: %s;\n", i, q)
		}
		got := byRule(runPiped(t, rules.String(), in, 4096), format, len(liveRules))
		for i, q := range liveRules {
			script := fmt.Sprintf("SET format = %s; LOAD '-' AS s; %s;", format, q)
			if _, ok := alone[script]; !ok {
				alone[script] = runPiped(t, script, in, 4096)
			}
			var want strings.Builder
			for j, line := range strings.SplitAfter(alone[script], "\n") {
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
	rules := make([]strings.Builder, n) // not +=, which copies all of a rule's output at each line
	for j, line := range strings.SplitAfter(out, "\n") {
		switch {
		case line == "":
		case format == "csv" && j < n:
			rules[j].WriteString(line)
		default:
			var i int
			if format == "jsonl" {
				fmt.Sscanf(line, `{"rule":"r%d"`, &i)
			} else {
				fmt.Sscanf(line, "r%d,", &i)
			}
			rules[i].WriteString(line)
		}
	}
	got := make([]string, n)
	for i := range rules {
		got[i] = rules[i].String()
	}
	return got
}

// TestLiveRuleStopAndAdd: in the shell, each rule of a live stream's
// rulebook is a query of its own: SHOW QUERIES lists it with its events
// and matches, STOP QUERY ends it alone, and a rule added while the
// stream runs reads from the next event on.
func TestLiveRuleStopAndAdd(t *testing.T) {
	s, pw, stdout, stderr := shellOnPipe(t)
	exec(t, s, "RULE ab: PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.x, b.x;")
	exec(t, s, "RULE bc: PATTERN SEQ(B b, C c) WITHIN 5 RETURN c.x;")
	io.WriteString(pw, "type,ts,x\nA,1,10\nB,2,20\nC,3,33\n")
	testkit.WaitFor(t, stdout, "bc,33\n")
	exec(t, s, "SHOW QUERIES;")
	// Each rule reads only the events of its types: ab the A and the B, bc the B and the C.
	listing := "id,stream,state,matches,events,query\n" +
		"1,s,running,1,2,\"RULE ab: PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.x, b.x\"\n" +
		"2,s,running,1,2,\"RULE bc: PATTERN SEQ(B b, C c) WITHIN 5 RETURN c.x\"\n"
	testkit.WaitFor(t, stdout, listing)

	exec(t, s, "STOP QUERY 1;") // returns once the rule has ended
	if want := "(query 1 stopped: 1 match, 2 events on s)\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	exec(t, s, "RULE ca: PATTERN SEQ(C c, A a) WITHIN 5 RETURN a.x;") // C,3 is before its start
	io.WriteString(pw, "A,4,44\nC,5,55\nA,6,66\nB,7,77\nC,8,88\n")
	testkit.WaitFor(t, stdout, "bc,88\n")
	testkit.WaitFor(t, stdout, "ca,66\n")
	// ca does not match C,3 and A,4, nor ab A,6 and B,7.
	want := "rule,a.x,b.x\nrule,c.x\nab,10,20\nbc,33\n" + listing + "rule,a.x\nbc,55\nca,66\nbc,88\n"
	if got := stdout.String(); got != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", got, want)
	}
	pw.Close() // the stream ends, and with it the rules that run
	testkit.WaitFor(t, stderr, "(query 2 ended: 3 matches, 5 events on s)")
	testkit.WaitFor(t, stderr, "(query 3 ended: 1 match, 4 events on s)")
}

// TestLiveRuleLimit: a live rule that reaches SET limit ends after the
// item that brought it there, while the stream and the other rules run on.
func TestLiveRuleLimit(t *testing.T) {
	s, pw, stdout, stderr := shellOnPipe(t)
	exec(t, s, "SET limit = 1;")
	exec(t, s, "RULE ab: PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.x, b.x;")
	exec(t, s, "RULE bc: PATTERN SEQ(B b, C c) WITHIN 5 RETURN c.x;")
	io.WriteString(pw, "type,ts,x\nA,1,10\nB,2,20\nB,3,30\n")
	testkit.WaitFor(t, stderr, "(query 1 ended at the limit")
	exec(t, s, "SHOW QUERIES;")
	testkit.WaitFor(t, stdout, "1,s,ended at the limit,1,")
	testkit.WaitFor(t, stdout, "2,s,running,0,")
	io.WriteString(pw, "C,4,44\n")
	testkit.WaitFor(t, stdout, "bc,44\n")
	testkit.WaitFor(t, stderr, "(query 2 ended at the limit")
	pw.Close()
}

// notes are the lines of stderr that TestLiveRulesWorkersAddStop leaves out.
var notes = regexp.MustCompile(`(?m)^(workers = \d|\(stream s ended).*\n`)

// TestLiveRulesWorkersAddStop: in the shell, a live rulebook on 2 and 3
// workers writes, byte for byte, what it writes on one, while rules are
// added (each to the pass with the fewest rules running, reading from the
// next event on) and stopped between the stream's pieces, and rules end
// at their limits. Each piece ends with an event of z's, whose line goes
// out once every pass has read the piece: the rules added then start at
// the same event whatever the passes.
func TestLiveRulesWorkersAddStop(t *testing.T) {
	t.Parallel()
	in := strings.SplitAfter(ruleStream(3000), "\n")
	pieces := [][]string{in[:1001], in[1001:2001], in[2001:]}
	// Between the pieces: the rules added, STOP QUERY, limits.
	between := [][]string{
		{"SET limit = 40;", "RULE l0: " + liveRules[0] + ";", "SET limit = 0;", "RULE r1: " + liveRules[1] + ";",
			"RULE r2: " + liveRules[2] + ";", "RULE r3: " + liveRules[3] + ";", "RULE z: PATTERN Z z RETURN z.ts;"},
		{"STOP QUERY 4;", "RULE a0: " + liveRules[0] + ";", "RULE a2: " + liveRules[2] + ";", "SET limit = 7;", "RULE a3: " + liveRules[3] + ";"},
		{"STOP QUERY 2;", "SET limit = 0;", "RULE b1: " + liveRules[1] + ";", "RULE b0: " + liveRules[0] + ";"},
	}
	var one string
	for _, workers := range []int{1, 2, 3} {
		s, pw, stdout, stderr := shellOnPipe(t)
		exec(t, s, fmt.Sprintf("SET workers = %d;", workers))
		for k, piece := range pieces {
			for _, stmt := range between[k] {
				if err := exec(t, s, stmt); err != nil {
					t.Fatalf("%s: %v\n%s", stmt, err, stderr)
				}
			}
			ts := 1000 * (k + 1)
			io.WriteString(pw, strings.Join(piece, "")+fmt.Sprintf("Z,%d,0\n", ts))
			testkit.WaitFor(t, stdout, fmt.Sprintf("z,%d\n", ts))
		}
		pw.Close()
		if err := s.Wait(context.Background()); err != nil {
			t.Fatalf("Wait = %v\n%s", err, stderr)
		}
		// The notes but SET's and the stream's summary, which Wait writes
		// as the rules' summaries come.
		got := stdout.String() + notes.ReplaceAllString(stderr.String(), "")
		if workers == 1 {
			one = got
			continue
		}
		if got != one {
			t.Errorf("on %d workers the rulebook wrote\n%s\non one:\n%s", workers, got, one)
		}
	}
}

// intoBook is a live rulebook (its workers a verb) whose INTO rules feed
// a derived stream d, which a rule and a query read.
const intoBook = `SET workers = %d; SET format = jsonl; LOAD '-' AS s;
RULE r0: PATTERN SEQ(A a, B b) WHERE a.x > 80 AND b.x < a.x - 30 WITHIN 20 RETURN a.seq, b.x;
RULE i1: PATTERN SEQ(B a, !(C n), A b) WHERE a.x >= 90 AND n.x > a.x WITHIN 15 RETURN a.x AS p, b.seq AS q INTO d;
RULE r1: PATTERN SEQ(A a, A b) WHERE skip-till-next-match AND a.x < 5 AND b.x > 95 WITHIN 40;
RULE i2: PATTERN SEQ(C a, A+ b[], B c) WHERE a.x = 7 AND b[i].x > a.x WITHIN 9 RETURN count(b[]) AS p, c.x AS q INTO d;
RULE r2: PATTERN SEQ(C a, B b) WHERE a.x > 95 AND b.x < 3 WITHIN 30;
RULE c: PATTERN SEQ(d x, d y) FROM d WHERE y.p > x.p WITHIN 20 RETURN x.seq, y.seq;
PATTERN d x FROM d WITHIN 0;
`

// TestLiveIntoRulesWorkers: a live rulebook whose INTO rules feed a
// derived stream, which a rule and a query read, writes on 2 and 3
// workers what it writes on one, byte for byte on each stream (lines of
// different streams are not ordered with each other), and the same
// notes: each producer is told the time by its own pass, and the derived
// stream gets the same events in the same order.
func TestLiveIntoRulesWorkers(t *testing.T) {
	t.Parallel()
	in := ruleStream(20000)
	// The notes but SET's; the summaries come as the queries end.
	notes := func(stderr string) []string {
		lines := strings.Split(stderr, "\n")
		lines = slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "workers = ") })
		slices.Sort(lines)
		return lines
	}
	out, oneErr := runPipedNotes(t, fmt.Sprintf(intoBook, 1), in, 4096)
	one := byStream(out)
	if !strings.Contains(one[1], `"rule":"c"`) {
		t.Fatalf("rule c read no derived event:\n%.2000s", out)
	}
	for _, workers := range []int{2, 3} {
		out, stderr := runPipedNotes(t, fmt.Sprintf(intoBook, workers), in, 4096)
		for k, got := range byStream(out) {
			if got != one[k] {
				t.Errorf("on %d workers, stream %d:\n%.3000s\non one:\n%.3000s", workers, k, got, one[k])
			}
		}
		if got, want := notes(stderr), notes(oneErr); !slices.Equal(got, want) {
			t.Errorf("on %d workers the notes:\n%s\non one:\n%s", workers, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// byStream splits the JSON Lines of rules r... on one stream and of the
// queries on another (a derived stream): the lines of s's rules, then
// the others'. Lines of different streams are not ordered with each
// other.
func byStream(out string) [2]string {
	var s, d strings.Builder
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, `{"rule":"r`) {
			s.WriteString(line)
		} else {
			d.WriteString(line)
		}
	}
	return [2]string{s.String(), d.String()}
}
