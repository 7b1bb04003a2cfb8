package session

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAlgebraLiveEventTime: v3 patterns (LANGUAGE.md §9) give the same
// matches on a stream loaded from a file, piped in live, and piped in out
// of order within a slack (event time), on every engine a live stream
// allows. Rows name events by their id, which survives the reordering of
// equal timestamps.
func TestAlgebraLiveEventTime(t *testing.T) {
	const slack = 3
	r := rand.New(rand.NewPCG(27, 3))
	type line struct {
		key  int64
		text string
	}
	var lines []line
	var sorted strings.Builder
	sorted.WriteString("type,ts,id,price,sym\n")
	ts := int64(0)
	for id := range 400 {
		ts += int64(r.IntN(2))
		text := fmt.Sprintf("%c,%d,%d,%d,%c\n", 'A'+r.IntN(4), ts, id, r.IntN(10), 'x'+r.IntN(2))
		sorted.WriteString(text)
		// Each line moves ahead of later ones by less than the slack, so
		// none is late.
		lines = append(lines, line{ts + int64(r.IntN(slack)), text})
	}
	slices.SortStableFunc(lines, func(a, b line) int { return int(a.key - b.key) })
	shuffled := "type,ts,id,price,sym\n"
	for _, l := range lines {
		shuffled += l.text
	}
	path := filepath.Join(t.TempDir(), "s.csv")
	if err := os.WriteFile(path, []byte(sorted.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	queries := strings.Join([]string{
		"PATTERN SEQ(A a, OR(B b, C c), D d) WHERE [sym] WITHIN 4 RETURN 1 AS q, a.id, b.id, c.id, d.id",
		"PATTERN AND(A a, B b, C c) WHERE [sym] AND a.price > b.price WITHIN 3 RETURN 2 AS q, a.id, b.id, c.id",
		"PATTERN SEQ(A a, AND(B b, SEQ(C c, D? d)), !A n, B e) WITHIN 5 RETURN 3 AS q, a.id, b.id, c.id, d.id, e.id",
		"PATTERN SEQ(A a, B{1,2} b[], C c) WHERE [sym] WITHIN 4 RETURN 4 AS q, a.id, count(b[]) AS n, c.id",
		"PATTERN SEQ(D d, C* c[], SEQ(A a, B b)?, D e) WHERE [sym] WITHIN 4 RETURN 5 AS q, d.id, count(c[]) AS n, a.id, b.id, e.id",
	}, "; ") + ";"
	rows := func(out string) []string {
		got := strings.Split(strings.TrimSpace(out), "\n")
		slices.Sort(got)
		return got
	}
	for i, engine := range liveEngines {
		loaded, _ := runScript(t, engine, "LOAD '"+path+"' AS s; "+queries, nil)
		want := rows(loaded)
		if len(want) < 100 {
			t.Fatalf("%s: only %d rows:\n%s", engine, len(want), loaded)
		}
		in := map[string]string{"live": sorted.String(), "event time": shuffled}
		opt := map[string]string{"live": "", "event time": fmt.Sprintf(" WITH (slack = %d)", slack)}
		for name, csv := range in {
			if name == "live" && i%2 == 1 {
				continue // half the engines: the suite stays quick
			}
			out, stderr := runScript(t, engine, "LOAD '-' AS s"+opt[name]+"; "+queries, strings.NewReader(csv))
			if got := rows(out); !slices.Equal(got, want) {
				t.Errorf("%s, %s: %d rows, loaded %d\n%s", engine, name, len(got), len(want), stderr)
			}
			if strings.Contains(stderr, "late") && !strings.Contains(stderr, "0 late") {
				t.Errorf("%s, %s: late events:\n%s", engine, name, stderr)
			}
		}
	}
}
