// Package chart describes the benchmark harnesses' charts: lines of
// points against a numeric x, and bars grouped by a named category.
// internal/bench and internal/recepbench share it. Package chart/svg draws
// them with gonum/plot, apart, so that a package that only runs the
// benchmarks (the engines' tests do) links no plotting library.
package chart

// Chart is a chart's title and axis labels.
type Chart struct {
	Title, X, Y string
	LogX        bool // a log scale on x (lines: x values above 0)
}

// Series is one line of points, or one bar per category.
type Series struct {
	Name string    // its legend entry ("" for none)
	X    []float64 // the points' x (lines only)
	Y    []float64 // the points' y, or a value per category (bars)
}

// Drawer draws charts into files.
type Drawer interface {
	// Lines draws each series as a line with points, in its own color
	// and shape, and saves the chart to path.
	Lines(path string, c Chart, series []Series) error
	// Bars draws a group of bars per category, a bar per series in its
	// own color, and saves the chart to path.
	Bars(path string, c Chart, categories []string, series []Series) error
}
