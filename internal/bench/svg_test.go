package bench

import (
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sase-cep/sase/internal/chart/svg"
	"github.com/sase-cep/sase/internal/testkit"
)

// wantTexts checks that a chart names each of want.
func wantTexts(t *testing.T, path string, want ...string) {
	t.Helper()
	texts := testkit.ReadSVG(t, path).Texts
	for _, w := range want {
		if !slices.Contains(texts, w) {
			t.Errorf("%s: no text %q in %q", filepath.Base(path), w, texts)
		}
	}
}

// TestSuiteCharts runs small suites and draws them: a bar per engine
// grouped by case, the workers curve with a line per case, each series
// named in the legend.
func TestSuiteCharts(t *testing.T) {
	dir := t.TempDir()
	c := runConfig{svgDir: dir, draw: svg.Drawer{}}
	cases := []Case{
		{Name: "small A", Stream: Partitioned(500, 10, 0), Query: "PATTERN SEQ(A a, B b) WHERE [a1] WITHIN 50", Engines: []string{"nfa", "pais"}},
		{Name: "small B", Stream: Partitioned(500, 10, 0), Query: "PATTERN SEQ(A a, C c) WITHIN 20", Engines: []string{"nfa", "pais"}},
	}
	var out strings.Builder
	rs, err := runSuite(&out, "tiny", cases, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 4 {
		t.Fatalf("%d results, want 4", len(rs))
	}
	if err := c.chartSuite(&out, "tiny", rs); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, filepath.Join(dir, "bench-tiny.svg"), "tiny: events/s (one worker)", "small A", "small B", "nfa", "pais")

	cases[0].Engines, cases[0].Workers = []string{"pais"}, []int{1, 2, 3}
	if rs, err = runSuite(&out, "workers", cases[:1], time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := c.chartSuite(&out, "workers", rs); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, filepath.Join(dir, "bench-workers.svg"), "workers", "events/s", "small A (pais)")
	if !strings.Contains(out.String(), "chart: "+filepath.Join(dir, "bench-workers.svg")) {
		t.Errorf("no chart line in %s", out.String())
	}
}

// TestScaling runs the scaling suite on a small grid: W1's matches grow
// with the window and the events, the selective query has none, and both
// charts name their series.
func TestScaling(t *testing.T) {
	dir := t.TempDir()
	var out strings.Builder
	g := ScalingGrid{Events: []int{3000, 6000}, Windows: []int64{10, 20}, SelectiveEvents: 3000, SelectiveWindows: []int64{10, 1000}}
	rs, err := runScaling(&out, g, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 6 {
		t.Fatalf("%d runs, want 6:\n%s", len(rs), out.String())
	}
	for i, r := range rs {
		if r.Stopped || r.NsPerItem() <= 0 && r.CPU > 0 {
			t.Errorf("run %d: %+v", i, r)
		}
		if r.Selective != (r.Matches == 0) {
			t.Errorf("run %d (selective %v, W %d): %d matches", i, r.Selective, r.Window, r.Matches)
		}
	}
	if !(rs[0].Matches < rs[1].Matches && rs[0].Matches < rs[2].Matches) {
		t.Errorf("W1 matches do not grow with the window and the events: %d, %d, %d", rs[0].Matches, rs[1].Matches, rs[2].Matches)
	}
	if err := (runConfig{svgDir: dir, draw: svg.Drawer{}}).chartScaling(&out, rs); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, filepath.Join(dir, "bench-scaling.svg"), "W1 WITHIN 10", "W1 WITHIN 20", "ns per event + match")
	wantTexts(t, filepath.Join(dir, "bench-scaling-selective.svg"), "selective (no matches)", "WITHIN")
}

// TestIOChart draws io results: a bar per case, named on the x axis.
func TestIOChart(t *testing.T) {
	dir := t.TempDir()
	rs := []IOCase{{"LOAD csv 1M", IOResult{Rows: 1e6, Elapsed: time.Second / 5}}, {"LOAD jsonl 1M", IOResult{Rows: 1e6, Elapsed: time.Second / 4}}}
	if err := (runConfig{svgDir: dir, draw: svg.Drawer{}}).chartIO(io.Discard, rs); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, filepath.Join(dir, "bench-io.svg"), "LOAD csv 1M", "LOAD jsonl 1M", "rows/s")
}
