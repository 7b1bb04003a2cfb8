package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// deadline bounds each wait for output of a live run; a correct sase meets
// it by orders of magnitude, and no test sleeps to make a point.
const deadline = 10 * time.Second

// liveRun is a running sase whose stdout and stderr are read line by line
// as they come.
type liveRun struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    chan string // stdout lines; closed at EOF
	errCh  chan string // stderr lines; closed at EOF
	mu     sync.Mutex
	stderr strings.Builder // every stderr line so far
	exited chan struct{}
	code   int
}

func startLive(t *testing.T, args ...string) *liveRun {
	t.Helper()
	r := &liveRun{t: t, cmd: exec.Command(sase, append([]string{"--no-stocks"}, args...)...),
		out: make(chan string, 1<<16), errCh: make(chan string, 1<<10), exited: make(chan struct{})}
	r.cmd.Dir = "../.."
	var err error
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pipes sync.WaitGroup
	lines := func(rd io.Reader, ch chan string, keep bool) {
		defer pipes.Done()
		defer close(ch)
		sc := bufio.NewScanner(rd)
		for sc.Scan() {
			if keep {
				r.mu.Lock()
				r.stderr.WriteString(sc.Text() + "\n")
				r.mu.Unlock()
			}
			ch <- sc.Text()
		}
	}
	pipes.Add(2)
	go lines(stdout, r.out, false)
	go lines(stderr, r.errCh, true)
	go func() {
		pipes.Wait() // Wait closes the pipes: read them to the end first
		err := r.cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		}
		close(r.exited)
	}()
	t.Cleanup(func() {
		r.cmd.Process.Kill() // a no-op once it has exited
		<-r.exited
	})
	return r
}

func (r *liveRun) write(text string) {
	r.t.Helper()
	if _, err := io.WriteString(r.stdin, text); err != nil {
		r.t.Fatal(err)
	}
}

// line waits for the next stdout line.
func (r *liveRun) line() string {
	r.t.Helper()
	select {
	case l, ok := <-r.out:
		if !ok {
			r.t.Fatalf("stdout ended; stderr:\n%s", r.errText())
		}
		return l
	case <-time.After(deadline):
		r.t.Fatalf("no output within %v; stderr:\n%s", deadline, r.errText())
	}
	return ""
}

// errLine waits for a stderr line matching re and returns its submatches.
func (r *liveRun) errLine(re *regexp.Regexp) []string {
	r.t.Helper()
	timeout := time.After(deadline)
	for {
		select {
		case l, ok := <-r.errCh:
			if !ok {
				r.t.Fatalf("stderr ended without %s:\n%s", re, r.errText())
			}
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-timeout:
			r.t.Fatalf("no %s on stderr within %v:\n%s", re, deadline, r.errText())
		}
	}
}

func (r *liveRun) errText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stderr.String()
}

// wait waits for the exit and returns the rest of stdout.
func (r *liveRun) wait() (rest []string, code int) {
	r.t.Helper()
	select {
	case <-r.exited:
	case <-time.After(deadline):
		r.t.Fatalf("sase did not exit; stderr:\n%s", r.errText())
	}
	for l := range r.out {
		rest = append(rest, l)
	}
	return rest, r.code
}

func (r *liveRun) signal(sig os.Signal) {
	r.t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		r.t.Fatal(err)
	}
}

// TestLivePipe reads a real pipe: each match is on stdout before the
// input ends, bad lines are reported with their line and counted, and the
// summary says what was read, used and rejected.
func TestLivePipe(t *testing.T) {
	t.Parallel()
	r := startLive(t, "--format", "jsonl", "-c",
		"LOAD '-' AS s; PATTERN SEQ(A a, B b) WITHIN 10 RETURN a.x, b.x;")
	r.write("type,ts,x\nA,1,5\n")
	r.write("B,2,6\n") // completes a match
	if got := r.line(); got != `{"a.x":5,"b.x":6}` {
		t.Fatalf("first match %s", got)
	}
	r.write("B,oops,7\nA,0,1\nB,3,8\n")
	if got := r.line(); got != `{"a.x":5,"b.x":8}` {
		t.Fatalf("second match %s", got)
	}
	r.stdin.Close()
	rest, code := r.wait()
	if code != 0 || len(rest) != 0 {
		t.Fatalf("exit %d, more output %q; stderr:\n%s", code, rest, r.errText())
	}
	for _, want := range []string{
		`stdin:4: bad timestamp "oops"`,
		"stdin:5: timestamp 0 is before the previous event's 2",
		"(query 1 ended: 2 matches, 3 events",
		"(stream s ended: 5 lines read, 3 events used, 0 late, 2 lines rejected)",
	} {
		if !strings.Contains(r.errText(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.errText())
		}
	}
}

// TestLivePipeFilter: a single-event query (a filter, which holds no
// state) runs on a live pipe without WITHIN, each match as its event
// comes.
func TestLivePipeFilter(t *testing.T) {
	t.Parallel()
	r := startLive(t, "--format", "jsonl", "-c", "LOAD '-' AS s; PATTERN A a WHERE a.x > 2 RETURN a.x;")
	r.write("type,ts,x\nA,1,5\n")
	if got := r.line(); got != `{"a.x":5}` {
		t.Fatalf("first match %s", got)
	}
	r.write("A,2,1\nB,3,9\nA,4,7\n")
	if got := r.line(); got != `{"a.x":7}` {
		t.Fatalf("second match %s", got)
	}
	r.stdin.Close()
	rest, code := r.wait()
	if code != 0 || len(rest) != 0 || !strings.Contains(r.errText(), "(query 1 ended: 2 matches, 4 events") {
		t.Fatalf("exit %d, more output %q; stderr:\n%s", code, rest, r.errText())
	}
}

// TestLivePipeWithinUnit: a unit in WITHIN on a pipe whose timestamps
// turn out unit-less stops that query at the first event, with the fix,
// and the script exits with status 1; a query in ticks goes on.
func TestLivePipeWithinUnit(t *testing.T) {
	t.Parallel()
	r := startLive(t, "--format", "jsonl", "-c",
		"LOAD '-' AS s; PATTERN SEQ(A a, B b) WITHIN 5 s RETURN b.x; PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.x;")
	r.write("type,ts,x\nA,1,5\nB,2,6\n")
	if got := r.line(); got != `{"a.x":5}` {
		t.Fatalf("match %s", got)
	}
	r.stdin.Close()
	if rest, code := r.wait(); code != 1 || len(rest) != 0 {
		t.Fatalf("exit %d, more output %q; stderr:\n%s", code, rest, r.errText())
	}
	if want := "ERROR: query 1: stream s has unit-less integer timestamps (its first event, seq 0, has ts 1), which WITHIN 5 s cannot measure: load it WITH (time_unit = 'ms')"; !strings.Contains(r.errText(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.errText())
	}
}

// TestLiveMatchesLoaded runs queries on a stream piped in live, two of
// them at once on the one stream, and on the same events loaded from a
// file: the matches are the same (as multisets of JSON objects; a live
// stream may order attributes differently).
func TestLiveMatchesLoaded(t *testing.T) {
	t.Parallel() // its own files, ports and servers: it overlaps the README's waits
	dir := t.TempDir()
	file := filepath.Join(dir, "stocks.csv")
	gen := run(t, "", "gen", "stocks", "--events", "10000", "--symbols", "4")
	if err := os.WriteFile(file, []byte(gen.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	queries := []struct{ query, vars string }{
		{"PATTERN SEQ(stock1 a, stock2 b, stock3 c) WHERE a.price > b.price WITHIN 15", "a, b, c"},
		{"PATTERN SEQ(stock1 a, stock2 b, !stock3 c) WHERE c.price > a.price WITHIN 12", "a, b"}, // a negated end
		{"PATTERN SEQ(stock1 a, stock2+ b[]) WHERE b[i].price > b[i-1].price WITHIN 8", "a, b"},  // a trailing closure
		{"PATTERN SEQ(stock4 a, stock1 b) WHERE [volume] OR a.price = b.price WITHIN 30", "a, b"},
		{"PATTERN SEQ(ANY(stock1, stock2) a, stock3 b) WHERE a.volume < b.volume WITHIN 5", "a, b"},
	}
	var script strings.Builder
	script.WriteString("LOAD '-' AS s;\n")
	for i, q := range queries {
		fmt.Fprintf(&script, "%s RETURN %d AS q, %s;\n", q.query, i, q.vars)
	}
	cmd := exec.Command(sase, "--no-stocks", "--format", "jsonl", "-c", script.String())
	cmd.Stdin = strings.NewReader(gen.stdout)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, err.(*exec.ExitError).Stderr)
	}
	live := map[int][]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		q := int(m["q"].(float64))
		delete(m, "q")
		live[q] = append(live[q], canonical(t, m))
	}
	for i, q := range queries {
		r := run(t, "", "--no-stocks", "--format", "jsonl", "-c", "LOAD '"+file+"' AS s; "+q.query+" RETURN "+q.vars+";")
		if r.code != 0 {
			t.Fatalf("%s: %s", q.query, r.stderr)
		}
		var loaded []string
		for _, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			loaded = append(loaded, canonical(t, m))
		}
		slices.Sort(loaded)
		slices.Sort(live[i])
		if len(loaded) < 10 || !slices.Equal(loaded, live[i]) {
			t.Errorf("%s: %d matches loaded, %d live", q.query, len(loaded), len(live[i]))
		}
	}
}

// canonical re-encodes a JSON object with sorted keys.
func canonical(t *testing.T, m map[string]any) string {
	b, err := json.Marshal(m) // maps marshal with sorted keys
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLiveFollow follows a real growing file: appended events are matched
// as they are written; SIGINT ends the run with status 130.
func TestLiveFollow(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "app.jsonl")
	if err := os.WriteFile(path, []byte(`{"type":"login","ts":1,"user":"ann"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startLive(t, "--format", "csv", "-c",
		"LOAD '"+path+"' FOLLOW AS app; PATTERN SEQ(login a, fail b) WHERE [user] WITHIN 10 RETURN b.ts, b.user;")
	appendLine := func(line string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.line(); got != "b.ts,b.user" {
		t.Fatalf("header %q", got)
	}
	appendLine(`{"type":"fail","ts":2,"user":"bob"}`)
	appendLine(`{"type":"fail","ts":3,"user":"ann"}`)
	if got := r.line(); got != "3,ann" {
		t.Fatalf("match %q", got)
	}
	appendLine(`{"type":"fail","ts":4,"user":"ann"}`)
	if got := r.line(); got != "4,ann" {
		t.Fatalf("match %q", got)
	}
	r.signal(syscall.SIGINT)
	rest, code := r.wait()
	if code != 130 || len(rest) != 0 {
		t.Fatalf("exit %d, more output %q", code, rest)
	}
	if want := "(stream app stopped: 4 lines read, 4 events used, 0 late, 0 lines rejected)"; !strings.Contains(r.errText(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.errText())
	}
}

// TestLiveListen feeds a listener on a port the OS picks from real TCP
// clients: their lines are merged, a closed client does not stop the
// listener, and SIGTERM ends the run with status 130.
func TestLiveListen(t *testing.T) {
	t.Parallel()
	r := startLive(t, "--format", "jsonl", "-c",
		"LISTEN 'tcp://127.0.0.1:0' AS feed FORMAT jsonl; PATTERN SEQ(A a, B b) WITHIN 10 RETURN a.n, b.n;")
	addr := r.errLine(regexp.MustCompile(`listening on tcp://(\S+) as feed`))[1]
	dial := func() net.Conn {
		c, err := net.DialTimeout("tcp", addr, deadline)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	c1 := dial()
	fmt.Fprintln(c1, `{"type":"A","ts":1,"n":1}`)
	fmt.Fprintln(c1, `{"type":"B","ts":2,"n":2}`)
	if got := r.line(); got != `{"a.n":1,"b.n":2}` {
		t.Fatalf("match %s", got)
	}
	c2 := dial()
	fmt.Fprintln(c2, `{"type":"B","ts":3,"n":3}`)
	if got := r.line(); got != `{"a.n":1,"b.n":3}` {
		t.Fatalf("match from a second client %s", got)
	}
	c2.Close()
	c1.Close()
	r.errLine(regexp.MustCompile(`disconnected`))
	c3 := dial()
	fmt.Fprintln(c3, `not json`)
	fmt.Fprintln(c3, `{"type":"B","ts":4,"n":4}`)
	if got := r.line(); got != `{"a.n":1,"b.n":4}` {
		t.Fatalf("match after clients closed %s", got)
	}
	r.errLine(regexp.MustCompile(`^feed/127\.0\.0\.1:\d+:1: invalid character 'o' in literal null`))
	r.signal(syscall.SIGTERM)
	if _, code := r.wait(); code != 130 {
		t.Fatalf("exit %d", code)
	}
	if want := "(stream feed stopped: 5 lines read, 4 events used, 0 late, 1 line rejected)"; !strings.Contains(r.errText(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.errText())
	}
}

// TestLiveInterrupt checks that SIGINT writes the complete matches and
// not one whose negated end the stream has not passed yet. B,130 passes
// the window of (A,1 B,2), which is written, and starts that of
// (A,120 B,130): the line shows that the query has read B,130, since the
// output is flushed only when the query waits for input.
func TestLiveInterrupt(t *testing.T) {
	t.Parallel()
	r := startLive(t, "--format", "csv", "-c",
		"LOAD '-' AS s; PATTERN SEQ(A a, B b, !C c) WITHIN 100 RETURN a.ts, b.ts;")
	r.write("type,ts\nA,1\nB,2\nA,120\nB,130\n")
	if got := []string{r.line(), r.line()}; !slices.Equal(got, []string{"a.ts,b.ts", "1,2"}) {
		t.Fatalf("output %q", got)
	}
	r.signal(syscall.SIGINT)
	rest, code := r.wait()
	if code != 130 || len(rest) != 0 {
		t.Fatalf("exit %d, more output %q (a match whose window is still open)", code, rest)
	}
	if want := "(query 1 stopped: 1 match, 4 events"; !strings.Contains(r.errText(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.errText())
	}
}

// TestLiveWorkers pipes a stream in live to partitioned queries on 4
// workers: each prints the bytes it prints on the loaded file (on 4
// workers, and on one for a query whose partitions never complete matches
// at one position: no postponement, no event lacking the attribute).
func TestLiveWorkers(t *testing.T) {
	t.Parallel() // its own files, ports and servers: it overlaps the README's waits
	gen := run(t, "", "gen", "stocks", "--events", "20000", "--symbols", "6", "--increase-probability", "55")
	file := filepath.Join(t.TempDir(), "stocks.csv")
	if err := os.WriteFile(file, []byte(gen.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query string
		one   bool // one worker's order has no ties to put in partition order
	}{
		{"PATTERN SEQ(stock a, stock b, stock c) WHERE [symbol] AND b.price > a.price AND c.price > b.price WITHIN 20 RETURN a.ts, b.ts, c.ts, a.symbol", true},
		{"PATTERN SEQ(stock a, stock b, !stock n) WHERE [symbol] AND b.price > a.price + 5 AND n.price > b.price WITHIN 10 RETURN a.ts, b.ts, a.symbol", false},
		{"PATTERN SEQ(stock a, stock+ b[]) WHERE [symbol] AND b[i].price > b[i-1].price AND a.price > 900 WITHIN 6 RETURN a.ts, b.LEN, a.symbol", false},
	} {
		loaded := run(t, "", "--no-stocks", "--workers", "4", "--format", "csv", "-c", "LOAD '"+file+"' AS s; "+tc.query+";")
		if loaded.code != 0 || strings.Count(loaded.stdout, "\n") < 20 {
			t.Fatalf("%s: loaded: %s\n%s", tc.query, loaded.stderr, loaded.stdout)
		}
		cmd := exec.Command(sase, "--no-stocks", "--workers", "4", "--format", "csv", "-c", "LOAD '-' AS s; "+tc.query+";")
		cmd.Stdin = strings.NewReader(gen.stdout)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %s", err, err.(*exec.ExitError).Stderr)
		}
		if string(out) != loaded.stdout {
			t.Errorf("%s: live on 4 workers prints %d lines, loaded %d, or in another order", tc.query, strings.Count(string(out), "\n"), strings.Count(loaded.stdout, "\n"))
		}
		if tc.one {
			one := run(t, "", "--no-stocks", "--workers", "1", "--format", "csv", "-c", "LOAD '"+file+"' AS s; "+tc.query+";")
			if one.stdout != loaded.stdout {
				t.Errorf("%s: one worker and 4 differ", tc.query)
			}
		}
	}
}
