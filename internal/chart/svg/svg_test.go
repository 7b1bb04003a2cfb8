package svg

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sase-cep/sase/internal/chart"
	"github.com/sase-cep/sase/internal/testkit"
)

// TestBarsInside draws bar charts of one and of several series: the
// files are SVG, name their categories and series, and every bar lies
// inside the canvas with room to spare (recep-exp1.svg once had its right
// bar on the edge, cut).
func TestBarsInside(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name       string
		categories []string
		series     []chart.Series
	}{
		{"one", []string{"recep", "auto", "ais"}, []chart.Series{{Y: []float64{160, 145, 141}}}},
		{"grouped", []string{"W1 uniform 1M", "W2 random walk 1M"}, []chart.Series{{Name: "floor", Y: []float64{40, 0}}, {Name: "ais", Y: []float64{3, 1}}, {Name: "auto", Y: []float64{3.3, 2}}}},
	} {
		path := filepath.Join(dir, tt.name+".svg")
		if err := (Drawer{}).Bars(path, chart.Chart{Title: tt.name, X: "engine (the paper's ReCEP: 1438 ms on its machine)", Y: "ms"}, tt.categories, tt.series); err != nil {
			t.Fatal(err)
		}
		svg := testkit.ReadSVG(t, path)
		for _, want := range tt.categories {
			if !slices.Contains(svg.Texts, want) {
				t.Errorf("%s: no label %q in %q", tt.name, want, svg.Texts)
			}
		}
		for _, s := range tt.series {
			if s.Name != "" && !slices.Contains(svg.Texts, s.Name) {
				t.Errorf("%s: no legend entry %q in %q", tt.name, s.Name, svg.Texts)
			}
		}
		width, err := strconv.ParseFloat(strings.TrimSuffix(svg.Width, "pt"), 64)
		if err != nil {
			t.Fatalf("%s: width %q", tt.name, svg.Width)
		}
		bars := 0
		for _, p := range svg.Paths {
			if !strings.Contains(p.Style, "fill:#") || strings.Contains(p.Style, "fill:#FFFFFF") || !strings.HasSuffix(p.D, "Z") {
				continue // strokes, and the white background
			}
			bars++
			for _, x := range xs(p.D) {
				if x < 1 || x > width-5 {
					t.Errorf("%s: a bar at x = %g on a canvas %g wide: %s", tt.name, x, width, p.D)
				}
			}
		}
		if want := len(tt.categories) * len(tt.series); bars < want { // a legend has boxes too
			t.Errorf("%s: %d filled boxes, want at least %d bars", tt.name, bars, want)
		}
	}
}

// xs is the x of each point of an SVG path's M and L commands.
func xs(d string) []float64 {
	var out []float64
	for _, m := range regexp.MustCompile(`[ML](-?[0-9.]+),`).FindAllStringSubmatch(d, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		out = append(out, x)
	}
	return out
}

// TestLines draws two series: the file is SVG and names both.
func TestLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lines.svg")
	series := []chart.Series{{Name: "W 60", X: []float64{1, 2, 4}, Y: []float64{30, 31, 30}}, {Name: "W 120", X: []float64{1, 2, 4}, Y: []float64{20, 21, 20}}}
	if err := (Drawer{}).Lines(path, chart.Chart{Title: "scaling", X: "events", Y: "ns", LogX: true}, series); err != nil {
		t.Fatal(err)
	}
	texts := testkit.ReadSVG(t, path).Texts
	for _, want := range []string{"scaling", "events", "ns", "W 60", "W 120"} {
		if !slices.Contains(texts, want) {
			t.Errorf("no text %q in %q", want, texts)
		}
	}
}
