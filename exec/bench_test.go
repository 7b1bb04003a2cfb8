package exec_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sase-cep/sase/internal/bench"
)

// BenchmarkSuites times each engine on the cases of `sase bench`, with
// every match enumerated (its events bound) but not printed.
func BenchmarkSuites(b *testing.B) {
	for _, name := range []string{"workloads", "fig8", "fig10", "strategies", "workers"} {
		for _, c := range bench.Suites()[name] {
			stream := c.Stream()
			for _, engine := range c.Engines {
				for _, workers := range c.RunsOn() {
					b.Run(fmt.Sprintf("%s/%s/workers=%d", c.Name, engine, workers), func(b *testing.B) {
						var r bench.Result
						for b.Loop() {
							var err error
							if r, err = bench.Measure(c, stream, engine, workers, time.Minute); err != nil {
								b.Fatal(err)
							}
						}
						b.ReportMetric(float64(r.Matches), "matches")
						b.ReportMetric(r.EventsPerSecond(), "events/s")
						b.ReportMetric(float64(r.CPUPerEvent().Nanoseconds()), "cpu-ns/event")
					})
				}
			}
		}
	}
}
