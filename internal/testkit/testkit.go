// Package testkit holds the helpers that tests of several packages share:
// golden files with an -update flag, a buffer that goroutines write while a
// test reads it, waiting for output, laying out files, and reading an SVG
// chart, reading JSON Lines cases, collections over reused memory, and a
// TestMain that collects garbage less often (not under -bench). It
// imports nothing of ours, so any package's tests may use it (streams
// built from CSV text are in internal/teststream).
package testkit

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

// Update is the -update flag of every package whose tests use Golden.
var Update = flag.Bool("update", false, "rewrite the golden files")

// Long is the -long flag: the randomized and size-driven tests run their
// full sizes (go test ./exec -long), not the smaller ones that keep
// go test ./... fast and still cover every case.
var Long = flag.Bool("long", false, "run the slow tests at their full sizes")

// Main is the TestMain of the packages whose tests allocate much and keep
// little (streams, runs and matches dropped with their case): it runs m
// with the collector's goal at three times the live heap (GOGC=200)
// unless the environment sets GOGC, or -bench runs benchmarks, which
// measure what the default costs. exec's tests allocate 6.6 GB and spent
// a sixth of their CPU collecting at the default; at 200 they take about
// 2 CPU-s less of 13, their heap peaking at 340-480 MB, not 200.
func Main(m *testing.M) {
	flag.Parse()
	if os.Getenv("GOGC") == "" && flag.Lookup("test.bench").Value.String() == "" {
		debug.SetGCPercent(200)
	}
	os.Exit(m.Run())
}

// Size is short, or full under -long.
func Size(short, full int) int {
	if *Long {
		return full
	}
	return short
}

// Golden compares got with the file at path; with -update it rewrites the
// file first.
func Golden(t testing.TB, path, got string) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\ngot\n%s\nwant\n%s", path, got, want)
	}
}

// Deadline bounds every wait for output: generous, since a slow machine
// must not fail a correct test, and never an assertion by itself.
const Deadline = 10 * time.Second

// SyncBuffer is a buffer that background goroutines write while the test
// reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitFor waits until buf holds want, failing the test after Deadline.
func WaitFor(t testing.TB, buf *SyncBuffer, want string) {
	t.Helper()
	for end := time.Now().Add(Deadline); !strings.Contains(buf.String(), want); {
		if time.Now().After(end) {
			t.Fatalf("no %q in:\n%s", want, buf)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// WriteFiles writes each file of files (a path relative to dir, and its
// text) under dir, making the folders on the way.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Churn collects three times, each after filling memory the collector
// has freed with garbage: what a test of memory the collector does not
// scan needs, so that an object it freed too early is overwritten.
func Churn() {
	var garbage [][]byte
	for range 3 {
		for range 2000 {
			garbage = append(garbage[:0], bytes.Repeat([]byte{0xaa}, 4096))
		}
		runtime.GC()
	}
}

// Send writes lines to a listener (host:port, or a tcp:// URL) as a
// producer, and hangs up.
func Send(t testing.TB, addr, lines string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(addr, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, lines); err != nil {
		t.Fatal(err)
	}
}

// ReadJSONL reads a JSON Lines file of test cases, one T a line.
func ReadJSONL[T any](t testing.TB, path string) []T {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c T
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		out = append(out, c)
	}
	return out
}
