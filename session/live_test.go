package session_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/session"
)

// TestInteractiveLiveQueries runs queries in the background as the shell
// does: each starts the stream, prints its lines prefixed with its number,
// and is listed by SHOW QUERIES until STOP QUERY ends it.
func TestInteractiveLiveQueries(t *testing.T) {
	s, pw, stdout, stderr := shellOnPipe(t)
	exec(t, s, "PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.x, b.x;")
	exec(t, s, "PATTERN SEQ(B b, C c) WITHIN 5 RETURN c.x;")
	io.WriteString(pw, "type,ts,x\nA,1,10\nB,2,20\n")
	testkit.WaitFor(t, stdout, "[1] 10,20\n")
	if !strings.Contains(stdout.String(), "[1] a.x,b.x\n") {
		t.Errorf("no header for query 1:\n%s", stdout)
	}
	exec(t, s, "SHOW QUERIES;")
	testkit.WaitFor(t, stdout, "1,s,running,1,2,\"PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.x, b.x\"\n")

	exec(t, s, "STOP QUERY 1;") // returns once the query has ended
	if want := "(query 1 stopped: 1 match, 2 events on s)\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	io.WriteString(pw, "A,3,30\nB,4,40\nC,5,50\n")
	testkit.WaitFor(t, stdout, "[2] 50\n")
	if strings.Contains(stdout.String(), "[1] 30,40") {
		t.Error("a stopped query still prints")
	}
	for _, stmt := range []string{"STOP QUERY 1;", "STOP QUERY 7;"} {
		exec(t, s, stmt)
	}
	for _, want := range []string{"query 1 has stopped", "no query 7 (SHOW QUERIES lists them)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	pw.Close() // the stream ends, and with it query 2
	testkit.WaitFor(t, stderr, "(query 2 ended: 2 matches, 5 events on s)")
	testkit.WaitFor(t, stderr, "(stream s ended: 5 lines read, 5 events used, 0 late, 0 lines rejected)")
}

// shellOnPipe is a shell session (timing off, SET format = csv) reading
// the live stream s from the pipe pw, which the test's end closes.
func shellOnPipe(t *testing.T) (s *session.Session, pw *io.PipeWriter, stdout, stderr *testkit.SyncBuffer) {
	t.Helper()
	s, pw, stdout, stderr = pipedSession(t)
	s.Set("timing", "off")
	if err := exec(t, s, "SET format = csv; LOAD '-' AS s;"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	return s, pw, stdout, stderr
}

// TestLiveQueryChecks checks what a live stream does not allow.
func TestLiveQueryChecks(t *testing.T) {
	s, stdout, stderr := newSession(t, session.WithStdin(strings.NewReader("type,ts\n")))
	for _, tt := range []struct{ stmt, err string }{
		{"LOAD '-' AS s;", ""},
		{"PATTERN SEQ(A a, B b);", "a query on live stream s needs WITHIN"},
		{"PATTERN SEQ(A a, !B n);", "a query on live stream s needs WITHIN"},
		{"PATTERN A a;", ""}, // one event a match: no state to bound
		{"EXPLAIN ANALYZE PATTERN SEQ(A a, B b) WITHIN 3;", "EXPLAIN ANALYZE needs a loaded stream; s is live"},
		{"SET engine = basic; PATTERN SEQ(A a, B b) WITHIN 3;", "engine basic does not bound its state by the window"},
		{"LOAD 'testdata/repl/shelf.csv' WITH (clock = 'wall');", "1:38: clock = 'wall' is for a live stream"},
		{"LOAD '-' AS u WITH (sort = true);", "1:21: sort = true is for a batch LOAD"},
		{"LOAD '-' AS u WITH (slack = -5);", "1:21: slack: want a duration"},
		{"LOAD '-' AS u WITH (slack = 2, lag = '1 s');", "1:32: lag is how far"},
		{"LOAD '-' AS u WITH (slack = '5 parsecs');", "1:21: slack: want a duration"},
		{"GENERATE STOCKS WITH (late = 'x.jsonl');", "1:23: late is for a loaded or live stream's input"},
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

// TestQueryStates checks the state each way of ending leaves a live query
// in, as Queries and SHOW QUERIES report it.
func TestQueryStates(t *testing.T) {
	input := "type,ts,x\nA,1,1\nB,2,2\nA,3,3\nB,4,4\n"
	s, stdout, stderr := newSession(t, session.WithStdin(strings.NewReader(input)))
	err := exec(t, s, "LOAD '-' AS s;"+
		"PATTERN SEQ(A a, B b) WITHIN 5;"+ // ends with its stream
		"SET limit = 1; PATTERN SEQ(A a, B b) WITHIN 5; SET limit = 0;"+
		"PATTERN SEQ(A a, B b) WHERE a.x / (b.x - b.x) > 1 WITHIN 5;") // fails at its first pair
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if err := s.Wait(context.Background()); err != session.ErrFailed {
		t.Errorf("Wait = %v", err)
	}
	var got []string
	for _, q := range s.Queries() {
		got = append(got, fmt.Sprintf("%d %s %s %d", q.ID, q.Stream, q.State, q.Matches))
	}
	want := []string{"1 s ended 3", "2 s ended at the limit 1", "3 s failed 0"}
	if !slices.Equal(got, want) {
		t.Errorf("Queries() = %q, want %q\n%s%s", got, want, stdout, stderr)
	}
	if st := session.State(9); st.String() != "State(9)" {
		t.Errorf("State(9) = %s", st)
	}
}

// TestReplaceLiveStream checks that a live stream is replaced only once no
// query reads it, and that a replacement that fails leaves a stream queries
// can still name (it used to leave half an entry, and a query on it
// panicked; TestFailedReplacementKeepsLiveStream checks it still reads).
func TestReplaceLiveStream(t *testing.T) {
	s, stdout, stderr := newSession(t, session.WithStdin(strings.NewReader("type,ts\nA,1\n")))
	for _, tt := range []struct{ stmt, err string }{
		{"LOAD '-' AS s; PATTERN SEQ(A a, B b) WITHIN 3;", ""},
		{"GENERATE STOCKS AS s WITH (events = 5);", "stream s has running queries (STOP QUERY 1 first)"},
		{"LOAD '../testdata/repl/shelf.csv' AS s;", "stream s has running queries (STOP QUERY 1 first)"},
		{"LISTEN 'tcp://127.0.0.1:0' AS n; LISTEN 'nowhere' AS n;", "LISTEN wants an address"},
		{"PATTERN SEQ(A a, B b) FROM n WITHIN 3; STOP QUERY 2;", ""}, // n still listens: only STOP ends its query
	} {
		stderr.Reset()
		if err := exec(t, s, tt.stmt); (err != nil) != (tt.err != "") || !strings.Contains(stderr.String(), tt.err) {
			t.Errorf("%s: %v\n%s", tt.stmt, err, stderr)
		}
	}
	if err := s.Wait(context.Background()); err != nil {
		t.Fatalf("Wait = %v\n%s", err, stderr)
	}
	stdout.Reset()
	if err := exec(t, s, "GENERATE STOCKS AS s WITH (events = 5); SET format = csv; SHOW STREAMS;"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if want := "\ns,5,10,generated,,true,false,,,,\n"; !strings.Contains(stdout.String(), want) {
		t.Errorf("SHOW STREAMS lacks %q:\n%s", want, stdout)
	}
	var got []string
	for _, st := range s.Streams() {
		got = append(got, fmt.Sprintf("%s %s %d %v", st.Name, st.Kind, st.Events, st.Current))
	}
	if want := []string{"stocks loaded 10000 false", "s loaded 5 true", "n live 0 false"}; !slices.Equal(got, want) {
		t.Errorf("Streams() = %q, want %q", got, want)
	}
}

// TestNeverCarried checks the warning at a live stream's end about the
// types and attributes a query named that the stream never carried.
func TestNeverCarried(t *testing.T) {
	s, _, stderr := newSession(t, session.WithStdin(strings.NewReader("type,ts,amount\nA,1,5\nB,2,20\nB,3,\n")))
	exec(t, s, "LOAD '-' AS feed; PATTERN SEQ(A a, B b) WHERE b.amout > 10 WITHIN 5; PATTERN SEQ(A a, C c) WITHIN 5; PATTERN SEQ(A a, B b) WHERE b.amount > 10 WITHIN 5;")
	if err := s.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"query 1 started on feed (not seen yet: type A, type B, attribute amout)\n",
		// Each query's goroutine writes its summary, then its warning; the
		// others' lines may come between.
		"(query 1 ended: 2 matches, 3 events on feed)\n",
		"warning: query 1: the stream never carried attribute amout (a comparison with an absent attribute is true: has(v.x) guards it)\n",
		"(query 2 ended: 0 matches, 3 events on feed)\n",
		"warning: query 2: the stream never carried type C\n",
		"(query 3 ended: 2 matches, 3 events on feed)\n",
		// Some B has an amount: not never carried, but one B lacks it.
		"warning: query 3: so far 1 of 2 B events has no amount: b.amount > 10 is true on it (a comparison that reads an absent attribute holds); has(b.amount) leaves it out\n",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Count(stderr.String(), "warning:") != 3 {
		t.Errorf("want three warnings:\n%s", stderr)
	}
}

// pipedSession is an interactive session whose standard input is the
// pipe pw writes, its outputs the buffers.
func pipedSession(t *testing.T) (s *session.Session, pw *io.PipeWriter, stdout, stderr *testkit.SyncBuffer) {
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	stdout, stderr = &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
	return session.New(stdout, stderr, session.WithStdin(pr), session.Interactive()), pw, stdout, stderr
}

// TestLiveOddValues checks that a live query says, once, when it first
// reads an event that lacks an attribute it compares or holds another
// kind: while the stream runs, counted from the query's start.
func TestLiveOddValues(t *testing.T) {
	s, pw, stdout, stderr := pipedSession(t)
	exec(t, s, "LOAD '-' AS s; PATTERN SEQ(R a, R b) WHERE b.temp - a.temp >= 5 AND b.unit = 'C' WITHIN 5;")
	io.WriteString(pw, "type,ts,temp,unit\nR,1,20,C\nR,2,26,C\n")
	testkit.WaitFor(t, stdout, "[1] ")
	io.WriteString(pw, "R,3,,C\n")
	testkit.WaitFor(t, stderr, "warning: query 1: so far 1 of 3 R events has no temp: b.temp - a.temp >= 5 is true on it (a comparison that reads an absent attribute holds); has(b.temp) AND has(a.temp) leaves it out\n")
	io.WriteString(pw, "R,4,,C\nR,5,30,7\n")
	testkit.WaitFor(t, stderr, "warning: query 1: so far 1 of 5 R events has unit as a number where it is compared with a string")
	exec(t, s, "STOP QUERY 1;")
	if n := strings.Count(stderr.String(), "has no temp"); n != 1 {
		t.Errorf("the notice was said %d times, want once:\n%s", n, stderr)
	}
}

// TestUnseenTypeSuggestion checks that a live query's start suggests the
// type seen so far that a type not seen yet is likely a typo of.
func TestUnseenTypeSuggestion(t *testing.T) {
	s, pw, stdout, stderr := pipedSession(t)
	exec(t, s, "LOAD '-' AS s; PATTERN login a WITHIN 5;")
	io.WriteString(pw, "type,ts,x\nlogin,1,10\n")
	testkit.WaitFor(t, stdout, "[1] ")
	exec(t, s, "PATTERN SEQ(login a, logn b) WITHIN 5;")
	testkit.WaitFor(t, stderr, "query 2 started on s (not seen yet: type logn (did you mean login?))\n")
	exec(t, s, "STOP QUERY 1; STOP QUERY 2;")
}

// TestFailedReplacementKeepsLiveStream checks that a LOAD or LISTEN that
// fails to replace a live stream leaves it listening, current and read
// by its queries: the old stream is closed only once the new one has
// opened (it used to be closed first). A LISTEN on the port the stream it
// replaces holds takes the port over.
func TestFailedReplacementKeepsLiveStream(t *testing.T) {
	stdout, stderr := &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
	s := session.New(stdout, stderr, session.Interactive())
	s.Set("timing", "off")
	exec(t, s, "SET format = csv; LISTEN 'tcp://127.0.0.1:0' AS feed; LISTEN 'tcp://127.0.0.1:0' AS other;")
	addr := map[string]string{}
	for _, st := range s.Streams() {
		addr[st.Name] = st.Source
	}
	for _, tt := range []struct{ stmt, err string }{
		{"LOAD 'no/such.csv' AS feed;", "no/such.csv: no such file or directory"},
		{"LOAD 'no/such.csv' AS feed FOLLOW;", "no/such.csv"},
		{"LISTEN 'nowhere' AS feed;", "LISTEN wants an address"},
		{"LISTEN '" + addr["other"] + "' AS feed;", "address already in use"},
		{"PATTERN SEQ(A a, B b) FROM feed WITHIN 5 RETURN a.x, b.x;", ""},
		{"LOAD 'no/such.csv' AS feed;", "stream feed has running queries (STOP QUERY 1 first)"},
	} {
		before := len(stderr.String())
		err := exec(t, s, tt.stmt)
		if got := stderr.String()[before:]; (err != nil) != (tt.err != "") || !strings.Contains(got, tt.err) {
			t.Errorf("%s: %v\n%s", tt.stmt, err, got)
		}
	}
	if s.Current() != "feed" {
		t.Errorf("current = %q, want feed", s.Current())
	}
	testkit.Send(t, addr["feed"], "type,ts,x\nA,1,10\nB,2,20\n")
	testkit.WaitFor(t, stdout, "[1] 10,20\n")
	if q := s.Queries()[0]; q.State != session.Running {
		t.Errorf("query 1 is %s", q.State)
	}
	exec(t, s, "STOP QUERY 1;")

	// LISTEN over LISTEN on the same port.
	if err := exec(t, s, "LISTEN '"+addr["feed"]+"' AS feed; PATTERN SEQ(A a, B b) FROM feed WITHIN 5 RETURN b.x;"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	testkit.Send(t, addr["feed"], "type,ts,x\nA,1,10\nB,2,30\n")
	testkit.WaitFor(t, stdout, "[2] 30\n")
	exec(t, s, "STOP QUERY 2;")
	if got := len(s.Streams()); got != 2 {
		t.Errorf("%d streams, want feed and other: %v", got, s.Streams())
	}
}

// TestLiveWithinUnit checks a unit in WITHIN on a live stream whose unit
// is not known yet: the query starts; RFC 3339 timestamps then measure
// it, and unit-less integers stop it (only it) at the first event. On a
// live stream known to be unit-less it is a compile error.
func TestLiveWithinUnit(t *testing.T) {
	const queries = "PATTERN SEQ(A a, B b) WITHIN 1 minute RETURN 'unit' AS q, b.x; PATTERN SEQ(A a, B b) WITHIN 5 RETURN 'ticks' AS q, b.x;"
	for _, tt := range []struct {
		name, input, out, stderr string
		err                      error
	}{
		{name: "RFC 3339", input: "type,ts,x\nA,2026-01-01T00:00:00Z,1\nB,2026-01-01T00:00:30Z,2\nB,2026-01-01T00:02:00Z,3\n",
			out: "unit,2\n", stderr: "(query 1 ended: 1 match, 3 events on feed)"},
		{name: "unit-less", input: "type,ts,x\nA,1,1\nB,2,2\n", err: session.ErrFailed, out: "ticks,2\n",
			stderr: "ERROR: query 1: stream feed has unit-less integer timestamps (its first event, seq 0, has ts 1), which WITHIN 1 m cannot measure: " +
				"load it WITH (time_unit = 'ms') (or the unit its integers count), or give it RFC 3339 timestamps, or write WITHIN 1 (ticks)\n"},
		{name: "unit-less punctuation", input: "type,ts,x\n,5,\n", err: session.ErrFailed,
			stderr: "(its first punctuation has ts 5)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, stdout, stderr := newSession(t, session.WithStdin(strings.NewReader(tt.input)))
			if err := exec(t, s, "SET format = csv; LOAD '-' AS feed; "+queries); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if err := s.Wait(context.Background()); err != tt.err {
				t.Errorf("Wait = %v, want %v", err, tt.err)
			}
			// Each query's lines, query by query.
			var got []string
			for _, line := range strings.SplitAfter(stdout.String(), "\n") {
				if strings.HasPrefix(line, "unit,") {
					got = append(got, line)
				}
			}
			for _, line := range strings.SplitAfter(stdout.String(), "\n") {
				if strings.HasPrefix(line, "ticks,") {
					got = append(got, line)
				}
			}
			if strings.Join(got, "") != tt.out {
				t.Errorf("results %q, want %q\n%s", got, tt.out, stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr)
			}
		})
	}

	// A derived stream's unit is its input's, known at its first event.
	s, stdout, stderr := newSession(t, session.WithStdin(strings.NewReader(
		"type,ts,x\nA,2026-01-01T00:00:00Z,1\nA,2026-01-01T00:00:30Z,2\nA,2026-01-01T00:02:00Z,3\n")))
	if err := exec(t, s, "SET format = csv; LOAD '-' AS feed; PATTERN A a WITHIN 1 minute RETURN a.x AS x INTO d;"+
		"PATTERN SEQ(d p, d q) FROM d WITHIN 1 minute RETURN p.x, q.x;"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if err := s.Wait(context.Background()); err != nil {
		t.Fatalf("Wait = %v\n%s", err, stderr)
	}
	if want := "p.x,q.x\n1,2\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q\n%s", stdout, want, stderr)
	}

	// Once the stream has used an unit-less event, the unit is known.
	pr, pw := io.Pipe()
	defer pw.Close()
	out, msgs := &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
	s = session.New(out, msgs, session.WithStdin(pr), session.Interactive())
	exec(t, s, "LOAD '-' AS feed; PATTERN A a WITHIN 5 RETURN a.x;")
	io.WriteString(pw, "type,ts,x\nA,1,10\n")
	testkit.WaitFor(t, out, "[1] ")
	if err := exec(t, s, "PATTERN SEQ(A a, B b) WITHIN 1 minute;"); err == nil {
		t.Error("a unit on a stream known to be unit-less compiled")
	}
	testkit.WaitFor(t, msgs, "WITHIN 1 m names a time unit, but stream feed has unit-less timestamps")
	exec(t, s, "STOP QUERY 1;")
}
