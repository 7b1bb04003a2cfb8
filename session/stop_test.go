package session_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/session"
)

// TestStopReleasesHeld stops (as a signal does: Wait's context cancelled)
// live streams whose slack holds every event read: a stream whose reading
// stops (FOLLOW, LISTEN) releases them, so the match they complete is
// written, and a last line without its newline is rejected as incomplete;
// standard input, whose read cannot be stopped, counts them as discarded.
// Either way the end line's numbers add up.
func TestStopReleasesHeld(t *testing.T) {
	const lines = "type,ts,x\nA,1,1\nB,2,2\nbad\nA,3" // the last one cut off
	const query = "PATTERN SEQ(A a, B b) WITHIN 10 RETURN a.x, b.x;"
	tests := []struct {
		name  string
		start func(t *testing.T, s *session.Session, stderr *testkit.SyncBuffer, stdin io.Writer)
		match bool
		want  string
	}{
		{"follow", func(t *testing.T, s *session.Session, _ *testkit.SyncBuffer, _ io.Writer) {
			path := filepath.Join(t.TempDir(), "in.csv")
			if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
				t.Fatal(err)
			}
			exec(t, s, "LOAD '"+path+"' FOLLOW AS s WITH (slack = 100); "+query)
		}, true, "incomplete line: the stream was closed before its newline (line skipped)\n"},
		{"listen", func(t *testing.T, s *session.Session, stderr *testkit.SyncBuffer, _ io.Writer) {
			exec(t, s, "LISTEN 'tcp://127.0.0.1:0' AS s WITH (slack = 100); "+query)
			addr := regexp.MustCompile(`listening on tcp://(\S+) as s`).FindStringSubmatch(stderr.String())[1]
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			io.WriteString(conn, lines) // the connection stays open
		}, true, "incomplete line: the stream was closed before its newline (line skipped)\n"},
		{"stdin", func(t *testing.T, s *session.Session, _ *testkit.SyncBuffer, stdin io.Writer) {
			exec(t, s, "LOAD '-' AS s WITH (slack = 100); "+query)
			go io.WriteString(stdin, lines+"\n") // read once the stream starts
		}, false, "(stream s stopped: 4 lines read, 0 events used, 0 late, 2 lines rejected, 2 held, discarded)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			stdout, stderr := &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
			s := session.New(stdout, stderr, session.WithStdin(pr))
			s.Set("timing", "off")
			exec(t, s, "SET format = csv;")
			tt.start(t, s, stderr, pw)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { done <- s.Wait(ctx) }() // a script's streams start here
			testkit.WaitFor(t, stderr, "1 field, header has 3 (line skipped)")
			if tt.name == "stdin" {
				testkit.WaitFor(t, stderr, "2 fields, header has 3 (line skipped)")
			}
			cancel()
			if err := <-done; err != context.Canceled {
				t.Fatalf("Wait: %v", err)
			}
			if got := strings.Contains(stdout.String(), "a.x,b.x\n1,2\n"); got != tt.match {
				t.Errorf("match A1 B2 written %v, want %v:\n%s", got, tt.match, stdout)
			}
			testkit.WaitFor(t, stderr, tt.want)
			if tt.match {
				testkit.WaitFor(t, stderr, "(stream s stopped: 4 lines read, 2 events used, 0 late, 2 lines rejected)")
			}
		})
	}
}

// TestLatePathInScript is issue 30's ninth defect: late = 'path' in a
// script resolved against the working directory, while LOAD's path
// resolves against the script's folder. Both now resolve there.
func TestLatePathInScript(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteFiles(t, dir, map[string]string{
		"data.csv":    "type,ts\nA,5\nA,1\nA,6\n", // A@1 is late by a slack of 1
		"script.sase": "LOAD 'data.csv' AS s WITH (slack = 1, late = 'late.csv');\n",
	})
	t.Chdir(t.TempDir())
	stdout, stderr := &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
	s := session.New(stdout, stderr)
	if err := s.ExecFile(context.Background(), filepath.Join(dir, "script.sase")); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	got, err := os.ReadFile(filepath.Join(dir, "late.csv"))
	if err != nil || string(got) != "type,ts\nA,1\n" {
		t.Errorf("late file next to the script: %q, %v\n%s", got, err, stderr)
	}
}

// TestBackwardsPunctuation is issue 30's ninth defect: a punctuation line
// below the stream's time was ignored silently. It is reported with its
// line, and the end line counts it.
func TestBackwardsPunctuation(t *testing.T) {
	pr, pw := io.Pipe()
	stdout, stderr := &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
	s := session.New(stdout, stderr, session.WithStdin(pr), session.Interactive())
	s.Set("timing", "off")
	exec(t, s, "SET format = csv; LOAD '-' AS s; PATTERN SEQ(A a, A b) WITHIN 5 RETURN a.x, b.x;")
	io.WriteString(pw, "type,ts,x\nA,5,1\n,3,\nA,6,2\n")
	pw.Close()
	testkit.WaitFor(t, stderr, "stdin:3: punctuation ts 3 is below the stream's time 5: time does not go back (line skipped)")
	testkit.WaitFor(t, stderr, "(stream s ended: 2 lines read, 2 events used, 0 late, 0 lines rejected; 1 punctuation line behind the stream's time, ignored)")
	testkit.WaitFor(t, stdout, "[1] 1,2\n")
}
