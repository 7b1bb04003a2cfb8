package source_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/source"
)

// benchmarkLoad loads 1M stock rows, written by write, per iteration, and
// reports the CPU time per row (GC included), which says more than wall
// time on a shared machine.
//
//	go test ./source -run '^$' -bench 'Load(CSV|JSONL)$' -benchtime 3x -benchmem
func benchmarkLoad(b *testing.B, write func(io.Writer, source.StockConfig) error, load func(io.Reader, string, source.Options) (*event.Stream, error)) {
	cfg := source.DefaultStockConfig()
	cfg.Events = 1_000_000
	var buf bytes.Buffer
	if err := write(&buf, cfg); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		s, err := load(bytes.NewReader(data), "bench", source.Options{})
		if err != nil || len(s.Events) != cfg.Events {
			b.Fatal(err)
		}
	}
	rows := float64(cfg.Events) * float64(b.N)
	b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(rows/(cpuTime()-start).Seconds(), "rows/cpu-s")
}

func BenchmarkLoadCSV(b *testing.B) { benchmarkLoad(b, source.WriteStocksCSV, source.LoadCSV) }

func BenchmarkLoadJSONL(b *testing.B) { benchmarkLoad(b, source.WriteStocksJSONL, source.LoadJSONL) }
