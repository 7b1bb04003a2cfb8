// Package recepbench reproduces the ReCEP paper's three experiments on the
// built-in stock generator: time per engine for SEQ(A, B, C) WITHIN 120
// (Exp. 1), for pattern lengths 2 to 6 (Exp. 2) and for windows 60 to 300
// (Exp. 3). docs/RECEP.md has the queries and the results.
package recepbench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/internal/chart"
	"github.com/sase-cep/sase/internal/chart/svg"
	"github.com/sase-cep/sase/source"
)

// Query is an experiment's query: stock1..stockN as the paper's A..F, a
// constant constraint on the first price and percentage correlations
// between consecutive elements, alternately down 10% and up 10%, as in the
// paper's Example 1 (a.price > x, a.price > (1+y%) b.price, ...).
func Query(length int, window int64) string {
	vars := []string{"a", "b", "c", "d", "e", "f"}
	comps := make([]string, length)
	conds := []string{"a.price > 50"}
	for i := range length {
		comps[i] = fmt.Sprintf("stock%d %s", i+1, vars[i])
		if i == 0 {
			continue
		}
		if i%2 == 1 {
			conds = append(conds, fmt.Sprintf("%s.price > 1.1 * %s.price", vars[i-1], vars[i]))
		} else {
			conds = append(conds, fmt.Sprintf("%s.price < 0.9 * %s.price", vars[i-1], vars[i]))
		}
	}
	return fmt.Sprintf("PATTERN SEQ(%s) WHERE %s WITHIN %d", strings.Join(comps, ", "), strings.Join(conds, " AND "), window)
}

// Result is one timed run.
type Result struct {
	Engine  string
	Events  int
	Matches int64
	Time    time.Duration // best of the runs
	CPU     time.Duration // the process's CPU time during that run
}

// Time runs query on the first n events of stream with an engine, reps
// times, and keeps the best time. Matches are enumerated, not printed.
func Time(stream *event.Stream, query, engine string, n, reps int) (Result, error) {
	evs := stream.Events[:min(n, len(stream.Events))]
	res := Result{Engine: engine, Events: len(evs)}
	for range reps {
		q, err := bench.Compile(stream, query, engine)
		if err != nil {
			return res, err
		}
		runtime.GC() // not the previous run's garbage
		start, cpu := time.Now(), bench.CPUTime()
		stats, err := q.Run(context.Background(), func(yield func(*event.Event) bool) {
			for _, e := range evs {
				if !yield(e) {
					return
				}
			}
		}, func([]sase.Cell) bool { return true })
		d, c := time.Since(start), bench.CPUTime()-cpu
		if err != nil {
			return res, err
		}
		if res.Time == 0 || d < res.Time {
			res.Time, res.CPU = d, c
		}
		res.Matches = stats.Matches
	}
	return res, nil
}

// Stream generates the experiments' stream: uniform mode, SASE's defaults
// otherwise.
func Stream(events int) *event.Stream {
	cfg := source.DefaultStockConfig()
	cfg.Events = events
	return source.GenerateStocks("stocks", cfg)
}

// Engines are timed on the whole stream. Basic, whose SSC keeps the whole
// stream and enumerates every sequence before the window is checked (its
// cost grows with (events/10)^length), runs in Exp. 1 on the first
// BasicEvents events only, and not in Exp. 2 and 3.
var (
	Engines     = []string{"recep", "auto", "ais"}
	BasicEvents = 5000
	Reps        = 3
)

// point is one x value of an experiment with its results per engine.
type point struct {
	x       int
	query   string
	results []Result // by Engines (then basic in Exp. 1)
}

// Run runs the three experiments on a generated stream of events events,
// prints a table per experiment to w and writes recep-exp1.svg,
// recep-exp2.svg and recep-exp3.svg to outDir.
func Run(w io.Writer, outDir string, events int) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	stream := Stream(events)
	fmt.Fprintf(w, "Stream: GENERATE STOCKS WITH (events = %d), uniform mode; best of %d runs.\n", events, Reps)
	fmt.Fprintf(w, "basic (no pushed window) runs in Exp. 1 on the first %d events only, and not in Exp. 2 and 3.\n", BasicEvents)
	exps := []struct {
		name, xlabel string
		xs           []int
		query        func(x int) string
	}{
		{"Exp. 1: SEQ(A, B, C) WITHIN 120", "", []int{3}, func(int) string { return Query(3, 120) }},
		{"Exp. 2: pattern length at WITHIN 120", "pattern length", []int{2, 3, 4, 5, 6}, func(x int) string { return Query(x, 120) }},
		{"Exp. 3: window at length 3", "WITHIN", []int{60, 120, 180, 240, 300}, func(x int) string { return Query(3, int64(x)) }},
	}
	// Warm up: the first runs after generating the stream are slower (page
	// faults on the fresh heap), which would tilt Exp. 1.
	for _, engine := range Engines {
		if _, err := Time(stream, Query(3, 120), engine, events, 1); err != nil {
			return err
		}
	}
	for i, e := range exps {
		var pts []point
		for _, x := range e.xs {
			pt := point{x: x, query: e.query(x)}
			engines := Engines
			if i == 0 {
				engines = append(slices.Clone(Engines), "basic")
			}
			for _, engine := range engines {
				n, reps := events, Reps
				if engine == "basic" {
					n, reps = BasicEvents, 1
				}
				res, err := Time(stream, pt.query, engine, n, reps)
				if err != nil {
					return fmt.Errorf("%s, %s: %w", e.name, engine, err)
				}
				pt.results = append(pt.results, res)
			}
			pts = append(pts, pt)
		}
		printTable(w, e.name, e.xlabel, pts)
		path := filepath.Join(outDir, fmt.Sprintf("recep-exp%d.svg", i+1))
		if err := draw(path, e.name, e.xlabel, pts); err != nil {
			return err
		}
		fmt.Fprintf(w, "chart: %s\n", path)
	}
	return nil
}

func printTable(w io.Writer, name, xlabel string, pts []point) {
	fmt.Fprintf(w, "\n%s\n", name)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if xlabel != "" {
		fmt.Fprintf(tw, "%s\t", xlabel)
	}
	fmt.Fprintln(tw, "engine\tevents\tmatches\ttime (ms)\tevents/s\t")
	for _, pt := range pts {
		for _, r := range pt.results {
			if xlabel != "" {
				fmt.Fprintf(tw, "%d\t", pt.x)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.3gM\t\n", r.Engine, r.Events, r.Matches,
				float64(r.Time.Microseconds())/1000, float64(r.Events)/r.Time.Seconds()/1e6)
		}
	}
	tw.Flush()
	for _, pt := range pts {
		fmt.Fprintf(w, "  %s\n", pt.query)
	}
}

// draw draws time against the experiment's x, one line per engine run
// on the whole stream; Exp. 1 has a single x and gets a bar per engine.
func draw(path, title, xlabel string, pts []point) error {
	ms := func(r Result) float64 { return float64(r.Time.Microseconds()) / 1000 }
	c := chart.Chart{Title: title, X: xlabel, Y: "time (ms)"}
	if len(pts) == 1 {
		vals := make([]float64, len(Engines))
		for i := range Engines {
			vals[i] = ms(pts[0].results[i])
		}
		c.X = "engine (the paper's ReCEP: 1438 ms on its machine)"
		return svg.Drawer{}.Bars(path, c, Engines, []chart.Series{{Y: vals}})
	}
	series := make([]chart.Series, len(Engines))
	for i, engine := range Engines {
		series[i].Name = engine
		for _, pt := range pts {
			series[i].X = append(series[i].X, float64(pt.x))
			series[i].Y = append(series[i].Y, ms(pt.results[i]))
		}
	}
	return svg.Drawer{}.Lines(path, c, series)
}
