package rowpattern_test

import (
	"testing"

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
			for b.Loop() {
				if _, err := bench.MeasureMR(q, stream, 1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(len(stream.Events))/b.Elapsed().Seconds(), "events/s")
		})
	}
}
