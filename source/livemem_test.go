package source_test

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/source"
)

// liveRetained reads in, stock CSV, as a live stream (standard input)
// holding the last window events, as a query's window does, and returns
// the most a collection leaves on the heap above what it left before the
// stream, measured every `every` events (the measuring is not timed).
func liveRetained(tb testing.TB, in []byte, window, every int) uint64 {
	b, _ := tb.(*testing.B)
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	src, err := source.Open(context.Background(), "-", source.WithStdin(bytes.NewReader(in)))
	if err != nil {
		tb.Fatal(err)
	}
	held := make([]*event.Event, window)
	var most uint64
	n := 0
	err = src.Read(context.Background(), func(batch []*event.Event) bool {
		for _, e := range batch {
			if e.IsTick() {
				continue
			}
			held[n%window] = e
			if n++; n%every == 0 {
				if b != nil {
					b.StopTimer()
				}
				most = max(most, heap())
				if b != nil {
					b.StartTimer()
				}
			}
		}
		return true
	})
	if err != nil {
		tb.Fatal(err)
	}
	runtime.KeepAlive(held)
	return most - min(most, before)
}

// stockCSV is n stock events as CSV.
func stockCSV(tb testing.TB, n int) []byte {
	var gen strings.Builder
	cfg := source.DefaultStockConfig()
	cfg.Events = n
	if err := source.WriteStocksCSV(&gen, cfg); err != nil {
		tb.Fatal(err)
	}
	return []byte(gen.String())
}

// TestLiveMemory checks that a live stream's events are freed as a query
// lets go of them: holding a window of 1000 events, what a collection
// leaves stays within a few of the arena's live blocks (each 4096 events
// and their values, under half a megabyte) above the heap before the
// stream. Blocks of a loaded stream's size (3 MB of events, 2 MB of
// values, as much allocated ahead), and values kept a collection longer
// than their events, had the README's 20M-event live example at 150 MB.
func TestLiveMemory(t *testing.T) {
	const bound = 4 << 20
	if got := liveRetained(t, stockCSV(t, 600_000), 1000, 50_000); got > bound {
		t.Fatalf("a live stream holding 1000 events: %.1f MB more after a collection, want at most %d MB", float64(got)/(1<<20), bound>>20)
	}
}

// BenchmarkLiveMemory is a live stream of 1M stock events holding a
// window of 1000, with the most a collection leaves on the heap above
// what it left before (every 100K events, not timed).
//
//	go test ./source -run '^$' -bench LiveMemory -benchtime 3x
func BenchmarkLiveMemory(b *testing.B) {
	in := benchInput()[0]
	var most uint64
	for b.Loop() {
		most = max(most, liveRetained(b, in, 1000, 100_000))
	}
	b.ReportMetric(float64(most)/(1<<20), "retained-MB")
	b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "events/s")
}
