package exec_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/internal/teststream"
)

// TestTickReleasesWaitingMatches: a match that waits on a negated end or a
// trailing closure comes out at the first tick past ts(P1)+W, before the
// next event, on every engine; a tick not past it releases nothing, and a
// tick changes no answer.
func TestTickReleasesWaitingMatches(t *testing.T) {
	stream := teststream.CSV(t, "s", "type,ts,x\nA,1,1\nB,2,1\nC,30,1\n")
	for _, query := range []string{
		"PATTERN SEQ(A a, B b, !C c) WITHIN 5",
		"PATTERN SEQ(A a, B+ b[]) WITHIN 5",
		"PATTERN SEQ(A a, B b, !C c) WHERE skip-till-next-match WITHIN 5",
	} {
		for _, engine := range sase.EngineNames() {
			q, err := bench.Compile(stream, query, engine)
			if err != nil {
				t.Fatal(err)
			}
			var log []string
			events := func(yield func(*event.Event) bool) {
				for i, e := range stream.Events {
					if i == 2 { // quiet from ts 2 to 30: time passes 6, then 7
						for _, ts := range []int64{6, 7} {
							log = append(log, fmt.Sprintf("tick %d", ts))
							if !yield(event.Tick(ts)) {
								return
							}
						}
					}
					log = append(log, fmt.Sprintf("event %d", e.TS))
					if !yield(e) {
						return
					}
				}
			}
			stats, err := q.Run(context.Background(), events, func([]sase.Cell) bool {
				log = append(log, "match")
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprint([]string{"event 1", "event 2", "tick 6", "tick 7", "match", "event 30"})
			if got := fmt.Sprint(log); got != want || stats.Events != 3 {
				t.Errorf("%s on %s: got %s after %d events, want %s after 3", query, engine, got, stats.Events, want)
			}
		}
	}
}
