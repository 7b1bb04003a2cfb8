package bench

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/source"
)

// TestMeasureAgrees runs a small Figure 10 case on every engine it names:
// all must report the same matches, and none may be cut by the limit.
func TestMeasureAgrees(t *testing.T) {
	c := Case{Name: "small", Stream: Partitioned(3000, 10, 4), Query: "PATTERN SEQ(A a, B b, C c) WHERE [a1] AND [a2] WITHIN 300",
		Engines: []string{"nfa", "ais", "pais", "multipais", "dynamic", "auto"}}
	stream := c.Stream()
	var want int64 = -1
	for _, engine := range c.Engines {
		r, err := Measure(c, stream, engine, 1, "", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if r.Stopped || r.Events != 3000 {
			t.Fatalf("%s: read %d events, stopped %v", engine, r.Events, r.Stopped)
		}
		if want < 0 {
			want = r.Matches
		}
		if r.Matches != want || want == 0 {
			t.Errorf("%s: %d matches, want %d (and more than 0)", engine, r.Matches, want)
		}
	}
}

// TestMeasureSinks runs a small split case (10,000 events, 50,000 with
// -long) into each kind of sink, on one worker and two: the writers into
// a file take every match the callback does, and leave no file behind.
func TestMeasureSinks(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	c := Case{Name: "small", Stream: StocksOf(testkit.Size(10_000, 50_000), 55, 10), Query: W2}
	stream := c.Stream()
	want, err := Measure(c, stream, "auto", 1, "", time.Minute)
	if err != nil || want.Matches == 0 {
		t.Fatalf("the callback: %d matches, %v", want.Matches, err)
	}
	for _, sink := range []output.Format{output.Count, output.JSONL, output.CSV} {
		for _, workers := range []int{1, 2} {
			r, err := Measure(c, stream, "auto", workers, sink, time.Minute)
			if err != nil || r.Matches != want.Matches {
				t.Errorf("%s on %d workers: %d matches, %v; want %d", sink, workers, r.Matches, err, want.Matches)
			}
		}
	}
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestRunUnknownSuite(t *testing.T) {
	var out bytes.Buffer
	if err := Run(&out, []string{"fig99"}, time.Second); err == nil || !strings.Contains(err.Error(), "unknown suite") {
		t.Errorf("got %v", err)
	}
}

// rowWriter records each Write, and whether every one is a whole line.
type rowWriter struct {
	writes []string
}

func (w *rowWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

// TestRunSuitePrintsEachRow checks that a suite's table is printed a row
// at a time, each row written as one line as its run ends, all aligned.
func TestRunSuitePrintsEachRow(t *testing.T) {
	c := Case{Name: "tiny", Stream: Partitioned(500, 10, 0), Query: "PATTERN SEQ(A a, B b) WHERE [a1] WITHIN 50", Engines: []string{"nfa", "multipais"}}
	var w rowWriter
	if _, err := runSuite(&w, "test", []Case{c}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if len(w.writes) != 5 || !strings.HasPrefix(w.writes[0], "== test ") || w.writes[4] != "\n" {
		t.Fatalf("writes %q", w.writes)
	}
	header, rows := w.writes[1], w.writes[2:4]
	for i, r := range rows {
		if utf8.RuneCountInString(r) != utf8.RuneCountInString(header) || !strings.HasSuffix(r, " MB\n") || strings.Count(r, "\n") != 1 {
			t.Errorf("row %d %q does not line up with %q", i, r, header)
		}
	}
	if !strings.Contains(rows[0], " nfa ") || !strings.Contains(rows[1], " multipais ") || !strings.HasPrefix(header, "case     engine ") {
		t.Errorf("header %q rows %q", header, rows)
	}
}

// TestRunSuitePaper checks that a case with a paper's time shows each
// engine's speed-up over it, and says whose time it is.
func TestRunSuitePaper(t *testing.T) {
	c := Case{Name: "tiny", Stream: Partitioned(500, 10, 0), Query: "PATTERN SEQ(A a, B b) WHERE [a1] WITHIN 50", Engines: []string{"recep"}, Paper: time.Hour}
	var w rowWriter
	if _, err := runSuite(&w, "test", []Case{c}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if len(w.writes) != 5 {
		t.Fatalf("writes %q", w.writes)
	}
	header, row, note := w.writes[1], w.writes[2], w.writes[3]
	// The cell is as wide as its column unless the speed-up has more
	// digits than Exp. 1's.
	if !strings.HasSuffix(header, " vs paper\n") || utf8.RuneCountInString(row) < len(header) || !strings.HasSuffix(row, "× faster\n") {
		t.Errorf("header %q row %q", header, row)
	}
	if note != "vs paper: tiny took 1h0m0s in its paper, on its machine\n" {
		t.Errorf("note %q", note)
	}
}

// TestW1Floor checks that the hand-written W1 loop finds the engines'
// matches, on windows that hold none, some and many.
func TestW1Floor(t *testing.T) {
	stream := Stocks(20_000, 0)()
	for _, w := range []int64{1, 2, 30, 120} {
		q := strings.Replace(W1, "WITHIN 120", "WITHIN "+strconv.FormatInt(w, 10), 1)
		r, err := Measure(Case{Query: q}, stream, "auto", 1, "", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		var bind [3]*event.Event
		n, err := W1Floor(stream, w, &bind)
		if err != nil || n != r.Matches {
			t.Errorf("WITHIN %d: floor %d matches (%v), engine %d", w, n, err, r.Matches)
		}
	}
}

// BenchmarkW1Floor is the floor of W1 on 1M events: every one of its
// 7,073,891 matches bound, none printed.
func BenchmarkW1Floor(b *testing.B) {
	stream := Stocks(1_000_000, 0)()
	var bind [3]*event.Event
	b.ReportAllocs()
	for b.Loop() {
		if n, err := W1Floor(stream, 120, &bind); err != nil || n != 7_073_891 {
			b.Fatal(n, err)
		}
	}
}

// TestMeasureIO checks the io suite's runs on a small stream: every
// format writes every match (count its number alone), and a load reads
// every row.
func TestMeasureIO(t *testing.T) {
	stream := Stocks(5000, 0)()
	for _, f := range []output.Format{output.Count, output.CSV, output.JSONL} {
		r, err := MeasureOutput(stream, W1, f)
		if err != nil {
			t.Fatal(err)
		}
		var bind [3]*event.Event
		want, _ := W1Floor(stream, 120, &bind)
		if r.Rows != want || want == 0 || r.Bytes < want && f != output.Count || f == output.Count && r.Bytes != int64(len(strconv.FormatInt(want, 10))+1) {
			t.Errorf("%s: %d rows in %d bytes, want %d rows", f, r.Rows, r.Bytes, want)
		}
	}
	cfg := source.DefaultStockConfig()
	cfg.Events = 3000
	var data bytes.Buffer
	if err := source.WriteStocksJSONL(&data, cfg); err != nil {
		t.Fatal(err)
	}
	if r, err := MeasureLoad(data.Bytes(), source.LoadJSONL); err != nil || r.Rows != 3000 || r.PerEvent <= 0 {
		t.Errorf("load: %+v, %v", r, err)
	}
}

// TestMedian checks which run median reports, and how many it makes: a
// short run is repeated to three, a very short one to eleven, and the
// middle one kept; a long run, a run cut by the limit, or an error stops
// the repeats.
func TestMedian(t *testing.T) {
	ms := time.Millisecond
	fail := errors.New("boom")
	for _, tc := range []struct {
		name  string
		runs  []Result
		errAt int // the run that fails, -1 none
		want  Result
		calls int
	}{
		{"short: the middle of three", []Result{{Elapsed: 30 * ms}, {Elapsed: 10 * ms}, {Elapsed: 20 * ms}}, -1, Result{Elapsed: 20 * ms}, 3},
		{"very short: the middle of eleven", []Result{{Elapsed: 5 * ms}, {Elapsed: 9 * ms}, {Elapsed: 1 * ms}, {Elapsed: 30 * ms}, {Elapsed: 2 * ms},
			{Elapsed: 8 * ms}, {Elapsed: 3 * ms}, {Elapsed: 7 * ms}, {Elapsed: 4 * ms}, {Elapsed: 6 * ms}, {Elapsed: 10 * ms}}, -1, Result{Elapsed: 6 * ms}, 11},
		{"long: one run", []Result{{Elapsed: 2 * time.Second}}, -1, Result{Elapsed: 2 * time.Second}, 1},
		{"cut first", []Result{{Elapsed: 5 * ms, Stopped: true}}, -1, Result{Elapsed: 5 * ms, Stopped: true}, 1},
		{"cut second", []Result{{Elapsed: 25 * ms}, {Elapsed: 7 * ms, Stopped: true}}, -1, Result{Elapsed: 7 * ms, Stopped: true}, 2},
		{"error second", []Result{{Elapsed: 25 * ms}, {}}, 1, Result{}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			got, err := median(func() (Result, error) {
				calls++
				if calls-1 == tc.errAt {
					return Result{}, fail
				}
				return tc.runs[calls-1], nil
			})
			if (err != nil) != (tc.errAt >= 0) || got != tc.want || calls != tc.calls {
				t.Errorf("got %+v, %v after %d calls; want %+v after %d", got, err, calls, tc.want, tc.calls)
			}
		})
	}
}

func TestAgainstOne(t *testing.T) {
	one := Result{Events: 1000, Elapsed: 2 * time.Second, CPU: 2 * time.Second}
	for _, c := range []struct {
		name         string
		r            Result
		speedUp, cpu string
	}{
		{"whole", Result{Events: 1000, Elapsed: time.Second, CPU: 3 * time.Second}, "2.00×", "1.50×"},
		// Cut at the same time limit, it read three times the events.
		{"cut", Result{Events: 3000, Elapsed: 2 * time.Second, CPU: 3 * time.Second}, "3.00×", "0.50×"},
		{"no events", Result{Elapsed: time.Second, CPU: time.Second}, "", ""},
	} {
		s, cpu := againstOne(c.r, one)
		if s != c.speedUp || cpu != c.cpu {
			t.Errorf("%s: againstOne = %q, %q; want %q, %q", c.name, s, cpu, c.speedUp, c.cpu)
		}
	}
}
