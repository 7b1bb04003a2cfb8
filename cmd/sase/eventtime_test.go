package main_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// disorderQueries cover a negated end, a trailing closure, a strategy and
// a plain sequence.
var disorderQueries = []string{
	"PATTERN SEQ(stock1 a, stock2 b, !stock3 c) WHERE c.price > a.price WITHIN 12 RETURN a.id, b.id",
	"PATTERN SEQ(stock1 a, stock2+ b[]) WHERE b[i].price > b[i-1].price WITHIN 8 RETURN a.id, b[1].id",
	"PATTERN SEQ(stock1 a, stock2 b) WHERE skip-till-next-match WITHIN 10 RETURN a.id, b.id",
	"PATTERN SEQ(stock4 a, !stock1 n, stock3 b) WHERE [symbol] OR a.price = b.price WITHIN 30 RETURN a.id, b.id",
}

// sortedMatches runs each query on the ordered stream in file and returns
// its matches, sorted.
func sortedMatches(t *testing.T, file string) [][]string {
	var all [][]string
	for _, q := range disorderQueries {
		r := run(t, "", "--no-stocks", "--format", "jsonl", "-c", "LOAD '"+file+"' AS s; "+q+";")
		if r.code != 0 {
			t.Fatalf("%s: %s", q, r.stderr)
		}
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		slices.Sort(lines)
		if len(lines) < 10 {
			t.Fatalf("%s: only %d matches: the test needs more", q, len(lines))
		}
		all = append(all, lines)
	}
	return all
}

// liveScript is the queries on a live stream, tagged by number.
func liveScript(load string) string {
	var b strings.Builder
	b.WriteString(load + "\n")
	for i, q := range disorderQueries {
		fmt.Fprintf(&b, "%s, %d AS q;\n", q, i)
	}
	return b.String()
}

// byQuery splits tagged JSON lines by their q and drops the tag.
func byQuery(t *testing.T, lines []string) [][]string {
	out := make([][]string, len(disorderQueries))
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		q := int(m["q"].(float64))
		delete(m, "q")
		out[q] = append(out[q], canonical(t, m))
	}
	for _, o := range out {
		slices.Sort(o)
	}
	return out
}

func canonicalAll(t *testing.T, sets [][]string) [][]string {
	out := make([][]string, len(sets))
	for i, s := range sets {
		for _, l := range s {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatal(err)
			}
			out[i] = append(out[i], canonical(t, m))
		}
		slices.Sort(out[i])
	}
	return out
}

// TestDisorderedSources: the stock stream shuffled within 20 ticks (gen
// --disorder) gives with slack = 20 the matches of the ordered stream, on
// a batch LOAD, a pipe, a followed file and TCP; nothing is late. A live
// stream that does not end is told the time by a punctuation line.
func TestDisorderedSources(t *testing.T) {
	t.Parallel() // its own files, ports and servers: it overlaps the README's waits
	dir := t.TempDir()
	sorted, shuffled := filepath.Join(dir, "sorted.csv"), filepath.Join(dir, "shuffled.csv")
	gen := run(t, "", "gen", "stocks", "--events", "4000", "--symbols", "4")
	dis := run(t, "", "gen", "stocks", "--events", "4000", "--symbols", "4", "--disorder", "20")
	if dis.stdout == gen.stdout || len(dis.stdout) != len(gen.stdout) {
		t.Fatal("--disorder did not shuffle, or lost rows")
	}
	if again := run(t, "", "gen", "stocks", "--events", "4000", "--symbols", "4", "--disorder", "20"); again.stdout != dis.stdout {
		t.Fatal("--disorder is not deterministic")
	}
	os.WriteFile(sorted, []byte(gen.stdout), 0o644)
	os.WriteFile(shuffled, []byte(dis.stdout), 0o644)
	want := canonicalAll(t, sortedMatches(t, sorted))
	total := 0
	for _, w := range want {
		total += len(w)
	}
	const report = "4000 lines read, 4000 events used, 0 late, 0 lines rejected"
	check := func(t *testing.T, how string, got [][]string, stderr string) {
		t.Helper()
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("%s: %s: %d matches, want %d", how, disorderQueries[i], len(got[i]), len(want[i]))
			}
		}
		if !strings.Contains(stderr, report) {
			t.Errorf("%s: stderr lacks %q:\n%s", how, report, stderr)
		}
	}

	t.Run("batch", func(t *testing.T) {
		t.Parallel()
		var got [][]string
		for _, q := range disorderQueries {
			r := run(t, "", "--no-stocks", "--format", "jsonl", "-c", "LOAD '"+shuffled+"' AS s WITH (slack = 20); "+q+";")
			if r.code != 0 {
				t.Fatalf("%s: %s", q, r.stderr)
			}
			got = append(got, strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"))
			if !strings.Contains(r.stderr, "(stream s loaded: "+report+")") {
				t.Errorf("stderr lacks the report:\n%s", r.stderr)
			}
		}
		check(t, "batch", canonicalAll(t, got), "(stream s loaded: "+report+")")
	})
	t.Run("pipe", func(t *testing.T) {
		t.Parallel()
		r := run(t, dis.stdout, "--no-stocks", "--format", "jsonl", "-c", liveScript("LOAD '-' AS s WITH (slack = 20);"))
		if r.code != 0 {
			t.Fatal(r.stderr)
		}
		check(t, "pipe", byQuery(t, strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")), r.stderr)
	})
	// A followed file and a listener do not end: a punctuation past the
	// last window releases every match, then a signal ends the run.
	const punct = ",100000,,,,\n"
	collect := func(t *testing.T, r *liveRun) [][]string {
		lines := make([]string, total)
		for i := range lines {
			lines[i] = r.line()
		}
		r.signal(syscall.SIGINT)
		if rest, _ := r.wait(); len(rest) != 0 {
			t.Errorf("%d more matches than the sorted stream's", len(rest))
		}
		return byQuery(t, lines)
	}
	t.Run("follow", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "feed.csv")
		os.WriteFile(file, []byte(dis.stdout[:len(dis.stdout)/2]), 0o644)
		r := startLive(t, "--format", "jsonl", "-c", liveScript("LOAD '"+file+"' FOLLOW AS s WITH (slack = 20);"))
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(dis.stdout[len(dis.stdout)/2:] + punct)
		f.Close()
		got := collect(t, r)
		check(t, "follow", got, strings.Replace(r.errText(), "stopped", "ended", 1))
	})
	t.Run("tcp", func(t *testing.T) {
		t.Parallel()
		r := startLive(t, "--format", "jsonl", "-c", liveScript("LISTEN 'tcp://127.0.0.1:0' AS s WITH (slack = 20);"))
		addr := r.errLine(regexp.MustCompile(`listening on tcp://(\S+) as s`))[1]
		c, err := net.DialTimeout("tcp", addr, deadline)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte(dis.stdout + punct)); err != nil {
			t.Fatal(err)
		}
		got := collect(t, r)
		check(t, "tcp", got, r.errText())
	})
}

// TestPunctuationReleasesOnTime: on a pipe, a match waiting on a negated
// end comes out right after the punctuation line that passes its
// deadline, not before (a time equal to the deadline does not pass it),
// and before anything written after that line. Query 2 echoes marker
// events, to show how far the input has been read.
func TestPunctuationReleasesOnTime(t *testing.T) {
	t.Parallel()
	r := startLive(t, "--format", "csv", "-c", "LOAD '-' AS s; "+
		"PATTERN SEQ(A a, !B b) WITHIN 5 RETURN a.x; PATTERN SEQ(M m) WITHIN 1 RETURN m.x;")
	r.write("type,ts,x\nA,1,10\nM,2,1\n")
	for _, want := range []string{"a.x", "m.x"} { // each query's header, in either order
		if got := r.line(); got != "a.x" && got != "m.x" {
			t.Fatalf("got %q, want the header %s", got, want)
		}
	}
	if got := r.line(); got != "1" {
		t.Fatalf("got %q, want the marker 1", got)
	}
	r.write(",6,\nM,6,2\n") // time 6: A@1's window (1, 6] is still open
	if got := r.line(); got != "2" {
		t.Fatalf("got %q, want the marker 2: a time equal to the deadline released the match", got)
	}
	r.write(",7,\n")
	if got := r.line(); got != "10" {
		t.Fatalf("got %q after the punctuation at 7, want the match 10", got)
	}
	r.write("M,8,3\n")
	if got := r.line(); got != "3" {
		t.Fatalf("got %q, want the marker 3", got)
	}
	r.stdin.Close()
	if rest, code := r.wait(); code != 0 || len(rest) != 0 {
		t.Fatalf("exit %d, more output %q", code, rest)
	}
	if want := "(stream s ended: 4 lines read, 4 events used, 0 late, 0 lines rejected)"; !strings.Contains(r.errText(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.errText())
	}
}

// TestLoadSkipReport: a batch LOAD with on_error = 'skip' and a slack
// reports each left-out line and a report line that adds up.
func TestLoadSkipReport(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "in.csv")
	os.WriteFile(file, []byte("type,ts\nA,5\nB,3\nC,9\nD,2\nE,9\nF,x\nG,8\n"), 0o644)
	r := run(t, "", "--no-stocks", "-c", "LOAD '"+file+"' AS s WITH (on_error = 'skip', slack = 2); SET format = csv; SHOW STREAMS;")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	for _, want := range []string{
		"in.csv:5: late event: ts 2 is below the stream's time 7 (largest ts 9, slack 2) (line skipped)",
		`in.csv:7: bad timestamp "x"`,
		"(stream s loaded: 7 lines read, 5 events used, 1 late, 1 line rejected)",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	r = run(t, "", "--no-stocks", "-c", "LOAD '"+file+"' AS s WITH (sort = true);")
	if r.code == 0 || !strings.Contains(r.stderr, `in.csv:7: bad timestamp "x"`) {
		t.Errorf("sort = true without on_error = 'skip' loaded a bad line: %d\n%s", r.code, r.stderr)
	}
}
