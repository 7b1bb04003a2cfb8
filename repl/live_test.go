package repl_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/repl"
)

// TestShellLiveQueries runs queries in the background as the shell does:
// each starts the stream, prints its lines prefixed with its number, and
// is listed by SHOW QUERIES until STOP QUERY ends it.
func TestShellLiveQueries(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	stdout, stderr := &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
	s := repl.New(stdout, stderr, repl.WithColor(false), repl.WithStdin(pr), repl.Interactive())
	s.Set("timing", "off")
	ctx := context.Background()
	s.Process(ctx, "SET format = csv; LOAD '-' AS s;")
	s.Process(ctx, "PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.x, b.x;")
	s.Process(ctx, "PATTERN SEQ(B b, C c) WITHIN 5 RETURN c.x;")
	io.WriteString(pw, "type,ts,x\nA,1,10\nB,2,20\n")
	testkit.WaitFor(t, stdout, "[1] 10,20\n")
	if !strings.Contains(stdout.String(), "[1] a.x,b.x\n") {
		t.Errorf("no header for query 1:\n%s", stdout)
	}
	s.Process(ctx, "SHOW QUERIES;")
	testkit.WaitFor(t, stdout, "1,s,running,1,\"PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.x, b.x\"\n")

	s.Process(ctx, "STOP QUERY 1;") // returns once the query has ended
	if want := "(query 1 stopped: 1 match, 2 events)\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	io.WriteString(pw, "A,3,30\nB,4,40\nC,5,50\n")
	testkit.WaitFor(t, stdout, "[2] 50\n")
	if strings.Contains(stdout.String(), "[1] 30,40") {
		t.Error("a stopped query still prints")
	}
	for _, stmt := range []string{"STOP QUERY 1;", "STOP QUERY 7;"} {
		s.Process(ctx, stmt)
	}
	for _, want := range []string{"query 1 has stopped", "no query 7 (SHOW QUERIES lists them)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	pw.Close() // the stream ends, and with it query 2
	testkit.WaitFor(t, stderr, "(query 2 ended: 2 matches, 5 events)")
	testkit.WaitFor(t, stderr, "(stream s ended: 5 lines read, 5 events used, 0 lines rejected)")
}

// TestLiveQueryChecks checks what a live stream does not allow.
func TestLiveQueryChecks(t *testing.T) {
	s, stdout, stderr := newSession(t, repl.WithStdin(strings.NewReader("type,ts\n")))
	for _, tt := range []struct{ stmt, err string }{
		{"LOAD '-' AS s;", ""},
		{"PATTERN SEQ(A a, B b);", "a query on live stream s needs WITHIN"},
		{"EXPLAIN ANALYZE PATTERN SEQ(A a, B b) WITHIN 3;", "EXPLAIN ANALYZE needs a loaded stream; s is live"},
		{"SET engine = basic; PATTERN SEQ(A a, B b) WITHIN 3;", "engine basic does not bound its state by the window"},
		{"LOAD 'testdata/repl/shelf.csv' WITH (on_error = 'stop');", "on_error is for live streams"},
		{"LOAD '-' AS t;", "standard input is not available"},
		{"LISTEN 'nowhere' AS n;", "LISTEN wants an address like 'tcp://127.0.0.1:7000'"},
	} {
		stderr.Reset()
		err := exec(t, s, tt.stmt)
		if (err != nil) != (tt.err != "") || !strings.Contains(stderr.String(), tt.err) {
			t.Errorf("%s: %v\n%s", tt.stmt, err, stderr)
		}
	}
	stdout.Reset()
	if err := exec(t, s, "SET engine = auto; EXPLAIN PATTERN SEQ(A a, B b) WITHIN 3;"); err != nil || !strings.Contains(stdout.String(), "Plan (engine auto)") {
		t.Errorf("EXPLAIN on a live stream: %v\n%s", err, stdout)
	}
}
