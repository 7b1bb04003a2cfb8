package session_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/session"
)

// TestLiveJobs: a query on a live stream and an INTO query over one run
// as jobs: each ends with its stream, at its limit (SET limit is for
// results: the derived stream gets every match, its consumer stops), or
// at a run-time error, and its summary counts what it wrote and read.
func TestLiveJobs(t *testing.T) {
	const (
		input    = "type,ts,x\nA,1,1\nB,2,2\nA,3,3\nB,4,0\nA,5,5\nB,6,6\n"
		pairs    = "PATTERN SEQ(A a, B b) WITHIN 3 RETURN a.x AS p, b.x AS q"
		divide   = "PATTERN SEQ(A a, B b) WHERE a.x / b.x > 0 WITHIN 3 RETURN a.x AS p, b.x AS q"
		consumer = " INTO d; PATTERN d e FROM d WITHIN 1 RETURN e.p, e.q;"
		divErr   = "ERROR: query 1: <test>:1:33: division by zero at run time in a.x / b.x"
	)
	for _, tt := range []struct {
		name, set, stmts, out string
		notes                 []string
		err                   error
	}{
		{"live", "", pairs + ";", "p,q\n1,2\n3,0\n1,0\n5,6\n3,6\n",
			[]string{"(query 1 ended: 5 matches, 6 events on s)"}, nil},
		{"live at its limit", "SET limit = 2;", pairs + ";", "p,q\n1,2\n3,0\n",
			[]string{"(query 1 ended at the limit: 2 matches, 4 events on s)"}, nil},
		{"live run-time error", "", divide + ";", "p,q\n1,2\n",
			[]string{divErr, "(query 1 failed: 1 match, 4 events on s)"}, session.ErrFailed},
		{"INTO", "", pairs + consumer, "e.p,e.q\n1,2\n3,0\n1,0\n5,6\n3,6\n",
			[]string{"(query 1 ended: 5 matches, 6 events on s)", "(query 2 ended: 5 matches, 5 events on d)"}, nil},
		{"INTO at a limit", "SET limit = 2;", pairs + consumer, "e.p,e.q\n1,2\n3,0\n",
			[]string{"(query 1 ended: 5 matches, 6 events on s)", "(query 2 ended at the limit: 2 matches, 2 events on d)"}, nil},
		{"INTO run-time error", "", divide + consumer, "e.p,e.q\n1,2\n",
			[]string{divErr, "(query 1 failed: 1 match, 4 events on s)", "(query 2 ended: 1 match, 1 event on d)"}, session.ErrFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, stdout, stderr := newSession(t, session.WithStdin(strings.NewReader(input)))
			if err := exec(t, s, "SET format = csv; LOAD '-' AS s; "+tt.set); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if err := exec(t, s, tt.stmts); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if err := s.Wait(context.Background()); err != tt.err {
				t.Errorf("Wait = %v, want %v", err, tt.err)
			}
			if stdout.String() != tt.out {
				t.Errorf("stdout %q, want %q", stdout, tt.out)
			}
			for _, note := range tt.notes {
				if !strings.Contains(stderr.String(), note+"\n") {
					t.Errorf("stderr lacks %q:\n%s", note, stderr)
				}
			}
		})
	}
}

// TestLiveJobsStop: STOP QUERY ends a query on a live stream, or an INTO
// query over one, in the middle of its stream; an INTO query's derived
// stream then ends, and with it the query that reads it.
func TestLiveJobsStop(t *testing.T) {
	for _, tt := range []struct {
		name, stmts, input, first string
		notes                     []string
	}{
		{"live", "PATTERN SEQ(A a, B b) WITHIN 3 RETURN a.x AS p, b.x AS q;", "A,1,1\nB,2,2\n", "[1] 1,2\n",
			[]string{"(query 1 stopped: 1 match, 2 events on s)"}},
		// The derived event of (1, 2) is released once ts 9 is past its window.
		{"INTO", "PATTERN SEQ(A a, B b) WITHIN 3 RETURN a.x AS p, b.x AS q INTO d; PATTERN d e FROM d WITHIN 1 RETURN e.p, e.q;",
			"A,1,1\nB,2,2\nA,9,9\n", "[2] 1,2\n",
			[]string{"(query 1 stopped: 1 match, 3 events on s)", "(query 2 ended: 1 match, 1 event on d)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, pw, stdout, stderr := shellOnPipe(t)
			if err := exec(t, s, tt.stmts); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			io.WriteString(pw, "type,ts,x\n"+tt.input)
			testkit.WaitFor(t, stdout, tt.first)
			exec(t, s, "STOP QUERY 1;") // returns once the query has ended
			for _, note := range tt.notes {
				testkit.WaitFor(t, stderr, note+"\n")
			}
			before := stdout.String()
			io.WriteString(pw, "A,20,20\nB,21,21\n") // a match, for a query that still ran
			pw.Close()
			testkit.WaitFor(t, stderr, "(stream s ended: ")
			if stdout.String() != before {
				t.Errorf("a stopped query still writes: %q after %q", strings.TrimPrefix(stdout.String(), before), before)
			}
		})
	}
}
