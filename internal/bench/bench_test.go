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
		r, err := Measure(c, stream, engine, time.Minute)
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

// rowWriter records each Write, and whether every one is a whole line.
type rowWriter struct {
	writes []string
}

func (w *rowWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

// TestRunSuitePrintsEachRow checks that a suite's table is printed a row
// at a time, each row written as one line as its run ends, all aligned.
func TestRunSuitePrintsEachRow(t *testing.T) {
	c := Case{Name: "tiny", Stream: Partitioned(500, 10, 0), Query: "PATTERN SEQ(A a, B b) WHERE [a1] WITHIN 50", Engines: []string{"nfa", "multipais"}}
	var w rowWriter
	if err := runSuite(&w, "test", []Case{c}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if len(w.writes) != 5 || !strings.HasPrefix(w.writes[0], "== test ") || w.writes[4] != "\n" {
		t.Fatalf("writes %q", w.writes)
	}
	header, rows := w.writes[1], w.writes[2:4]
	for i, r := range rows {
		if len(r) != len(header) || !strings.HasSuffix(r, " MB\n") || strings.Count(r, "\n") != 1 {
			t.Errorf("row %d %q does not line up with %q", i, r, header)
		}
	}
	if !strings.Contains(rows[0], " nfa ") || !strings.Contains(rows[1], " multipais ") || !strings.HasPrefix(header, "case     engine ") {
		t.Errorf("header %q rows %q", header, rows)
	}
}
