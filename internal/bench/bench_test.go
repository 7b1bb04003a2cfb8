package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestMeasureAgrees runs a small Figure 10 case on every engine it names:
// all must report the same matches, and none may be cut by the limit.
func TestMeasureAgrees(t *testing.T) {
	c := Case{Name: "small", Stream: Partitioned(3000, 10, 4), Query: "PATTERN SEQ(A a, B b, C c) WHERE [a1] AND [a2] WITHIN 300",
		Engines: []string{"nfa", "ais", "pais", "multipais", "dynamic", "auto"}}
	stream := c.Stream()
	var want int64 = -1
	for _, engine := range c.Engines {
		r, err := Measure(c, stream, engine, 1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if r.Stopped || r.Events != 3000 {
			t.Fatalf("%s: read %d events, stopped %v", engine, r.Events, r.Stopped)
		}
		if want < 0 {
			want = r.Matches
		}
		if r.Matches != want || want == 0 {
			t.Errorf("%s: %d matches, want %d (and more than 0)", engine, r.Matches, want)
		}
	}
}

func TestRunUnknownSuite(t *testing.T) {
	var out bytes.Buffer
	if err := Run(&out, []string{"fig99"}, time.Second); err == nil || !strings.Contains(err.Error(), "unknown suite") {
		t.Errorf("got %v", err)
	}
}
