package sase_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/internal/teststream"
	"github.com/sase-cep/sase/source"
)

// explainQueries cover each operator: negation, two partitions, a closure
// with per-element and whole-list predicates, a selection strategy.
var explainQueries = []string{
	"PATTERN SEQ(stock1 a, !stock2 n, stock3 c) WHERE [symbol] AND a.price < c.price AND a.price > 10 WITHIN 50",
	"PATTERN SEQ(stock1 a, stock2 b) WHERE [symbol] AND [volume] WITHIN 400",
	"PATTERN SEQ(stock1 a, stock2+ b[], stock3 c) WHERE b[i].price > b[i-1].price AND avg(b[].price) > a.price WITHIN 20",
	"PATTERN SEQ(stock1 a, stock2 b, stock3 c) WHERE skip-till-next-match AND [symbol] WITHIN 30",
}

// TestExplainAnalyzeGolden pins EXPLAIN ANALYZE's text (without times) for
// every engine: the plan tree, each operator's counts and its source's own
// counters (instances, max buffer).
func TestExplainAnalyzeGolden(t *testing.T) {
	cfg := source.DefaultStockConfig()
	cfg.Events = 2000
	stream := source.GenerateStocks("stocks", cfg)
	var out strings.Builder
	for _, query := range explainQueries {
		for _, e := range sase.Engines {
			q, err := sase.Compile(query, stream, sase.WithEngine(e))
			if err != nil {
				t.Fatal(err)
			}
			stats, err := q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true })
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&out, "-- %s\n%s\n", query, q.ExplainAnalyze(stats))
		}
	}
	testkit.Golden(t, filepath.Join("testdata", "explain", "analyze.golden"), out.String())
}

// TestExplainFormatsGolden pins EXPLAIN (FORMAT dot) and EXPLAIN (ANALYZE,
// FORMAT json) for every engine; the run is untimed, so time_ns is 0.
func TestExplainFormatsGolden(t *testing.T) {
	cfg := source.DefaultStockConfig()
	cfg.Events = 2000
	stream := source.GenerateStocks("stocks", cfg)
	var dot, js strings.Builder
	for _, query := range explainQueries {
		for _, e := range sase.Engines {
			q, err := sase.Compile(query, stream, sase.WithEngine(e))
			if err != nil {
				t.Fatal(err)
			}
			text, err := q.ExplainAs("dot", 1, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&dot, "// %s\n%s\n", query, text)
			stats, err := q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true })
			if err != nil {
				t.Fatal(err)
			}
			if text, err = q.ExplainAs("json", 1, false, stats); err != nil {
				t.Fatal(err)
			}
			if !json.Valid([]byte(text)) {
				t.Errorf("%s on %s: not JSON:\n%s", query, e.Name, text)
			}
			fmt.Fprintf(&js, "%s", text)
		}
	}
	testkit.Golden(t, filepath.Join("testdata", "explain", "dot.golden"), dot.String())
	testkit.Golden(t, filepath.Join("testdata", "explain", "json.golden"), js.String())
}

// TestHas checks the guard against the absent-attribute rule on every
// engine: a comparison with an empty cell holds, has() tells it apart.
func TestHas(t *testing.T) {
	stream := teststream.CSV(t, "h", "type,ts,amount\nA,1,5\nB,2,\nB,3,20\nB,4,3\nC,5,1\n")
	tests := []struct {
		query string
		want  int64
	}{
		{"PATTERN SEQ(A a, B b) WHERE b.amount > 10", 2},
		{"PATTERN SEQ(A a, B b) WHERE b.amount < 10", 2},
		{"PATTERN SEQ(A a, B b) WHERE has(b.amount) AND b.amount > 10", 1},
		{"PATTERN SEQ(A a, B b) WHERE NOT has(b.amount)", 1},
		{"PATTERN SEQ(A a, B b) WHERE has(b.amount) OR a.amount > 100", 2},
		{"PATTERN SEQ(A a, B+ b[], C c) WHERE count(b[]) = 2 WITHIN 10", 0},
		{"PATTERN SEQ(A a, B+ b[], C c) WHERE has(b[i].amount) AND count(b[]) = 2 WITHIN 10", 1},
		{"PATTERN SEQ(A a, B b) WHERE has(b.ts)", 3},
	}
	for _, tt := range tests {
		for _, e := range sase.Engines {
			q, err := sase.Compile(tt.query, stream, sase.WithEngine(e))
			if err != nil {
				t.Fatalf("%s on %s: %v", tt.query, e.Name, err)
			}
			stats, err := q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true })
			if err != nil {
				t.Fatal(err)
			}
			if stats.Matches != tt.want {
				t.Errorf("%s on %s: %d matches, want %d", tt.query, e.Name, stats.Matches, tt.want)
			}
		}
	}
}
