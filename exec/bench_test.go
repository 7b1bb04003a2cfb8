package exec_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/output"
)

// BenchmarkSuites times each engine on the cases of `sase bench`, with
// every match enumerated (its events bound) but not printed.
func BenchmarkSuites(b *testing.B) {
	for _, name := range []string{"workloads", "fig8", "fig10", "strategies", "workers", "nested"} {
		for _, c := range bench.Suites()[name] {
			var stream *event.Stream
			for _, engine := range c.Engines {
				for _, workers := range c.RunsOn() {
					b.Run(fmt.Sprintf("%s/%s/workers=%d", c.Name, engine, workers), func(b *testing.B) {
						r := measure(b, c, &stream, engine, workers, "")
						b.ReportMetric(r.EventsPerSecond(), "events/s")
					})
				}
			}
		}
	}
}

// BenchmarkWorkers times the cases of `sase bench workers` with each of
// their sinks (count, jsonl, the callback) on each number of workers: a
// split run's hand-off, ordered merge and output, which BenchmarkSuites,
// with the callback only, leaves out. With -benchtime 1x under callgrind,
// a workers=2 run's instructions against workers=1's are the split's
// overhead (the stream's generation is counted in both).
func BenchmarkWorkers(b *testing.B) {
	for _, c := range bench.Suites()["workers"] {
		var stream *event.Stream
		for _, sink := range c.Into() {
			for _, workers := range c.RunsOn() {
				name := string(sink)
				if name == "" {
					name = "callback"
				}
				b.Run(fmt.Sprintf("%s/%s/workers=%d", c.Name, name, workers), func(b *testing.B) {
					measure(b, c, &stream, c.Engines[0], workers, sink)
				})
			}
		}
	}
}

// measure runs case c on engine and workers into sink (the callback for
// ""), making *stream when first needed (most sub-benchmarks are
// filtered out), and reports its matches and CPU per event.
func measure(b *testing.B, c bench.Case, stream **event.Stream, engine string, workers int, sink output.Format) bench.Result {
	if *stream == nil {
		*stream = c.Stream()
	}
	var r bench.Result
	for b.Loop() {
		var err error
		if r, err = bench.Measure(c, *stream, engine, workers, sink, time.Minute); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.Matches), "matches")
	b.ReportMetric(float64(r.CPUPerEvent().Nanoseconds()), "cpu-ns/event")
	return r
}

// BenchmarkEngine runs W1, W2, W2r and W2off on one worker, compiled once, with
// every match handed to a sink that keeps nothing: the engine path alone.
// allocs/op (-benchmem) is a whole run's, compiling aside; allocs/event
// and allocs/match divide it by the run's events and matches.
func BenchmarkEngine(b *testing.B) {
	w1, walk := bench.Stocks(1_000_000, 0), bench.Stocks(1_000_000, 55)
	cases := []struct {
		name, query string
		stream      func() *event.Stream
		engines     []string
	}{
		{"W1", bench.W1, w1, []string{"ais", "pais", "dynamic", "auto"}},
		{"W2", bench.W2, walk, []string{"pais", "dynamic", "auto"}},
		{"W2r", bench.W2r, walk, []string{"pais", "dynamic", "auto"}},
		{"W2off", bench.W2off, walk, []string{"pais", "dynamic", "auto"}},
	}
	streams := map[*func() *event.Stream]*event.Stream{}
	for i := range cases {
		c := &cases[i]
		for _, engine := range c.engines {
			b.Run(c.name+"/"+engine, func(b *testing.B) {
				stream := streams[&c.stream]
				if stream == nil {
					stream = c.stream()
					streams[&c.stream] = stream
				}
				q, err := bench.Compile(stream, c.query, engine)
				if err != nil {
					b.Fatal(err)
				}
				var stats *sase.Stats
				var before, after runtime.MemStats
				b.ReportAllocs()
				runtime.ReadMemStats(&before)
				for b.Loop() {
					if stats, err = q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true }, sase.WithWorkers(1)); err != nil {
						b.Fatal(err)
					}
				}
				runtime.ReadMemStats(&after)
				runs := float64(b.N)
				perRun := float64(b.Elapsed().Nanoseconds()) / runs
				allocs := float64(after.Mallocs-before.Mallocs) / runs
				b.ReportMetric(perRun/float64(stats.Events), "ns/event")
				b.ReportMetric(perRun/float64(stats.Matches), "ns/match")
				b.ReportMetric(allocs/float64(stats.Events), "allocs/event")
				b.ReportMetric(allocs/float64(stats.Matches), "allocs/match")
				b.ReportMetric(float64(stats.Matches), "matches")
			})
		}
	}
}
