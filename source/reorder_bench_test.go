package source_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/source"
)

// benchInput is 1M stock events as CSV, shuffled within each slack
// (sorted for slack 0), made once.
var benchInput = sync.OnceValue(func() map[int64][]byte {
	var gen strings.Builder
	cfg := source.DefaultStockConfig()
	cfg.Events = 1_000_000
	if err := source.WriteStocksCSV(&gen, cfg); err != nil {
		panic(err)
	}
	header, rows := caseRows(nil, gen.String())
	in := map[int64][]byte{0: []byte(gen.String())}
	for _, slack := range []int64{10, 1000} {
		in[slack] = []byte(csvOf(header, shuffle(rand.New(rand.NewPCG(1, uint64(slack))), rows, slack)))
	}
	return in
})

// BenchmarkReorder is the cost of the reorder stage on 1M events shuffled
// within the slack, on a batch LOAD and on a live stream (standard
// input): slack 0 is today's path (a LOAD has no stage at all).
//
//	go test ./source -run '^$' -bench Reorder -benchtime 1x -benchmem
func BenchmarkReorder(b *testing.B) {
	in := benchInput()
	for _, slack := range []int64{0, 10, 1000} {
		opts := source.Options{Slack: slack}
		b.Run(fmt.Sprintf("load/slack=%d", slack), func(b *testing.B) {
			defer cpuPerOp(b)()
			for b.Loop() {
				s, err := source.LoadCSV(bytes.NewReader(in[slack]), "bench.csv", opts)
				if err != nil || len(s.Events) != 1_000_000 {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "events/s")
		})
		b.Run(fmt.Sprintf("live/slack=%d", slack), func(b *testing.B) {
			defer cpuPerOp(b)()
			for b.Loop() {
				src, err := source.Open(context.Background(), "-", source.WithStdin(bytes.NewReader(in[slack])), source.WithOptions(opts))
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				err = src.Read(context.Background(), func(batch []*event.Event) bool {
					for _, e := range batch {
						if !e.IsTick() {
							n++
						}
					}
					return true
				})
				if err != nil || n != 1_000_000 {
					b.Fatal(err, n)
				}
			}
			b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// cpuPerOp reports the process's CPU time (user and system, GC included)
// per op: on a machine shared with other work, wall time says little.
func cpuPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64((cpuTime()-start).Milliseconds())/float64(b.N), "cpu-ms/op") }
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
