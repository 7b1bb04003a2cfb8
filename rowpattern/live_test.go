package rowpattern_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/event"
)

// TestLiveEqualsLoaded runs queries live, an event at a time with ticks,
// and loaded: each partition's rows must be the same, in the same order
// (the partitions interleave live, as their matches are decided).
func TestLiveEqualsLoaded(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("p,price")
	price := [3]int{50, 50, 50}
	for range 3000 {
		p := r.IntN(3)
		price[p] += r.IntN(7) - 3
		fmt.Fprintf(&b, ";%d,%d", p, price[p])
	}
	events, schema := table(b.String())
	for _, q := range []string{
		"ONE ROW PER MATCH PATTERN (A B+ C) WITHIN 40 DEFINE B AS B.price > PREV(B.price), C AS C.price < PREV(C.price)",
		"ALL ROWS PER MATCH PATTERN (A B+? C) WITHIN 25 DEFINE B AS B.price > A.price, C AS C.price < A.price",
		"ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH SKIP TO NEXT ROW PATTERN (A (B | C){2,4} D) DEFINE B AS B.price > PREV(B.price), C AS C.price = PREV(C.price), D AS D.price < PREV(D.price, 2)",
		"ONE ROW PER MATCH AFTER MATCH SKIP TO LAST B PATTERN (^A B{1,3}) DEFINE B AS B.price >= PREV(B.price)",
		"ALL ROWS PER MATCH SHOW EMPTY MATCHES PATTERN (B*) WITHIN 5 DEFINE B AS B.price > PREV(B.price)",
		// Long waits (the match goes on where the rows ran out), with history.
		"ALL ROWS PER MATCH PATTERN (A B+ C) WITHIN 300 DEFINE B AS B.price >= A.price - 15, C AS C.price < A.price - 5",
		"ONE ROW PER MATCH PATTERN (A B*? C) WITHIN 200 DEFINE B AS B.price > PREV(B.price) - 4, C AS C.price < PREV(C.price) - 2",
	} {
		text := "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY p ORDER BY ts MEASURES MATCH_NUMBER() AS n, CLASSIFIER() AS c, FIRST(price) AS f, LAST(price) AS l " + q + ")"
		query, err := compile(t, schema, text)
		if err != nil {
			t.Fatal(err)
		}
		if err := query.LiveError(); err != nil {
			t.Fatal(err)
		}
		rows := func(out map[string][]string) func([]event.Value, *event.Event) bool {
			return func(row []event.Value, _ *event.Event) bool {
				var b []byte
				for _, v := range row {
					b = append(v.AppendJSON(b), ',')
				}
				p := row[0].String()
				out[p] = append(out[p], string(b))
				return true
			}
		}
		loaded, live := map[string][]string{}, map[string][]string{}
		if _, err := query.Run(context.Background(), events, 1, rows(loaded)); err != nil {
			t.Fatal(err)
		}
		l := query.Live(rows(live))
		for i, e := range events {
			if err := l.Push(e); err != nil {
				t.Fatal(err)
			}
			if i%7 == 0 {
				if err := l.Push(event.Tick(e.TS)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := l.End(); err != nil {
			t.Fatal(err)
		}
		for p := range loaded {
			if !slices.Equal(loaded[p], live[p]) {
				t.Errorf("%s: partition %s: live has %d rows, loaded %d; first difference at %d", q, p, len(live[p]), len(loaded[p]), firstDiff(loaded[p], live[p]))
			}
		}
		if len(loaded) != len(live) || len(loaded) == 0 {
			t.Errorf("%s: %d partitions live, %d loaded", q, len(live), len(loaded))
		}
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestHistoryPathAgrees runs queries whose DEFINEs read only their row,
// and again with a term that is always true but reads the match's first
// row (FIRST), which makes the matcher keep every thread's labels and
// merge threads only when those are equal: both must give the same rows.
func TestHistoryPathAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	b.WriteString("p,price")
	for range 400 {
		fmt.Fprintf(&b, ";%d,%d", r.IntN(2), r.IntN(5))
	}
	const always = " AND FIRST(price) = FIRST(price)"
	for _, q := range []struct{ pattern, skip string }{
		{"A (B | C)+ D", ""},
		{"A (B | C)+? D", "AFTER MATCH SKIP TO NEXT ROW"},
		{"(A | B)* C{2,3} D?", ""},
		{"A{- B* -} C? D", "AFTER MATCH SKIP TO NEXT ROW"},
		{"PERMUTE(A, B, C) D*?", ""},
	} {
		define := func(extra string) string {
			return "DEFINE A AS price < 2" + extra + ", B AS price > PREV(price)" + extra + ", C AS price = PREV(price)" + extra + ", D AS price <= 1" + extra
		}
		var outs [2]string
		for i, extra := range []string{"", always} {
			outs[i] = run(t, b.String(), "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY p ORDER BY ts MEASURES MATCH_NUMBER() AS n, CLASSIFIER() AS c ALL ROWS PER MATCH "+
				q.skip+" PATTERN ("+q.pattern+") "+define(extra)+")")
		}
		if outs[0] != outs[1] || outs[0] == "" {
			t.Errorf("%s: with history\n%s\nwithout\n%s", q.pattern, outs[1], outs[0])
		}
	}
}
