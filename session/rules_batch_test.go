package session_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/internal/teststream"
	"github.com/sase-cep/sase/session"
)

// TestLiveRulesBatches: a live rulebook's pass pushes the items its
// stream has ready in batches, and whatever the batch (an item at a
// time, a few, all that is ready) the book writes the same bytes and the
// same notes; its lines, less the rules' names, are the same queries'
// lines run as separate live queries: each keeps the position (event or
// punctuation) that released it, a negated end's match released by a
// later item's time or by a punctuation, the end's at the end, a rule's
// count (format count) at the item that brought it to its limit.
func TestLiveRulesBatches(t *testing.T) {
	// Not parallel: the batch is the package's (the parallel tests run
	// after this one).
	defer session.SetBookBatch(session.SetBookBatch(0))
	negated := []string{
		"PATTERN SEQ(A a, !(B n)) WHERE a.x > 50 WITHIN 6 RETURN a.seq, a.x",
		"PATTERN SEQ(C a, !(A n), B b) WHERE [x] WITHIN 8",
	}
	slack := disordered(3000, 4)
	type run struct {
		name   string
		book   string // its rules as RULE statements
		plain  string // the same queries, alone: "" for none
		names  bool   // the rules' lines lead with their names (not a count's)
		in     string
		byRule func(string) []string // what must be alike across batches
	}
	whole := func(out string) []string { return []string{out} }
	var runs []run
	rules := append(slices.Clip(negated), liveRules...)
	for _, workers := range []int{1, 2} {
		head := "SET format = csv; LOAD '-' AS s WITH (slack = 4); " // the queries alone on one worker, whose lines are in order
		runs = append(runs, run{fmt.Sprintf("slack on %d", workers), fmt.Sprintf("SET workers = %d; ", workers) + head + ruleStatements(rules), head + strings.Join(rules, ";\n") + ";", true, slack, whole})
	}
	// A count is written as its query ends: at its limit (each rule's
	// another, so that the counts differ), or at the stream's end.
	var limited, alone strings.Builder
	for i, q := range rules {
		fmt.Fprintf(&limited, "SET limit = %d; RULE r%d: %s;\n", 2+i, i, q)
		fmt.Fprintf(&alone, "SET limit = %d; %s;\n", 2+i, q)
	}
	head := "SET format = count; LOAD '-' AS s WITH (slack = 4); "
	runs = append(runs, run{"count at limits", head + limited.String(), head + alone.String(), false, slack, whole})
	// Rules that begin alike read their starts as a group (rulebook's
	// share), which counts the events each has read: a rule at its limit
	// has read up to the item that brought it there.
	var group, groupAlone strings.Builder
	for i := range 8 {
		q := fmt.Sprintf("PATTERN SEQ(A a, B b) WHERE a.x > 50 AND b.x < a.x - %d WITHIN 20", 10+5*i)
		fmt.Fprintf(&group, "SET limit = %d; RULE r%d: %s;\n", 20+30*i, i, q)
		fmt.Fprintf(&groupAlone, "SET limit = %d; %s;\n", 20+30*i, q)
	}
	head = "SET format = csv; LOAD '-' AS s; "
	runs = append(runs, run{"a group at limits", head + group.String(), head + groupAlone.String(), true, ruleStream(5000), whole})
	for seed := range uint64(6) {
		book, plain, csv := randomBook(t, seed)
		head := "SET format = csv; LOAD '-' AS s; "
		runs = append(runs, run{fmt.Sprint("random ", seed), head + book, head + plain, true, csv, whole})
	}
	for _, workers := range []int{1, 2} {
		split := func(out string) []string { s := byStream(out); return s[:] }
		runs = append(runs, run{fmt.Sprintf("into on %d", workers), fmt.Sprintf(intoBook, workers), "", true, ruleStream(20000), split})
	}
	for _, r := range runs {
		var first []string
		var firstNotes []string
		for _, batch := range []int64{1, 5, 1 << 20} {
			session.SetBookBatch(batch)
			out, notes := runPipedNotes(t, r.book, r.in, len(r.in)) // at once: all of it is ready
			got, gotNotes := r.byRule(out), sortedNotes(notes)
			if first == nil {
				first, firstNotes = got, gotNotes
				if r.plain != "" {
					if r.names {
						out = lessNames(out)
					}
					if want := runPiped(t, r.plain, r.in, len(r.in)); out != want {
						t.Errorf("%s: the rules' lines, less their names:\n%.3000s\nthe queries':\n%.3000s", r.name, out, want)
					}
				}
				continue
			}
			if !slices.Equal(got, first) {
				t.Errorf("%s: in batches of %d the book wrote\n%.3000s\nan item at a time:\n%.3000s", r.name, batch, got, first)
			}
			if !slices.Equal(gotNotes, firstNotes) {
				t.Errorf("%s: in batches of %d the notes:\n%s\nan item at a time:\n%s", r.name, batch, strings.Join(gotNotes, "\n"), strings.Join(firstNotes, "\n"))
			}
		}
	}
}

// ruleStatements makes queries rules r0, r1, ...
func ruleStatements(queries []string) string {
	var b strings.Builder
	for i, q := range queries {
		fmt.Fprintf(&b, "RULE r%d: %s;\n", i, q)
	}
	return b.String()
}

// sortedNotes are the notes but SET workers' and the stream's summary
// (stopped or ended, as its last rule ends at its limit before or after
// the input does), sorted: the summaries come as the rules end, on the
// passes' goroutines.
func sortedNotes(stderr string) []string {
	lines := strings.Split(stderr, "\n")
	lines = slices.DeleteFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "workers = ") || strings.HasPrefix(l, "(stream ")
	})
	slices.Sort(lines)
	return lines
}

// negatedEnd is a random query whose pattern ends with a negation: its
// matches wait on time, released by a later item or a punctuation.
var negatedEnd = regexp.MustCompile(`!\(?(ANY\([A-Z, ]+\)|[A-Z]+) v\d+\)?\)( |$)`)

// randomBook is seed's random rulebook (the differential generator's
// queries with a window, some with a negated end), as rules and as
// queries, and its stream, with a punctuation line now and then.
func randomBook(t *testing.T, seed uint64) (book, plain, csv string) {
	r := rand.New(rand.NewPCG(seed, 45))
	var c randquery.Case
	for strings.Count(c.StreamCSV, "\n") < 100 { // a long stream
		c = randquery.Generate(r, randquery.Strategies(), randquery.Long())
	}
	stream := teststream.CSV(t, "s", c.StreamCSV)
	var rules []string
	negations := 0
	for len(rules) < 12 || negations < 3 {
		q := randquery.Generate(r, randquery.Strategies()).Query
		if !strings.Contains(q, " WITHIN ") {
			continue
		}
		if _, err := sase.Compile(q, stream); err != nil {
			continue
		}
		if negatedEnd.MatchString(q) {
			negations++
		} else if len(rules) >= 12 {
			continue
		}
		rules = append(rules, q)
	}
	var in strings.Builder
	for i, line := range strings.SplitAfter(c.StreamCSV, "\n") {
		in.WriteString(line)
		_, rest, _ := strings.Cut(line, ",")
		if ts, _, ok := strings.Cut(rest, ","); ok && i > 0 && i%7 == 0 {
			fmt.Fprintf(&in, ",%s,,,,\n", ts)
		}
	}
	return ruleStatements(rules), strings.Join(rules, ";\n") + ";", in.String()
}
