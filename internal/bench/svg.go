package bench

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"

	"github.com/sase-cep/sase/internal/chart"
)

// Option is an option of Run.
type Option func(*runConfig)

type runConfig struct {
	svgDir    string // "": no charts
	draw      chart.Drawer
	liveRules LiveRules // nil: the rules suite has no live rows
}

// WithSVG draws each suite's chart with d into dir as bench-SUITE.svg
// (the scaling suite draws two): events/s per case and engine, the
// workers suite's events/s against the number of workers, the scaling
// suite's CPU per event + match against the events and the selective
// query's time against the window, the io suite's rows/s. The drawer is
// passed in (cmd/sase's is chart/svg's) so that bench imports no plotting
// library: the engines' tests, which run its suites, link none.
func WithSVG(dir string, d chart.Drawer) Option {
	return func(c *runConfig) { c.svgDir, c.draw = dir, d }
}

// upToCPUs is 1, 2, ... up to the CPUs (1 and 2 on a machine with one).
func upToCPUs() []int {
	n := max(2, runtime.NumCPU())
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// saved says where a chart went.
func (c runConfig) saved(w io.Writer, path string, err error) error {
	if err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	_, err = fmt.Fprintf(w, "chart: %s\n\n", path)
	return err
}

// chartSuite draws a suite: for workers, events/s against workers, a line
// per case and engine; for the others, a bar per engine (and the floor)
// grouped by case, each on one worker.
func (c runConfig) chartSuite(w io.Writer, name string, rs []SuiteResult) error {
	if c.svgDir == "" {
		return nil
	}
	path := filepath.Join(c.svgDir, "bench-"+name+".svg")
	if name == "workers" {
		var series []chart.Series
		index := map[string]int{}
		for _, r := range rs {
			key := r.Case + " (" + r.Engine + ")"
			if r.Sink != "" {
				key = r.Case + " (" + r.Engine + ", " + string(r.Sink) + ")"
			}
			i, ok := index[key]
			if !ok {
				i = len(series)
				index[key] = i
				series = append(series, chart.Series{Name: key})
			}
			series[i].X = append(series[i].X, float64(r.Workers))
			series[i].Y = append(series[i].Y, r.EventsPerSecond())
		}
		return c.saved(w, path, c.draw.Lines(path, chart.Chart{Title: "workers: events/s by workers", X: "workers", Y: "events/s"}, series))
	}
	var cases, engines []string
	for _, r := range rs {
		if !slices.Contains(cases, r.Case) {
			cases = append(cases, r.Case)
		}
		if !slices.Contains(engines, r.Engine) {
			engines = append(engines, r.Engine)
		}
	}
	series := make([]chart.Series, len(engines))
	for i, e := range engines {
		series[i] = chart.Series{Name: e, Y: make([]float64, len(cases))}
	}
	for _, r := range rs {
		if r.Workers > 1 {
			continue
		}
		series[slices.Index(engines, r.Engine)].Y[slices.Index(cases, r.Case)] = r.EventsPerSecond()
	}
	return c.saved(w, path, c.draw.Bars(path, chart.Chart{Title: name + ": events/s (one worker)", Y: "events/s"}, cases, series))
}

// chartScaling draws W1's CPU per event + match against the events, a
// line per window (flat lines: linear time), and the selective query's
// CPU time against the window (flat: no cost per window).
func (c runConfig) chartScaling(w io.Writer, rs []ScalingResult) error {
	if c.svgDir == "" {
		return nil
	}
	var w1 []chart.Series
	sel := chart.Series{Name: "selective (no matches)"}
	for _, r := range rs {
		if r.Selective {
			sel.X = append(sel.X, float64(r.Window))
			sel.Y = append(sel.Y, float64(r.CPU.Milliseconds()))
			continue
		}
		name := "W1 WITHIN " + strconv.FormatInt(r.Window, 10)
		i := slices.IndexFunc(w1, func(s chart.Series) bool { return s.Name == name })
		if i < 0 {
			i = len(w1)
			w1 = append(w1, chart.Series{Name: name})
		}
		w1[i].X = append(w1[i].X, float64(r.Events)/1e6)
		w1[i].Y = append(w1[i].Y, r.NsPerItem())
	}
	path := filepath.Join(c.svgDir, "bench-scaling.svg")
	err := c.draw.Lines(path, chart.Chart{Title: "scaling: W1, CPU per event + match", X: "events (millions)", Y: "ns per event + match"}, w1)
	if err := c.saved(w, path, err); err != nil {
		return err
	}
	path = filepath.Join(c.svgDir, "bench-scaling-selective.svg")
	err = c.draw.Lines(path, chart.Chart{Title: "scaling: a query without matches", X: "WITHIN", Y: "CPU time (ms)", LogX: true}, []chart.Series{sel})
	return c.saved(w, path, err)
}

// chartIO draws the io suite's rows/s.
func (c runConfig) chartIO(w io.Writer, rs []IOCase) error {
	if c.svgDir == "" {
		return nil
	}
	names := make([]string, len(rs))
	rows := chart.Series{Y: make([]float64, len(rs))}
	for i, r := range rs {
		names[i], rows.Y[i] = r.Name, float64(r.Rows)/r.Elapsed.Seconds()
	}
	path := filepath.Join(c.svgDir, "bench-io.svg")
	return c.saved(w, path, c.draw.Bars(path, chart.Chart{Title: "io: rows/s (matches written, events read)", Y: "rows/s"}, names, []chart.Series{rows}))
}
