package exec_test

import (
	"context"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/exec"
	"github.com/sase-cep/sase/exec/source"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/optimizer"
	"github.com/sase-cep/sase/planner"
)

// workload is a benchmark query on a generated stock stream.
type workload struct {
	name  string
	cfg   source.StockConfig
	query string
}

func stockConfig(events, increase int) source.StockConfig {
	cfg := source.DefaultStockConfig()
	cfg.Events = events
	if increase > 0 {
		cfg.IncreaseProbability = increase
		cfg.MaxPrice = 1000
	}
	return cfg
}

var workloads = []workload{
	{"W1-100K", stockConfig(100_000, 0), "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120"},
	{"W1-1M", stockConfig(1_000_000, 0), "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120"},
	{"W2-100K", stockConfig(100_000, 55), "PATTERN SEQ(stock a, stock b, stock c) WHERE [symbol] AND a.price > 500 AND b.price > a.price AND c.price > b.price WITHIN 120"},
}

// BenchmarkWorkloads times the engine with every match enumerated (its
// events bound) but not printed; output is timed by the repl's benchmarks.
func BenchmarkWorkloads(b *testing.B) {
	for _, w := range workloads {
		stream := source.GenerateStocks("stocks", w.cfg)
		src := &ast.Source{Name: "<bench>", Text: w.query}
		q, err := grammar.ParseQuery(src)
		if err != nil {
			b.Fatal(err)
		}
		// basic has no window in SSC: on these streams it enumerates every
		// sequence of the whole stream, so it is left out.
		for _, engine := range []string{"ais", "pais", "multipais", "dynamic", "auto"} {
			b.Run(w.name+"/"+engine, func(b *testing.B) {
				var matches int64
				for b.Loop() {
					plan, err := planner.Compile(q, src, stream)
					if err != nil {
						b.Fatal(err)
					}
					if plan, err = optimizer.Optimize(plan, engine); err != nil {
						b.Fatal(err)
					}
					stats, err := exec.Run(context.Background(), plan, stream.All(), func([]exec.Cell) bool { return true })
					if err != nil {
						b.Fatal(err)
					}
					matches = stats.Matches
				}
				b.ReportMetric(float64(matches), "matches")
				b.ReportMetric(float64(len(stream.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}
