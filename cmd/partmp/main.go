package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/source"
)

func main() {
	workers := flag.Int("w", 2, "")
	q := flag.String("q", "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120", "")
	mem := flag.String("mem", "", "")
	inc := flag.Int("inc", 0, "")
	sym := flag.Int("sym", 10, "")
	n := flag.Int("n", 1000000, "")
	format := flag.String("f", "count", "")
	flag.Parse()
	cfg := source.DefaultStockConfig()
	cfg.Events, cfg.Symbols = *n, *sym
	if *inc > 0 {
		cfg.IncreaseProbability, cfg.MaxPrice = *inc, 1000
	}
	stream := source.GenerateStocks("stocks", cfg)
	cq, err := sase.Compile(*q, stream)
	if err != nil {
		panic(err)
	}
	runtime.MemProfileRate = 64 << 10
	var cols []output.Column
	for _, c := range cq.Columns() {
		cols = append(cols, output.Column{Name: c.Name, Kind: output.Event})
	}
	w := output.New(output.Format(*format), io.Discard, output.Schema{Columns: cols, Events: stream.Schema})
	c := output.ChunksOf(w, 0, func(int) {})
	cpu0 := bench.CPUTime()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	st, err := cq.Run(context.Background(), stream.All(), func(row []sase.Cell) bool { return w.Row(row) == nil }, sase.WithWorkers(*workers), sase.WithChunks(c))
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	fmt.Println("cpu", bench.CPUTime()-cpu0, st.Matches, err, st.Elapsed, "alloc MB", (after.TotalAlloc-before.TotalAlloc)>>20, "gc", after.NumGC-before.NumGC)
	if *mem != "" {
		f, _ := os.Create(*mem)
		pprof.Lookup("allocs").WriteTo(f, 0)
		f.Close()
	}
}
