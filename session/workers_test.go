package session_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/session"
)

// workersGen makes the streams of the workers' tests: walk of n events
// and uniform of 2n, n = 10,000 (20,000 with -long).
func workersGen() (gen string, n int) {
	n = testkit.Size(10_000, 20_000)
	return fmt.Sprintf("GENERATE STOCKS AS walk WITH (events = %d, symbols = 5, increase_probability = 55, max_price = 200); "+
		"GENERATE STOCKS AS uniform WITH (events = %d); ", n, 2*n), n
}

// workersQueries are TestWorkersOutput's, on workersGen's streams of n
// events: the run-time errors come three quarters into walk and past
// the middle of uniform.
func workersQueries(n int) []struct{ name, query string } {
	return []struct{ name, query string }{
		{"partitioned", "PATTERN SEQ(stock a, stock b, stock c) FROM walk WHERE [symbol] AND a.price > 100 AND b.price > a.price AND c.price > b.price WITHIN 20;"},
		{"partitioned, RETURN", "PATTERN SEQ(stock a, stock b) FROM walk WHERE [symbol] AND b.price > a.price + 2 WITHIN 10 RETURN a.symbol, a.ts, b.price - a.price AS up;"},
		{"partitioned, negation", "PATTERN SEQ(stock a, !stock n, stock b) FROM walk WHERE [symbol] AND b.price > a.price AND n.price > b.price WITHIN 8;"},
		{"segmented", "PATTERN SEQ(stock1 a, stock2 b, stock3 c) FROM uniform WHERE a.price > 80 AND c.price < 20 WITHIN 60;"},
		{"segmented, RETURN", "PATTERN SEQ(stock1 a, !stock2 n, stock3 c) FROM uniform WHERE a.price > 90 WITHIN 30 RETURN a.ts, c.ts, c.price;"},
		{"run-time error", fmt.Sprintf("PATTERN SEQ(stock a, stock b) FROM walk WHERE [symbol] AND b.price / (a.ts - %d) > 0 WITHIN 5;", n*3/4+11)},
		{"run-time error, segmented", fmt.Sprintf("PATTERN SEQ(stock1 a, stock2 b) FROM uniform WHERE a.ts > %d AND b.price / (a.ts %% 997) > 0 WITHIN 20;", n)},
	}
}

// TestWorkersOutput runs partitioned and segmented queries through the
// session in the formats whose rows the workers encode (jsonl, csv) or
// count, and in a table (the merge's rows): the output, to the byte, and
// the summary are those of one worker for 2 and 7 workers, with a limit
// (exactly the first matches of one worker's order), with RETURN (which
// decides a match's worker on its binding) and with a run-time error
// (the first in stream order). With order = 'any' the matches are the
// same multiset.
func TestWorkersOutput(t *testing.T) {
	t.Parallel() // its queries run in sessions of their own
	gen, n := workersGen()
	for _, q := range workersQueries(n) {
		t.Run(q.name, func(t *testing.T) {
			t.Parallel() // each query runs in its own session
			// One session generates the streams once; each run sets
			// every setting it reads (order too), so that none is left
			// from the run before.
			s, stdout, stderr := newSession(t)
			if err := exec(t, s, gen); err != nil {
				t.Fatal(err)
			}
			run := func(t *testing.T, settings, query string) (string, string, error) {
				t.Helper()
				if err := exec(t, s, "SET order = 'stream'; "+settings); err != nil {
					t.Fatal(err)
				}
				stdout.Reset()
				stderr.Reset()
				err := exec(t, s, query)
				return stdout.String(), stderr.String(), err
			}
			split := 0
			for _, format := range []string{"jsonl", "csv", "count", "table"} {
				for _, limit := range []string{"0", "1", "777"} {
					set := "SET format = " + format + "; SET limit = " + limit + "; "
					want, wantErr, err1 := run(t, set+"SET workers = 1; ", q.query)
					if limit == "0" && strings.Contains(q.name, "error") != (err1 != nil) {
						t.Fatalf("%s: one worker: %v, %s", q.name, err1, wantErr)
					}
					if format == "count" && limit == "0" && err1 == nil && strings.HasPrefix(want, "0\n") {
						t.Fatalf("%s: no matches", q.name)
					}
					for _, workers := range []string{"2", "7"} {
						settings := set + "SET workers = " + workers + "; "
						got, gotErr, err := run(t, settings, q.query)
						if got != want || fmt2(err) != fmt2(err1) || gotErr != wantErr {
							t.Errorf("%s, %s, limit %s, %s workers: %d bytes (%q...), %v, %q; one worker %d bytes (%q...), %v, %q",
								q.name, format, limit, workers, len(got), head(got), err, gotErr, len(want), head(want), err1, wantErr)
						}
						split++
						if err1 != nil || limit != "0" || format == "table" {
							continue
						}
						got, _, err = run(t, settings+"SET order = 'any'; ", q.query)
						if err != nil || !sameLines(got, want) {
							t.Errorf("%s, %s, %s workers, order = 'any': %v, not the same matches", q.name, format, workers, err)
						}
					}
				}
			}
			if split == 0 {
				t.Fatal("nothing ran")
			}
		})
	}
}

func fmt2(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func head(s string) string { return s[:min(len(s), 80)] }

// sameLines says whether a and b have the same lines, in any order.
func sameLines(a, b string) bool {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	slices.Sort(la)
	slices.Sort(lb)
	return slices.Equal(la, lb)
}

// TestWorkersCancel: a cancel (Ctrl-C) stops a split query promptly, in
// the formats whose rows the workers encode and in a table.
func TestWorkersCancel(t *testing.T) {
	for _, format := range []string{"jsonl", "count", "table"} {
		for _, query := range []string{
			"PATTERN SEQ(stock a, stock b, stock c) FROM walk WHERE [symbol] WITHIN 100000;",
			"PATTERN SEQ(stock1 a, stock2 b, stock3 c) FROM uniform WITHIN 100000;",
		} {
			s, _, stderr := newSession(t, session.TrackProgress())
			if err := exec(t, s, "GENERATE STOCKS AS walk WITH (events = 200000, symbols = 5, increase_probability = 55); GENERATE STOCKS AS uniform WITH (events = 200000); SET workers = 2; SET format = "+format+";"); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { done <- s.Exec(ctx, &ast.Source{Name: "<test>", Text: query}) }()
			// Cancel once the query runs: a cancel before the statement
			// starts skips it instead (a loaded machine may take that long).
			for _, running := s.Progress(); !running; _, running = s.Progress() {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond)
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, session.ErrFailed) || !strings.Contains(stderr.String(), "query cancelled after") {
					t.Errorf("%s, %s: cancelled: %v, %s", format, query, err, stderr)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s, %s: still running 10 s after the cancel", format, query)
			}
		}
	}
}

// TestWorkersAuto: workers = auto splits a query over the CPUs where its
// workers encode or count the matches themselves (jsonl, csv, a count
// without a limit), and runs it on one worker elsewhere (a table, a count
// with a limit, EXPLAIN ANALYZE): EXPLAIN says so, or has no Parallel
// line for one worker. It gives each worker 65536 events at least
// (docs/LANGUAGE.md, workers): a smaller stream runs on fewer workers, on
// one with a Parallel line that says why.
func TestWorkersAuto(t *testing.T) {
	const perWorker = 65536
	cpus := runtime.NumCPU()
	split := func(n int) string {
		if n = min(n, cpus); n > 1 {
			return fmt.Sprintf("Parallel: %d workers, partitioned by [symbol]\n", n)
		}
		return ""
	}
	one := func(events int) string {
		if cpus == 1 {
			return "" // auto is one worker, whatever the stream
		}
		return fmt.Sprintf("Parallel: one worker (workers = auto and %d events: a split needs %d a worker)\n", events, perWorker)
	}
	query := "PATTERN SEQ(stock a, stock b) FROM walk WHERE [symbol] AND b.price > a.price WITHIN 5;"
	for _, c := range []struct {
		events            int
		settings, explain string
		want              string
	}{
		{2 * perWorker, "SET format = jsonl;", "EXPLAIN", split(2)},
		{2 * perWorker, "SET format = csv;", "EXPLAIN", split(2)},
		{2 * perWorker, "SET format = count;", "EXPLAIN", split(2)},
		{2 * perWorker, "SET format = count; SET limit = 10;", "EXPLAIN", ""},
		{2 * perWorker, "SET format = table;", "EXPLAIN", ""},
		{2 * perWorker, "SET format = count;", "EXPLAIN ANALYZE", ""},
		{3*perWorker - 1, "SET format = jsonl;", "EXPLAIN", split(2)},
		{2*perWorker - 1, "SET format = jsonl;", "EXPLAIN", one(2*perWorker - 1)},
		{2000, "SET format = count;", "EXPLAIN", one(2000)},
		{2000, "SET format = table;", "EXPLAIN", ""},
		// SET workers splits a stream of any size.
		{2000, "SET format = table; SET workers = 2;", "EXPLAIN", "Parallel: 2 workers, partitioned by [symbol]\n"},
	} {
		if got := parallelLine(t, c.events, c.settings+" "+c.explain+" "+query); got != c.want {
			t.Errorf("%d events, %s %s: split %q, want %q", c.events, c.settings, c.explain, got, c.want)
		}
	}
	// Hundreds of matches an event: their output costs more than a split
	// saves (planner.Split.Auto), and EXPLAIN gives the estimate; workers
	// that count them in bulk still split.
	many := "EXPLAIN PATTERN SEQ(stock a, stock b, stock c) FROM walk WHERE [symbol] WITHIN 100;"
	for _, c := range []struct{ settings, want string }{
		{"SET format = jsonl;", "Parallel: one worker (workers = auto and an estimated "},
		{"SET format = csv;", "Parallel: one worker (workers = auto and an estimated "},
		{"SET format = count;", split(2)},
	} {
		got := parallelLine(t, 2*perWorker, c.settings+" "+many)
		if cpus == 1 && got != "" || cpus > 1 && !strings.HasPrefix(got, c.want) {
			t.Errorf("%s %s: split %q, want %q...", c.settings, many, got, c.want)
		}
	}
}

// parallelLine runs statements on a walk of events stock events with
// workers = auto and returns EXPLAIN's Parallel line, if any.
func parallelLine(t *testing.T, events int, statements string) string {
	t.Helper()
	s, stdout, _ := newSession(t)
	gen := fmt.Sprintf("GENERATE STOCKS AS walk WITH (events = %d, symbols = 5, increase_probability = 55); SET workers = auto; ", events)
	if err := exec(t, s, gen+statements); err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile(`(?m)^Parallel: .*\n`).FindString(stdout.String())
}

// TestWorkersOutputFile: results that go to a file, as standard output or
// \o's, which takes a split run's rows in vectored writes (writev on
// Linux), are those that one worker writes to a buffer, to the byte, after
// what the session wrote before them (SHOW STREAMS), for 1, 2 and 7
// workers, in the formats whose rows the workers encode, with limits.
func TestWorkersOutputFile(t *testing.T) {
	t.Parallel() // its queries run in sessions of their own
	gen, n := workersGen()
	for _, q := range workersQueries(n) {
		t.Run(q.name, func(t *testing.T) {
			t.Parallel() // each query runs in its own sessions and folder
			dir := t.TempDir()
			for _, format := range []string{"jsonl", "csv"} {
				for _, limit := range []string{"0", "777"} {
					set := "SET format = " + format + "; SET limit = " + limit + "; SET workers = 1; "
					s, stdout, _ := newSession(t)
					if err := exec(t, s, gen+set); err != nil {
						t.Fatal(err)
					}
					stdout.Reset()
					err1 := exec(t, s, "SHOW STREAMS; "+q.query)
					want := stdout.String()
					for _, workers := range []string{"1", "2", "7"} {
						settings := set + "SET workers = " + workers + "; "
						for _, via := range []string{"stdout", `\o`} {
							name := filepath.Join(dir, "out")
							f, err := os.Create(name)
							if err != nil {
								t.Fatal(err)
							}
							s := newSessionTo(t, f, io.Discard)
							script := gen + settings + "SHOW STREAMS; " + q.query
							if via == `\o` {
								s = newSessionTo(t, io.Discard, io.Discard)
								script = gen + settings + `\o ` + name + "\nSHOW STREAMS; " + q.query + "\n\\o\n"
							}
							err = exec(t, s, script)
							f.Close()
							got, rerr := os.ReadFile(name)
							if rerr != nil {
								t.Fatal(rerr)
							}
							if string(got) != want || (err == nil) != (err1 == nil) {
								t.Errorf("%s, %s, limit %s, %s workers, to a file (%s): %d bytes (%q...), %v; to a buffer %d bytes (%q...), %v",
									q.name, format, limit, workers, via, len(got), head(string(got)), err, len(want), head(want), err1)
							}
						}
					}
				}
			}
		})
	}
}

// TestWorkersReleasedTogether: the matches that time releases together
// (a partitioned query with a negated end, released at the stream's end)
// come in partition-value order, byte for byte the same for 1, 2 and 3
// workers, on every engine (issue 29's reproducer).
func TestWorkersReleasedTogether(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.csv")
	if err := os.WriteFile(path, []byte("type,ts,sym\nS,1,2\nS,2,1\nS,3,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := `{"a":{"type":"S","ts":2,"seq":1,"sym":1}}
{"a":{"type":"S","ts":1,"seq":0,"sym":2}}
{"a":{"type":"S","ts":3,"seq":2,"sym":3}}
`
	for _, engine := range sase.EngineNames() {
		for _, workers := range []string{"1", "2", "3"} {
			s, stdout, stderr := newSession(t)
			script := fmt.Sprintf("LOAD '%s' AS s; SET format = jsonl; SET engine = %s; SET workers = %s; PATTERN SEQ(S a, !(S m)) WHERE [sym] WITHIN 10;", path, engine, workers)
			if err := exec(t, s, script); err != nil {
				t.Fatalf("%s, %s workers: %v\n%s", engine, workers, err, stderr)
			}
			if got := stdout.String(); got != want {
				t.Errorf("%s, %s workers:\n%s\nwant\n%s", engine, workers, got, want)
			}
		}
	}
}
