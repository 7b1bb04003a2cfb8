package rowpattern_test

import (
	"testing"
	"time"

	"github.com/sase-cep/sase/internal/bench"
)

// BenchmarkMR runs `sase bench mr`'s cases, reporting events/s.
func BenchmarkMR(b *testing.B) {
	stream := bench.MRStream()
	for _, c := range bench.MRCases {
		q, err := bench.CompileMR(stream, c.Query)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.Name, func(b *testing.B) {
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				r, err := bench.MeasureMR(q, stream, 1)
				if err != nil {
					b.Fatal(err)
				}
				cpu += r.CPU
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(len(stream.Events)), "CPU-ns/event")
			b.ReportMetric(float64(b.N)*float64(len(stream.Events))/b.Elapsed().Seconds(), "events/s")
		})
	}
}
