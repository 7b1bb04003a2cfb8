package session_test

import (
	"io"
	"strings"
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
)

// TestLiveEventTime: a live stream with a slack reorders its events, a
// punctuation line releases a match waiting on a negated end, and SHOW
// STREAMS and EXPLAIN show the stream's event time.
func TestLiveEventTime(t *testing.T) {
	s, pw, stdout, stderr := pipedSession(t)
	s.Set("timing", "off")
	exec(t, s, "SET format = csv; LOAD '-' AS s WITH (slack = 2);")
	exec(t, s, "EXPLAIN PATTERN SEQ(A a, !B b) WITHIN 5 RETURN a.x;")
	if want := "Plan (engine auto)\nStream s: live, slack 2, clock events\n"; !strings.Contains(stdout.String(), want) {
		t.Errorf("EXPLAIN lacks %q:\n%s", want, stdout)
	}
	exec(t, s, "PATTERN SEQ(A a, !B b) WITHIN 5 RETURN a.x;")
	io.WriteString(pw, "type,ts,x\nA,3,30\nA,1,10\nB,8,\n")
	// Time is 6: A@1 and A@3 are out; A@1 waits for time to pass 6, A@3
	// for B@8, held.
	io.WriteString(pw, ",7,\n")
	testkit.WaitFor(t, stdout, "[1] 10\n")
	if strings.Contains(stdout.String(), "[1] 30") {
		t.Errorf("A@3 matched though B@4 follows it:\n%s", stdout)
	}
	io.WriteString(pw, "A,5,50\n") // below the time, 7: late
	testkit.WaitFor(t, stderr, "stdin:6: late event: ts 5 is below the stream's time 7 (largest ts 8, slack 2) (line skipped)")
	exec(t, s, "SHOW STREAMS;")
	if want := "\ns,2,2,-,,true,true,2,7,8,1\n"; !strings.Contains(stdout.String(), want) {
		t.Errorf("SHOW STREAMS lacks %q:\n%s", want, stdout)
	}
	pw.Close()
	testkit.WaitFor(t, stderr, "(stream s ended: 4 lines read, 3 events used, 1 late, 0 lines rejected)")
}
