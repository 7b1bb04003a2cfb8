package optimizer

import (
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/planner"
)

// TestDecideSplit: the split record says by key when a top-level
// equivalence test keeps matches in one partition, in time segments
// otherwise with a window, not at all on basic (the reference), without a
// window or on a v3 pattern whose key some event lacks; Keys lists every
// top-level test's attribute (a NATS group's), with a constant too.
func TestDecideSplit(t *testing.T) {
	cases := []struct {
		query  string
		engine *Engine
		kind   planner.SplitKind
		by     string
		keys   []string
		why    string
	}{
		{"PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 5", Auto, planner.SplitKey, "[sym]", []string{"sym"}, ""},
		{"PATTERN SEQ(A a, B b) WHERE [sym] AND [id = 1] WITHIN 5", PAIS, planner.SplitKey, "[sym]", []string{"sym", "id"}, ""},
		{"PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 5", Basic, planner.SplitNone, "", []string{"sym"}, "the basic engine"},
		{"PATTERN SEQ(A a, B b) WITHIN 5", Auto, planner.SplitSegments, "", nil, "no equivalence test"},
		{"PATTERN SEQ(A a, B b)", Auto, planner.SplitNone, "", nil, "without WITHIN"},
		{"PATTERN SEQ(A a, B b) WHERE skip-till-next-match AND [sym] WITHIN 5", Auto, planner.SplitSegments, "", []string{"sym"}, "skip-till-next-match"},
		{"PATTERN SEQ(A a, OR(B b, D d)) WHERE [sym] WITHIN 5", Auto, planner.SplitKey, "[sym]", []string{"sym"}, ""},
		{"PATTERN AND(A a, B b) WHERE [sym] WITHIN 5", Auto, planner.SplitKey, "[sym]", []string{"sym"}, ""},
		{"PATTERN SEQ(A a, OR(B b, C c)) WHERE [note] WITHIN 5", Auto, planner.SplitNone, "", []string{"note"}, "every event of every component has [note]"},
	}
	for _, c := range cases {
		p, err := Optimize(rulesPlan(t, c.query), c.engine)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		s := p.Split
		by := ""
		if s.Kind == planner.SplitKey {
			by = s.By.Text
		}
		if s.Kind != c.kind || by != c.by || !slices.Equal(s.Keys, c.keys) || !strings.Contains(s.Why, c.why) || (c.why == "") != (s.Why == "") {
			t.Errorf("%s on %s: %s by %q keys %v (%s), want %d by %q keys %v (%s)", c.query, c.engine.Name, s.KindName(), by, s.Keys, s.Why, c.kind, c.by, c.keys, c.why)
		}
	}
}
