package main

import (
	"slices"
	"testing"
	"time"

	"github.com/sase-cep/sase/internal/bench"
)

// TestLiveRulesAsLoaded: the rules suite's live rows (liveRules) find, on
// 1 and 2 passes, each rule's matches that the loaded rulebook finds, and
// read every event.
func TestLiveRulesAsLoaded(t *testing.T) {
	const events = 20_000
	csv, err := bench.StocksCSV(events)
	if err != nil {
		t.Fatal(err)
	}
	stream := bench.Stocks(events, 0)()
	for _, minP := range bench.RuleMinPs {
		queries := bench.RulesAbove(30, minP)
		loaded, err := bench.MeasureRules(stream, queries, false, 1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{1, 2} {
			live, err := bench.MeasureLiveRules(liveRules, csv, queries, workers, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(live.Matches, loaded.Matches) || live.Events != events || live.Stopped {
				t.Errorf("P >= %d, %d workers: live %d events, matches %v; loaded %v", minP, workers, live.Events, live.Matches, loaded.Matches)
			}
		}
	}
}
