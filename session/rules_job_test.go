package session_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/session"
)

// ruleSummary is a rule's summary line: its name, matches, events.
var ruleSummary = regexp.MustCompile(`\(rule (\w+): (\d+) match(?:es)?, (\d+) events? on stocks\)`)

// TestRulesJobCounts: each rule of a loaded rulebook counts the rows it
// wrote and the stream's events, keeps its own limit, and a rule's
// run-time error leaves the others' rows and summaries.
func TestRulesJobCounts(t *testing.T) {
	queries := []string{
		"PATTERN SEQ(stock1 a, stock2 b) WHERE a.price > 90 AND b.price < a.price - 40 WITHIN 30 RETURN a.seq, b.price",
		"PATTERN SEQ(stock3 a, stock3 b) WHERE skip-till-next-match AND a.price < 5 AND b.price > 95 WITHIN 50",
		"PATTERN SEQ(stock1 a, stock2 b) WHERE a.price / (b.price - b.price) > 1 WITHIN 30 RETURN a.seq",
	}
	alone := make([]int, 2) // the matches of the first two, run alone
	for i, q := range queries[:2] {
		s, _, stderr := newSession(t)
		if err := exec(t, s, "SET format = csv; SET limit = 0; "+q+";"); err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`\((\d+) matches, 10000 events on stocks\)`).FindStringSubmatch(stderr.String())
		if m == nil {
			t.Fatalf("%s: no summary in %s", q, stderr)
		}
		alone[i], _ = strconv.Atoi(m[1])
	}
	for _, limit := range []int{0, 20} {
		s, stdout, stderr := newSession(t)
		var script strings.Builder
		fmt.Fprintf(&script, "SET format = csv; SET limit = %d;\n", limit)
		for i, q := range queries {
			fmt.Fprintf(&script, "RULE r%d: %s;\n", i, q)
		}
		err := exec(t, s, script.String())
		if err == nil || !strings.Contains(stderr.String(), "ERROR: rule r2: <test>:4:56: division by zero at run time") {
			t.Errorf("limit %d: err = %v, want r2's division by zero; stderr:\n%s", limit, err, stderr)
		}
		got := map[string][2]int{}
		for _, m := range ruleSummary.FindAllStringSubmatch(stderr.String(), -1) {
			matches, _ := strconv.Atoi(m[2])
			events, _ := strconv.Atoi(m[3])
			got[m[1]] = [2]int{matches, events}
		}
		for i, n := range alone {
			name := fmt.Sprint("r", i)
			if limit > 0 {
				n = min(n, limit)
			}
			rows := strings.Count(stdout.String(), "\n"+name+",")
			if got[name] != [2]int{n, 10000} || rows != n {
				t.Errorf("limit %d: rule %s: summary %v, %d rows; want %d matches and rows, 10000 events", limit, name, got[name], rows, n)
			}
			if atLimit := strings.Contains(stderr.String(), "(rule "+name+" stopped at the limit"); atLimit != (limit > 0 && n == limit) {
				t.Errorf("limit %d: rule %s: stopped at the limit %v; stderr:\n%s", limit, name, atLimit, stderr)
			}
		}
		if _, ok := got["r2"]; ok || len(got) != 2 {
			t.Errorf("limit %d: summaries %v, want r0's and r1's", limit, got)
		}
	}
}

// TestRulesJobCancel: a cancel mid-run stops a loaded rulebook, on one
// pass or split among two, with the job's message, which counts the rows
// its rules wrote, and they are out.
func TestRulesJobCancel(t *testing.T) {
	for _, workers := range []int{1, 2} {
		s, stdout, stderr := newSession(t, session.TrackProgress())
		if err := exec(t, s, fmt.Sprintf("GENERATE STOCKS AS big WITH (events = 200000); SET format = csv; SET limit = 0; SET workers = %d;", workers)); err != nil {
			t.Fatal(err)
		}
		stdout.Reset()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() {
			done <- s.Exec(ctx, &ast.Source{Name: "<test>", Text: "RULE r0: PATTERN SEQ(stock1 a, stock2 b) FROM big WITHIN 2000 RETURN a.seq, b.seq; " +
				"RULE r1: PATTERN SEQ(stock3 a, stock4 b) FROM big WITHIN 2000 RETURN a.seq, b.seq;"})
		}()
		// Cancelled once the job has counted rows (1,024: it publishes so).
		for p, running := s.Progress(); !running || p.Work != "rulebook" || p.Matches == 0; p, running = s.Progress() {
			time.Sleep(time.Millisecond)
		}
		cancel()
		if err := <-done; !errors.Is(err, session.ErrFailed) {
			t.Fatalf("workers %d: Exec = %v: %s", workers, err, stderr)
		}
		m := regexp.MustCompile(`query cancelled after (\d+) events and (\d+) matches`).FindStringSubmatch(stderr.String())
		rows := strings.Count(stdout.String(), "\nr0,") + strings.Count(stdout.String(), "\nr1,")
		if m == nil || m[2] != strconv.Itoa(rows) || rows <= 0 {
			t.Fatalf("workers %d: %d rows written; stderr:\n%s", workers, rows, stderr)
		}
		if events, _ := strconv.Atoi(m[1]); events >= 200000 || ruleSummary.MatchString(stderr.String()) {
			t.Errorf("workers %d: cancelled after %d of 200000 events, or with a rule's summary:\n%s", workers, events, stderr)
		}
	}
}
