package session_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/session"
)

// TestLimitFiles checks the files a limited session may read and write:
// only under its folder, relative paths being relative to it; none with
// an empty folder.
func TestLimitFiles(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	testkit.WriteFiles(t, dir, map[string]string{
		"secret.csv":      "type,ts\nA,1\n",
		"data/ok.csv":     "type,ts\nA,1\n",
		"data/inc.sase":   "LOAD 'ok.csv' AS inc;",
		"data/sub/in.csv": "type,ts\nA,1\n",
	})
	if err := os.Symlink(filepath.Join(dir, "secret.csv"), filepath.Join(data, "link.csv")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		root, stmt string
		want       string // on stderr; "" for no error
	}{
		{data, "LOAD 'ok.csv';", ""},
		{data, "LOAD 'sub/in.csv';", ""},
		{data, "LOAD '" + filepath.Join(data, "ok.csv") + "';", ""},
		{data, "LOAD '../secret.csv';", "../secret.csv: outside the data folder"},
		{data, "LOAD '" + filepath.Join(dir, "secret.csv") + "';", "outside the data folder"},
		{data, "LOAD 'link.csv';", "link.csv: outside the data folder"},
		{data, "LOAD 'ok.csv' AS b WITH (slack = 1, late = '../late.csv');", "<test>:1:37: ../late.csv: outside the data folder"},
		{data, "LOAD 'ok.csv' AS b WITH (slack = 1, late = 'late.csv');", ""},
		{data, `\i inc.sase`, ""},
		{data, `\i ../secret.csv`, "outside the data folder"},
		{data, `\o ../out.txt`, "outside the data folder"},
		{"", "LOAD 'ok.csv';", "may not read or write files"},
		{"", `\o out.txt`, "may not read or write files"},
	}
	for _, tt := range tests {
		t.Run(tt.stmt, func(t *testing.T) {
			s, _, stderr := newSession(t)
			s.LimitFiles(tt.root)
			err := exec(t, s, tt.stmt)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("%s failed: %s", tt.stmt, stderr)
				}
				return
			}
			if err == nil || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q, want %q", stderr, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
		t.Error(`\o wrote outside the data folder`)
	}
}

// TestFollow follows a live query's matches as JSON lines, alongside its
// results, which do not change; WithBackground sends the results and the
// summaries apart from the statements' own output, and OnError reports
// each error.
func TestFollow(t *testing.T) {
	pr, pw := io.Pipe()
	fg, bgOut, bgErr := &bytes.Buffer{}, &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
	var errs []error
	s := newSessionTo(t, fg, fg, session.WithStdin(pr), session.WithBackground(bgOut, bgErr),
		session.OnError(func(err error) { errs = append(errs, err) }))
	exec(t, s, "SET format = csv; LOAD '-' AS s; PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.x, b.x;")
	s.StartLive()
	var mu sync.Mutex
	var lines []string
	done, stop, err := s.Follow(1, func(line []byte) {
		mu.Lock()
		lines = append(lines, string(line))
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(pw, "type,ts,x\nA,1,10\nB,2,20\n")
	testkit.WaitFor(t, bgOut, "10,20\n")
	stop()
	io.WriteString(pw, "A,3,30\nB,4,40\n")
	pw.Close()
	<-done
	testkit.WaitFor(t, bgErr, "(query 1 ended: 3 matches, 4 events on s)")
	if got, want := bgOut.String(), "a.x,b.x\n10,20\n30,40\n10,40\n"; got != want {
		t.Errorf("results %q, want %q", got, want)
	}
	mu.Lock()
	if want := []string{`{"a.x":10,"b.x":20}` + "\n"}; !slices.Equal(lines, want) {
		t.Errorf("followed %q, want %q", lines, want)
	}
	mu.Unlock()
	if q := s.Queries()[0]; q.Events != 4 || q.Matches != 3 {
		t.Errorf("query 1 read %d events, %d matches; want 4, 3", q.Events, q.Matches)
	}
	if strings.Contains(fg.String(), "10,20") || strings.Contains(fg.String(), "ended") {
		t.Errorf("background output in the statements' own:\n%s", fg)
	}
	if _, _, err := s.Follow(2, func([]byte) {}); err == nil || !strings.Contains(err.Error(), "no query 2") {
		t.Errorf("Follow(2): %v", err)
	}
	exec(t, s, "PATTERN SEQ(A a) FROM nowhere;")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "no stream named nowhere") {
		t.Errorf("OnError saw %v", errs)
	}
}
