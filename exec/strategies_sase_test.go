package exec_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/source"
)

// countOn compiles query for the engine and counts its matches on stream.
func countOn(t testing.TB, stream *event.Stream, query, engine string) int64 {
	t.Helper()
	q, err := bench.Compile(stream, query, engine)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	return stats.Matches
}

// saseRow is a query with SASE's reference match count (docs/STRATEGIES.md, How sase runs strategies).
type saseRow struct {
	name  string
	query string
	want  int64
}

// checkRows runs each row on cfg's generated stream on basic and auto.
func checkRows(t *testing.T, cfg source.StockConfig, rows []saseRow) {
	stream := source.GenerateStocks("stocks", cfg)
	for _, row := range rows {
		for _, engine := range []string{"basic", "auto"} {
			if got := countOn(t, stream, row.query, engine); got != row.want {
				t.Errorf("%s on %s: %d matches, SASE's reference result is %d\n%s", row.name, engine, got, row.want, row.query)
			}
		}
	}
}

// kleene is SASE's Kleene closure test query with a strategy ("" for the
// default mode) and a predicate (p1: none, p2: rising, p3: above the
// running minimum).
func kleene(strategy, pred, mod string, w int) string {
	if strategy != "" {
		strategy += " AND "
	}
	return fmt.Sprintf("PATTERN SEQ(stock+ a[], stock b) WHERE %s[symbol] AND a[1].price %% %s = 0 AND b.volume < 150%s WITHIN %d", strategy, mod, pred, w)
}

var kleenePreds = []struct{ name, pred string }{
	{"p1", ""},
	{"p2", " AND a[i].price > a[i-1].price"},
	{"p3", " AND a[i].price > min(a[..i-1].price)"},
}

func kleeneRows(mod string, w int, want map[string][3]int64) []saseRow {
	var rows []saseRow
	for strategy, counts := range want {
		for i, p := range kleenePreds {
			rows = append(rows, saseRow{strategy + " " + p.name, kleene(strategy, p.pred, mod, w), counts[i]})
		}
	}
	return rows
}

const seq3Walk = "PATTERN SEQ(stock a, stock b, stock c) WHERE %s AND [symbol] AND a.price > 500 AND b.price > a.price AND c.price > b.price WITHIN %d"

// TestSASEKleeneSuite is SASE's tests/KleeneClosure/QueryType on 100,000
// events (docs/STRATEGIES.md, How sase runs strategies). SASE 1.0's stored p3 result under
// partition-contiguity is 203 because of its SD13 defect; sase-advanced
// and the spec give 137.
func TestSASEKleeneSuite(t *testing.T) {
	t.Parallel()
	cfg := source.StockConfig{Events: 100_000, Symbols: 2, MaxPrice: 1000, MaxVolume: 1000, Seed: 10, IncreaseProbability: 70}
	checkRows(t, cfg, kleeneRows("500", 500, map[string][3]int64{
		"partition-contiguity": {203, 70, 137},
		"skip-till-next-match": {203, 203, 203},
	}))
}

// TestSASENextMatch100K is skip-till-next-match at 100,000 events, W = 120,
// 10 symbols, seed 11: identical to SASE 1.0's output (docs/STRATEGIES.md, How sase runs strategies).
func TestSASENextMatch100K(t *testing.T) {
	uniform := source.StockConfig{Events: 100_000, Symbols: 10, MaxPrice: 1000, MaxVolume: 1000, Seed: 11, IncreaseProbability: 101}
	checkRows(t, uniform, []saseRow{{"seq3 typed, uniform", "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WHERE skip-till-next-match WITHIN 120", 9792}})
	walk := uniform
	walk.IncreaseProbability = 55
	checkRows(t, walk, []saseRow{{"seq3 with predicates, random walk", fmt.Sprintf(seq3Walk, "skip-till-next-match", 120), 86948}})
}

// TestSASESmallStreams are the small-stream rows of SASE's reference results (docs/STRATEGIES.md): 1,000
// events (uniform: 10 symbols, seed 11; walk: increase probability 55,
// max_price 1000), and the Kleene query at W = 15 on a 3-symbol walk with
// seed 7, where v1 gives 22 matches for the any-match rows.
func TestSASESmallStreams(t *testing.T) {
	uniform := source.StockConfig{Events: 1000, Symbols: 10, MaxPrice: 100, MaxVolume: 1000, Seed: 11, IncreaseProbability: 101}
	typed := "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WHERE %s WITHIN 120"
	checkRows(t, uniform, []saseRow{
		{"seq3 next, typed", fmt.Sprintf(typed, "skip-till-next-match"), 70},
		{"seq3 any, typed", fmt.Sprintf(typed, "skip-till-any-match"), 5643},
	})
	walk := source.StockConfig{Events: 1000, Symbols: 10, MaxPrice: 1000, MaxVolume: 1000, Seed: 11, IncreaseProbability: 55}
	checkRows(t, walk, []saseRow{
		{"seq3 next", fmt.Sprintf(seq3Walk, "skip-till-next-match", 120), 545},
		{"seq3 any", fmt.Sprintf(seq3Walk, "skip-till-any-match", 120), 22924},
		{"seq3 partition-contiguity", fmt.Sprintf(seq3Walk, "partition-contiguity", 120), 196},
	})
	walk3 := walk
	walk3.Symbols, walk3.Seed = 3, 7
	rows := kleeneRows("10", 15, map[string][3]int64{
		"partition-contiguity": {58, 25, 32},
		"skip-till-next-match": {58, 58, 58},
		"skip-till-any-match":  {867, 260, 371},
		"":                     {22, 22, 22}, // the default mode: v1's maximal lists
	})
	rows = append(rows, saseRow{"seq3 next, W = 20", fmt.Sprintf(seq3Walk, "skip-till-next-match", 20), 225})
	checkRows(t, walk3, rows)
}
