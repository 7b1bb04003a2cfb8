package session_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/session"
)

// mrOn is mrVShape on stream st.
func mrOn(rows string) string {
	return strings.Replace(fmt.Sprintf(mrVShape, rows), "FROM stocks", "FROM st", 1)
}

// mrSummary is a loaded MATCH_RECOGNIZE's summary line: rows, matches,
// events.
var mrSummary = regexp.MustCompile(`\((\d+) rows?, (\d+) match(?:es)?, (\d+) events? on st(, [0-9.]+(?:µs|ms|s), [0-9.]+[KMG]? events/s)?\)`)

// mrCounts runs stmt on a session with stream st of 5000 events and
// returns its summary's rows, matches and events, the lines it wrote and
// whether the summary has times.
func mrCounts(t *testing.T, settings, stmt string) (counts [3]int, lines int, timed bool) {
	t.Helper()
	s, stdout, stderr := newSession(t)
	if err := exec(t, s, "GENERATE STOCKS AS st WITH (events = 5000, symbols = 20); SET format = csv; "+settings+stmt); err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	m := mrSummary.FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("%s: no summary in\n%s", stmt, stderr)
	}
	for i := range counts {
		counts[i], _ = strconv.Atoi(m[i+1])
	}
	return counts, strings.Count(stdout.String(), "\n") - 1, m[4] != "" // the header
}

// TestMatchRecognizeJobCounts: a loaded MATCH_RECOGNIZE's summary counts
// the rows it wrote, its matches and the stream's events, with times when
// SET timing is on (as a PATTERN query's), and its limit stops it.
func TestMatchRecognizeJobCounts(t *testing.T) {
	one, oneLines, _ := mrCounts(t, "SET limit = 0;", mrOn("ONE ROW PER MATCH"))
	all, allLines, _ := mrCounts(t, "SET limit = 0;", mrOn("ALL ROWS PER MATCH"))
	if one[0] != oneLines || one[1] != one[0] || one[2] != 5000 || one[0] < 20 {
		t.Errorf("ONE ROW PER MATCH: summary %v, %d lines; want rows = matches = lines, 5000 events", one, oneLines)
	}
	if all[0] != allLines || all[1] != one[1] || all[0] <= all[1] || all[2] != 5000 {
		t.Errorf("ALL ROWS PER MATCH: summary %v, %d lines; want rows = lines, %d matches, 5000 events", all, allLines, one[1])
	}
	limited, lines, _ := mrCounts(t, "SET limit = 7;", mrOn("ALL ROWS PER MATCH"))
	if limited[0] != 7 || lines != 7 {
		t.Errorf("limit 7: summary %v, %d lines", limited, lines)
	}
	if _, _, timed := mrCounts(t, "SET limit = 0; SET timing = on;", mrOn("ONE ROW PER MATCH")); !timed {
		t.Error("SET timing = on: the summary has no times")
	}
	into, _, _ := mrCounts(t, "", strings.Replace(mrOn("ONE ROW PER MATCH"), " AS m;", " AS m INTO d;", 1))
	if into != one {
		t.Errorf("INTO: summary %v, want %v", into, one)
	}
	analyzed, _, _ := mrCounts(t, "SET limit = 0;", "EXPLAIN ANALYZE "+mrOn("ALL ROWS PER MATCH"))
	if analyzed != all {
		t.Errorf("EXPLAIN ANALYZE: summary %v, want %v", analyzed, all)
	}
}

// TestMatchRecognizeJobCancel: a cancel mid-run stops a loaded
// MATCH_RECOGNIZE with the job's message, which counts the rows it wrote.
func TestMatchRecognizeJobCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &cancelWriter{cancel: cancel}, &bytes.Buffer{}
	s := session.New(stdout, stderr)
	script := "GENERATE STOCKS AS st WITH (events = 100000, symbols = 400); SET format = csv; SET limit = 0; SET workers = 1; " + mrOn("ALL ROWS PER MATCH")
	if err := s.Exec(ctx, &ast.Source{Name: "<test>", Text: script}); err != session.ErrFailed {
		t.Fatalf("Exec = %v: %s", err, stderr)
	}
	rows := strings.Count(stdout.String(), "\n") - 1 // the header
	m := regexp.MustCompile(`query cancelled after 100000 events and (\d+) matches`).FindStringSubmatch(stderr.String())
	if m == nil || m[1] != strconv.Itoa(rows) || rows <= 0 {
		t.Fatalf("%d rows written; stderr:\n%s", rows, stderr)
	}
	all, _, _ := mrCounts(t, "SET limit = 0;", "GENERATE STOCKS AS st WITH (events = 100000, symbols = 400);"+mrOn("ALL ROWS PER MATCH"))
	if rows >= all[0] {
		t.Errorf("cancelled after %d rows of %d: not mid-run", rows, all[0])
	}
}

// TestMatchRecognizeJobError: a run-time error fails the statement with
// the matcher's message and no summary.
func TestMatchRecognizeJobError(t *testing.T) {
	s, _, stderr := newSession(t)
	err := exec(t, s, "GENERATE STOCKS AS st WITH (events = 100, symbols = 2); SELECT * FROM st MATCH_RECOGNIZE (ORDER BY ts "+
		"ALL ROWS PER MATCH AFTER MATCH SKIP TO LAST B PATTERN (A B?) DEFINE A AS true, B AS false);")
	if err == nil || !strings.Contains(stderr.String(), "AFTER MATCH SKIP TO B: match 1 has no row of B") || mrSummary.MatchString(stderr.String()) {
		t.Errorf("err = %v; stderr:\n%s", err, stderr)
	}
}
