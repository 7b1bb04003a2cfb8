package recepbench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/bench"
)

func TestQuery(t *testing.T) {
	want := "PATTERN SEQ(stock1 a, stock2 b, stock3 c, stock4 d) WHERE a.price > 50 AND a.price > 1.1 * b.price AND b.price < 0.9 * c.price AND c.price > 1.1 * d.price WITHIN 60"
	if got := Query(4, 60); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := Query(3, 120); got != bench.Exp1 {
		t.Errorf("Exp. 1 is %s here, %s in sase bench", got, bench.Exp1)
	}
}

// TestRun runs the experiments on a small stream: every engine agrees on
// the match counts where it ran on the same events, and the charts exist.
func TestRun(t *testing.T) {
	defer func(n, r int) { BasicEvents, Reps = n, r }(BasicEvents, Reps)
	BasicEvents, Reps = 1000, 1
	dir := t.TempDir()
	var out strings.Builder
	if err := Run(&out, dir, 3000); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		b, err := os.ReadFile(filepath.Join(dir, "recep-exp"+string(rune('0'+i))+".svg"))
		if err != nil || !strings.Contains(string(b), "<svg") {
			t.Errorf("chart %d: %v", i, err)
		}
	}
	// Every row of one x has the same match count: all ran on 3000 events.
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && f[len(f)-4] == "3000" && f[len(f)-3] == "0" {
			t.Errorf("no matches: %s", line)
		}
	}
	t.Log(out.String())
}

var benchEvents = flag.Int("recep.events", 1_000_000, "events of BenchmarkReCEP's stream")

// reCEPRuns are the experiments' queries BenchmarkReCEP and
// BenchmarkReCEPEngine run.
func reCEPRuns() []reCEPRun {
	runs := []reCEPRun{{"exp1", 3, 120}}
	for _, l := range []int{2, 4, 5, 6} {
		runs = append(runs, reCEPRun{fmt.Sprintf("exp2/length=%d", l), l, 120})
	}
	for _, w := range []int64{60, 180, 240, 300} {
		runs = append(runs, reCEPRun{fmt.Sprintf("exp3/within=%d", w), 3, w})
	}
	return runs
}

type reCEPRun struct {
	name   string
	length int
	window int64
}

// BenchmarkReCEP runs the experiments' queries on the recep engine over
// 1M events (-recep.events), every match enumerated, not printed; with
// -benchmem the allocations per op are those of one whole run.
func BenchmarkReCEP(b *testing.B) {
	stream := Stream(*benchEvents)
	for _, c := range reCEPRuns() {
		b.Run(c.name, func(b *testing.B) {
			var r Result
			for b.Loop() {
				var err error
				if r, err = Time(stream, Query(c.length, c.window), "recep", len(stream.Events), 1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(r.Matches), "matches")
			b.ReportMetric(float64(r.Time.Nanoseconds())/float64(r.Events), "ns/event")
			b.ReportMetric(float64(r.CPU.Nanoseconds())/float64(r.Events), "cpu-ns/event")
		})
	}
}

// BenchmarkReCEPEngine runs the experiments' queries on the recep engine,
// each compiled once, every match handed to a sink that keeps nothing, as
// `sase bench workloads` does: the engine path alone. For instruction
// counts run one with -test.benchtime 1x under callgrind with
// --toggle-collect=github.com/sase-cep/sase/exec.Run.
func BenchmarkReCEPEngine(b *testing.B) {
	var stream *event.Stream // made when a sub-benchmark runs
	for _, c := range reCEPRuns() {
		b.Run(c.name, func(b *testing.B) {
			// One thread: callgrind's --toggle-collect counts the thread
			// that entered exec.Run, and a goroutine may move.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if stream == nil {
				stream = Stream(*benchEvents)
			}
			q, err := bench.Compile(stream, Query(c.length, c.window), "recep")
			if err != nil {
				b.Fatal(err)
			}
			var matches int64
			b.ReportAllocs()
			for b.Loop() {
				stats, err := q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true })
				if err != nil {
					b.Fatal(err)
				}
				matches = stats.Matches
			}
			b.ReportMetric(float64(matches), "matches")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(stream.Events)), "ns/event")
		})
	}
}
