package session

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/internal/teststream"
)

// The statements of chain, for scripts that order them otherwise.
const (
	jumps = `PATTERN SEQ(ANY(stock1, stock2, stock3) a, ANY(stock1, stock2, stock3) b)
  WHERE [symbol] AND b.price >= a.price + 90 WITHIN 10
  RETURN 'jump' AS kind, b.symbol AS symbol, b.price - a.price AS size INTO spikes;
`
	tops = `PATTERN SEQ(stock4 a, !stock4 n) WHERE a.price >= 99 AND n.price >= a.price WITHIN 50
  RETURN 'top' AS kind, a.symbol AS symbol INTO spikes;
`
	pairs = `PATTERN SEQ(spikes x, !spikes o, spikes y) FROM spikes
  WHERE [symbol] AND o.symbol != x.symbol WITHIN 500
  RETURN x.symbol AS symbol, x.kind AS first, y.ts - x.ts AS gap INTO pairs;
`
	closePairs  = "PATTERN pairs p FROM pairs WHERE p.gap < 200 WITHIN 0 RETURN p.symbol AS symbol, p.gap AS gap INTO close;\n"
	readSpikes  = "PATTERN spikes e FROM spikes WITHIN 0;\n"
	readClose   = "PATTERN close c FROM close WITHIN 0 RETURN c.ts, c.symbol, c.gap;\n"
	independent = "PATTERN stock1 a WHERE a.price >= 100 WITHIN 0 RETURN 'independent' AS kind, a.ts;\n"
)

// TestDependencyOrder runs scripts whose consumers come before the
// producers of the derived streams they read: each consumer waits for
// them, the others keep their place, and the output is the same, in the
// same order, as that of the script written in dependency order. A query
// that waits keeps the settings of its place.
func TestDependencyOrder(t *testing.T) {
	csv, path := teststream.StocksCSVFile(t)
	load := "LOAD '" + path + "' AS s;\n"
	for _, tt := range []struct {
		name, script, want string
		has                []string // in the output, so that it is not trivially the same
	}{
		{"two levels",
			load + "SET format = csv;\n" + readSpikes + "SET format = jsonl;\n" + jumps + independent,
			load + "SET format = jsonl;\n" + jumps + "SET format = csv;\n" + readSpikes + "SET format = jsonl;\n" + independent,
			[]string{"e\n", `"kind":"independent"`}},
		{"three levels, two producers into the first",
			load + "SET format = jsonl;\n" + readClose + independent + readSpikes + closePairs + pairs + jumps + tops,
			load + "SET format = jsonl;\n" + independent + jumps + tops + readSpikes + pairs + closePairs + readClose,
			[]string{`"kind":"independent"`, `{"e":{"type":"spikes"`, `{"c.ts":`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, gerr := runScript(t, "auto", tt.script, nil)
			want, werr := runScript(t, "auto", tt.want, nil)
			if got != want {
				t.Errorf("stdout:\n%s\nwant (in dependency order):\n%s\nstderr:\n%s", got, want, gerr)
			}
			if strings.Contains(gerr, "ERROR") || strings.Contains(werr, "ERROR") {
				t.Errorf("stderr:\n%s\nin dependency order:\n%s", gerr, werr)
			}
			for _, want := range tt.has {
				if !strings.Contains(got, want) {
					t.Errorf("no %s in the output:\n%s", want, got)
				}
			}
		})
	}

	// Live, a consumer written first reads its derived stream too.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		pw.Write(csv)
		pw.Close()
	}()
	live, lerr := runScript(t, "auto", "LOAD '-' AS s;\nSET format = jsonl;\n"+readClose+readSpikes+closePairs+pairs+jumps+tops, pr)
	pr.Close()
	loaded, _ := runScript(t, "auto", load+"SET format = jsonl;\n"+jumps+tops+pairs+closePairs+readSpikes+readClose, nil)
	if got, want := byQuery(live), byQuery(loaded); !slices.Equal(got, want) {
		t.Errorf("live:\n%s\nloaded:\n%s\nstderr:\n%s", got, want, lerr)
	}
}
