package exec_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/exec"
	"github.com/sase-cep/sase/source"
)

// TestCancelInsideSearch cancels, on every engine, a query whose search
// runs for a long time (tens of seconds without the checks inside the
// search) on one event after another: 30 components over 1,000 stock
// events with a check between the first and the last, so the event loop
// alone would look at ctx only once. The run
// must stop soon after the cancel; the bound is loose so that a loaded
// machine does not fail it, and the latency is logged.
func TestCancelInsideSearch(t *testing.T) {
	cfg := source.DefaultStockConfig()
	cfg.Events = 1000
	stream := source.GenerateStocks("stocks", cfg)
	comps := make([]string, 30)
	for i := range comps {
		comps[i] = fmt.Sprintf("stock%d c%d", i%10+1, i)
	}
	pattern := "PATTERN SEQ(" + strings.Join(comps, ", ") + ")"
	// The cancel comes this long after the run has read as many events
	// as the pattern has components (the first a match can end at): past
	// the event loop's one look at ctx, so only the search's checks stop
	// the run (dropping them fails this), and without a fixed wait from the
	// start spent searching (once 100 ms: 1.7 s of CPU over the engines).
	const after, bound = 20 * time.Millisecond, 2 * time.Second
	for _, tc := range []struct {
		name, query string
		skip        []string // engines that need not search long for it
	}{
		// The AIS engines' bound per state enumerates this one's
		// 3,548,160 matches in a fraction of a second (auto runs AIS here).
		{"", pattern + " WITHIN 200", []string{"ais", "pais", "multipais", "dynamic", "auto"}},
		// Prices are at most 100, so no sequence passes the check, which
		// the AIS engines test at state 0, after the rest of the search
		// (with the evaluator: a float constant, where an int one is
		// tested on int keys, as fast as the search without a check);
		// ReCEP (and auto, which runs it here) filters it early.
		{"/checked", pattern + " WHERE c0.price > c29.price + 100.5 WITHIN 200", []string{"recep", "auto"}},
		// A strategy plan runs the run scan whatever the engine.
		{"/any-match", pattern + " WHERE skip-till-any-match WITHIN 200", nil},
	} {
		for _, e := range sase.Engines {
			if slices.Contains(tc.skip, e.Name) {
				continue
			}
			query := tc.query
			t.Run(e.Name+tc.name, func(t *testing.T) {
				q, err := sase.Compile(query, stream, sase.WithEngine(e))
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				cancelled := make(chan time.Time, 1)
				events := func(yield func(*event.Event) bool) {
					for i, e := range stream.Events {
						if i == len(comps) {
							time.AfterFunc(after, func() {
								cancelled <- time.Now()
								cancel()
							})
						}
						if !yield(e) {
							return
						}
					}
				}
				_, err = q.Run(ctx, events, func([]sase.Cell) bool { return true })
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("got %v, want the cancel", err)
				}
				took := time.Since(<-cancelled)
				if took > bound {
					t.Errorf("stopped %s after the cancel, want within %s", took, bound)
				}
				t.Logf("stopped %s after the cancel", took)
			})
		}
	}
}

// TestRunIteratorGoesOn runs over an iterator that ignores yield's false
// and goes on: the run, stopped by its cancelled ctx at the first event,
// must read no event after it and return ctx's error.
func TestRunIteratorGoesOn(t *testing.T) {
	cfg := source.DefaultStockConfig()
	cfg.Events = 100
	stream := source.GenerateStocks("stocks", cfg)
	q, err := sase.Compile("PATTERN SEQ(stock1 a, stock2 b) WITHIN 10", stream)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	yielded := 0
	stubborn := func(yield func(*event.Event) bool) {
		for _, e := range stream.Events {
			yielded++
			yield(e) // its false ignored
		}
	}
	stats, err := q.Run(ctx, stubborn, func([]sase.Cell) bool { return true }, sase.WithWorkers(1))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want %v", err, context.Canceled)
	}
	if stats.Events != 0 || yielded != len(stream.Events) {
		t.Errorf("read %d events of %d yielded, want 0 of %d", stats.Events, yielded, len(stream.Events))
	}
}

// TestCancelCountsEvents is issue 30's ninth defect: a run split into time
// segments, cancelled before its first segment was merged whole, said it
// had read 0 events ("query cancelled after 0 events"). It has read at
// least the events of the matches it wrote, and at most the stream.
func TestCancelCountsEvents(t *testing.T) {
	defer exec.SetSegments(1000, 0)()
	cfg := source.DefaultStockConfig()
	cfg.Events = 20000
	stream := source.GenerateStocks("stocks", cfg)
	q, err := sase.Compile("PATTERN SEQ(stock1 a, stock2 b) WITHIN 500 RETURN b.seq", stream)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var written, last int64
	stats, err := q.Run(ctx, stream.All(), func(row []sase.Cell) bool {
		last = max(last, row[0].Value.Int())
		if written++; written == 1000 {
			cancel()
		}
		return true
	}, sase.WithWorkers(2))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the cancel", err)
	}
	if stats.Split == nil || stats.Split.Overlap == 0 {
		t.Fatalf("the run is not cut into time segments: %+v", stats.Split)
	}
	if stats.Events <= last || stats.Events > int64(cfg.Events) {
		t.Errorf("cancelled after %d events, having written a match ending at seq %d of %d events", stats.Events, last, cfg.Events)
	}
}
