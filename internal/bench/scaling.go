package bench

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/sase-cep/sase/event"
)

// Selective is the scaling suite's query without matches: every a and b
// within the window is held, and no c passes (the uniform stream's prices
// are at most 100), so its time must not grow with the window.
func Selective(window int64) string {
	return fmt.Sprintf("PATTERN SEQ(stock1 a, stock2 b, stock3 c) WHERE c.price > 100 WITHIN %d", window)
}

// w1 is W1 with a window.
func w1(window int64) string {
	return fmt.Sprintf("PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN %d", window)
}

// ScalingGrid is what the scaling suite runs: W1 on each number of
// events with each window, and the selective query on SelectiveEvents
// events with each of SelectiveWindows.
type ScalingGrid struct {
	Events           []int
	Windows          []int64
	SelectiveEvents  int
	SelectiveWindows []int64
}

// Scaling is the grid of `sase bench scaling`.
var Scaling = ScalingGrid{
	Events:           []int{1_000_000, 2_000_000, 4_000_000},
	Windows:          []int64{60, 120, 240},
	SelectiveEvents:  1_000_000,
	SelectiveWindows: []int64{60, 240, 1_000, 10_000, 100_000},
}

// ScalingResult is one run of the scaling suite.
type ScalingResult struct {
	Selective bool
	Window    int64
	Result
}

// NsPerItem is the CPU time per event plus match: constant when the time
// is linear in events + matches.
func (r ScalingResult) NsPerItem() float64 {
	return float64(r.CPU.Nanoseconds()) / float64(r.Events+r.Matches)
}

// runScaling prints the scaling table, a row as each run ends, on the
// auto engine and the uniform stock stream, and returns the runs.
func runScaling(w io.Writer, g ScalingGrid, limit time.Duration) ([]ScalingResult, error) {
	fmt.Fprintf(w, "== scaling (auto engine, uniform stocks; time limit %s per run; %s; CPU per event + match is flat when time is linear in events + matches)\n", limit, medianNote)
	widths := []int{len("selective (no matches)"), 9, 7, 11, 8, 8, 17, 8}
	row := tableRow(w, widths)
	if err := row("query", "events", "W", "matches", "time", "CPU", "CPU/(event+match)", "events/s"); err != nil {
		return nil, err
	}
	var out []ScalingResult
	run := func(stream *event.Stream, window int64, selective bool) error {
		name, query := "W1", w1(window)
		if selective {
			name, query = "selective (no matches)", Selective(window)
		}
		r, err := median(func() (Result, error) { return Measure(Case{Name: name, Query: query}, stream, "auto", 1, "", limit) })
		if err != nil {
			return fmt.Errorf("scaling: %s: %w", query, err)
		}
		res := ScalingResult{Selective: selective, Window: window, Result: r}
		out = append(out, res)
		ev := strconv.FormatInt(r.Events, 10)
		if r.Stopped {
			ev += " (cut)"
		}
		return row(name, ev, strconv.FormatInt(window, 10), strconv.FormatInt(r.Matches, 10), r.Elapsed.Round(time.Millisecond).String(),
			r.CPU.Round(time.Millisecond).String(), fmt.Sprintf("%.1f ns", res.NsPerItem()), si(r.EventsPerSecond()))
	}
	for _, n := range g.Events {
		stream := Stocks(n, 0)()
		for _, window := range g.Windows {
			if err := run(stream, window, false); err != nil {
				return nil, err
			}
		}
	}
	stream := Stocks(g.SelectiveEvents, 0)()
	for _, window := range g.SelectiveWindows {
		if err := run(stream, window, true); err != nil {
			return nil, err
		}
	}
	_, err := fmt.Fprintln(w)
	return out, err
}
