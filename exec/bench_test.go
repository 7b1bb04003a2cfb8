package exec_test

import (
	"testing"
	"time"

	"github.com/sase-cep/sase/internal/bench"
)

// BenchmarkSuites times each engine on the cases of `sase bench`, with
// every match enumerated (its events bound) but not printed.
func BenchmarkSuites(b *testing.B) {
	for _, name := range []string{"workloads", "fig8", "fig10", "strategies"} {
		for _, c := range bench.Suites()[name] {
			stream := c.Stream()
			for _, engine := range c.Engines {
				b.Run(c.Name+"/"+engine, func(b *testing.B) {
					var r bench.Result
					for b.Loop() {
						var err error
						if r, err = bench.Measure(c, stream, engine, time.Minute); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(r.Matches), "matches")
					b.ReportMetric(r.EventsPerSecond(), "events/s")
				})
			}
		}
	}
}
