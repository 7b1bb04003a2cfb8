package exec_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/exec"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/source"
)

// TestChunksWorkers: a split run's rows, encoded by its workers and handed
// to Chunks.Put as ranges of several results' bytes, are those of one
// worker's run, in its order, to the byte: partitioned and time-segmented
// runs on 2 and 7 workers, with limits that cut inside a run, and with a
// Put that stops the run (its rows then a prefix of them).
func TestChunksWorkers(t *testing.T) {
	walk := source.DefaultStockConfig()
	walk.Events, walk.Symbols, walk.MaxPrice, walk.IncreaseProbability = 20000, 5, 200, 55
	uniform := source.DefaultStockConfig()
	uniform.Events = 40000
	defer exec.SetSegments(1000, 0)()
	for _, tc := range []struct {
		cfg   source.StockConfig
		query string
	}{
		{walk, "PATTERN SEQ(stock a, stock b, stock c) WHERE [symbol] AND a.price > 100 AND b.price > a.price AND c.price > b.price WITHIN 20"},
		{uniform, "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WHERE a.price > 80 AND c.price < 50 WITHIN 60"},
	} {
		query, stream := tc.query, source.GenerateStocks("s", tc.cfg)
		cq, err := sase.Compile(query, stream)
		if err != nil {
			t.Fatal(err)
		}
		binding := randquery.Binder(cq.Columns())
		encode := func(b []byte, row []sase.Cell) []byte {
			return append(append(b, binding(row)...), '\n')
		}
		var one []string
		if _, err := cq.Run(context.Background(), stream.All(), func(row []sase.Cell) bool {
			one = append(one, string(encode(nil, row)))
			return true
		}, sase.WithWorkers(1)); err != nil {
			t.Fatal(err)
		}
		if len(one) < 5000 {
			t.Fatalf("%s: %d matches, too few to cut", query, len(one))
		}
		for _, workers := range []int{2, 7} {
			for _, limit := range []int64{0, 1, 777, int64(len(one)) - 1} {
				for _, stop := range []int{0, 3} {
					var got strings.Builder
					rows, puts := 0, 0
					c := &sase.Chunks{NewEncoder: func() sase.Encode { return encode }, Limit: limit, Put: func(bufs [][]byte, n int) bool {
						for _, b := range bufs {
							got.Write(b)
						}
						rows += n
						puts++
						return puts != stop
					}}
					stats, err := cq.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true }, sase.WithWorkers(workers), sase.WithChunks(c))
					if err != nil {
						t.Fatal(err)
					}
					want := one
					if limit > 0 {
						want = one[:limit]
					}
					if stop > 0 && puts == stop {
						want = want[:min(len(want), rows)]
					}
					if s := strings.Join(want, ""); got.String() != s || rows != len(want) || stats.Matches != int64(rows) {
						t.Errorf("%s, %d workers, limit %d, stop at Put %d: %d rows (stats %d), %d bytes; want %d rows, %d bytes",
							query, workers, limit, stop, rows, stats.Matches, got.Len(), len(want), len(s))
					}
					if stats.Split == nil || stats.Split.Workers != workers {
						t.Errorf("%s: split %v", query, stats.Split)
					}
				}
			}
		}
	}
}
