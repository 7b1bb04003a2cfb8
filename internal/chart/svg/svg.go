// Package svg draws package chart's charts as SVG files with gonum/plot.
package svg

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sase-cep/sase/internal/chart"
)

// Drawer is a chart.Drawer that writes SVG (the paths' extension tells
// gonum/plot the format).
type Drawer struct{}

// Lines draws each series as a line with points, in its own color and
// shape, and saves the chart to path.
func (Drawer) Lines(path string, c chart.Chart, series []chart.Series) error {
	p := newPlot(c)
	for i, s := range series {
		xy := make(plotter.XYs, len(s.Y))
		for k := range s.Y {
			xy[k].X, xy[k].Y = s.X[k], s.Y[k]
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		if s.Name != "" {
			p.Legend.Add(s.Name, line, points)
		}
	}
	p.Legend.Top, p.Legend.Left = true, true
	// Room around the points, and above them for the legend.
	if c.LogX {
		p.X.Min, p.X.Max = p.X.Min/1.3, p.X.Max*1.3
	} else {
		pad := (p.X.Max - p.X.Min) / 20
		p.X.Min, p.X.Max = p.X.Min-pad, p.X.Max+pad
	}
	p.Y.Max *= 1 + 0.08*float64(len(series)+1)
	return p.Save(16*vg.Centimeter, 10*vg.Centimeter, path)
}

// Bars draws a group of bars per category, a bar per series in its own
// color, and saves the chart to path. The chart is as wide as its bars
// need, and the x range leaves half a group of room at either end, so that
// the outer bars and their labels are not cut by the edge.
func (Drawer) Bars(path string, c chart.Chart, categories []string, series []chart.Series) error {
	p := newPlot(c)
	const width = 0.7 * vg.Centimeter
	n := len(series)
	for i, s := range series {
		bars, err := plotter.NewBarChart(plotter.Values(s.Y), width)
		if err != nil {
			return err
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(i)-float64(n-1)/2) * width
		p.Add(bars)
		if s.Name != "" {
			p.Legend.Add(s.Name, bars)
		}
	}
	p.NominalX(categories...)
	p.X.Min, p.X.Max = -0.5, float64(len(categories))-0.5
	p.Legend.Top = true
	p.Legend.XOffs = -3 * vg.Millimeter // off the edge
	long := 0
	for _, c := range categories {
		long = max(long, len(c))
	}
	if long > 8 && len(categories) > 1 { // long names side by side would overlap
		p.X.Tick.Label.Rotation = math.Pi / 8
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop // the label ends at its tick
	}
	w := max(12*vg.Centimeter, vg.Length(len(categories)*n)*width*1.6+3*vg.Centimeter)
	return p.Save(w, 10*vg.Centimeter, path)
}

func newPlot(c chart.Chart) *plot.Plot {
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.X
	p.Y.Label.Text = c.Y
	p.Y.Min = 0
	if c.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	return p
}
