package session_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/session"
)

// mrData is a CSV of a random walk per symbol.
func mrData(rows, symbols int) string {
	r := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("type,ts,symbol,price\n")
	price := make([]int, symbols)
	for i := range rows {
		s := r.IntN(symbols)
		price[s] += r.IntN(7) - 3
		fmt.Fprintf(&b, "stock,%d,%d,%d\n", i+1, s, 100+price[s])
	}
	return b.String()
}

// runMR runs query on data, loaded from a file (on workers) or live from
// standard input, and returns its JSON Lines.
func runMR(t *testing.T, data, query string, live bool, workers int) string {
	t.Helper()
	var opts []session.Option
	load := "LOAD '-' AS s"
	if live {
		opts = append(opts, session.WithStdin(strings.NewReader(data)))
	} else {
		path := filepath.Join(t.TempDir(), "s.csv")
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		load = "LOAD '" + path + "' AS s"
	}
	s, stdout, stderr := newSession(t, opts...)
	if err := exec(t, s, fmt.Sprintf("SET format = jsonl; SET limit = 0; SET workers = %d; %s; %s;", workers, load, query)); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if err := s.Wait(context.Background()); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	return stdout.String()
}

// TestMatchRecognizeLive checks that a live MATCH_RECOGNIZE writes what
// the loaded one does: byte for byte on one partition, and each
// partition's lines in the same order on several (live, the partitions'
// matches interleave as they are decided); loaded, on 1 and 2 workers.
func TestMatchRecognizeLive(t *testing.T) {
	data := mrData(2000, 4)
	for _, q := range []string{
		"SELECT * FROM s MATCH_RECOGNIZE (ORDER BY ts MEASURES A.price AS low, LAST(B.price) AS top, C.price AS fall ONE ROW PER MATCH PATTERN (A B+ C) WITHIN 30 DEFINE B AS B.price > PREV(B.price), C AS C.price < PREV(C.price))",
		"SELECT * FROM s MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES MATCH_NUMBER() AS n, CLASSIFIER() AS c ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW PATTERN (A B{1,3}? C) DEFINE B AS B.price > A.price, C AS C.price < PREV(C.price))",
	} {
		loaded := runMR(t, data, q, false, 1)
		if loaded == "" {
			t.Fatalf("%s: no rows", q)
		}
		if got := runMR(t, data, q, false, 2); got != loaded {
			t.Errorf("%s: loaded on 2 workers differs from 1", q)
		}
		live := runMR(t, data, q, true, 1)
		if !strings.Contains(q, "PARTITION BY") {
			if live != loaded {
				t.Errorf("%s: live differs from loaded:\n%s\nwant\n%s", q, live, loaded)
			}
			continue
		}
		if a, b := bySymbol(loaded), bySymbol(live); !slices.EqualFunc(a, b, slices.Equal) {
			t.Errorf("%s: live's partitions differ from loaded's", q)
		}
	}
}

// bySymbol groups JSON Lines by their symbol, each group in its order.
func bySymbol(out string) [][]string {
	groups := map[string][]string{}
	var keys []string
	for line := range strings.Lines(out) {
		k, _, _ := strings.Cut(line, ",")
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], line)
	}
	slices.Sort(keys)
	var g [][]string
	for _, k := range keys {
		g = append(g, groups[k])
	}
	return g
}

// TestMatchRecognizeLiveErrors checks what a live stream refuses, with a
// caret.
func TestMatchRecognizeLiveErrors(t *testing.T) {
	for _, tt := range []struct{ query, want string }{
		{"SELECT * FROM s MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B+) DEFINE B AS B.price > PREV(B.price))", "an unbounded quantifier needs WITHIN"},
		{"SELECT * FROM s MATCH_RECOGNIZE (ORDER BY price PATTERN (A B) DEFINE B AS B.price > PREV(B.price))", "ORDER BY must be ts"},
		{"SELECT * FROM s MATCH_RECOGNIZE (PATTERN (A B $) DEFINE B AS B.price > A.price)", "$ cannot be used"},
		{"SELECT * FROM s MATCH_RECOGNIZE (PATTERN (A B) DEFINE B AS B.price > NEXT(B.price))", "not supported yet: NEXT on a live stream"},
	} {
		s, _, stderr := newSession(t, session.WithStdin(strings.NewReader(mrData(10, 1))))
		if err := exec(t, s, "LOAD '-' AS s; "+tt.query+";"); err == nil {
			t.Errorf("%s: no error", tt.query)
		}
		if !strings.Contains(stderr.String(), tt.want) || !strings.Contains(stderr.String(), "^") {
			t.Errorf("%s: stderr lacks %q with a caret:\n%s", tt.query, tt.want, stderr)
		}
	}
}

// TestMatchRecognizeExplain checks EXPLAIN of a MATCH_RECOGNIZE in each
// format, and EXPLAIN ANALYZE's counts, against a golden file.
func TestMatchRecognizeExplain(t *testing.T) {
	s, stdout, stderr := newSession(t)
	var out strings.Builder
	for _, explain := range []string{"EXPLAIN", "EXPLAIN (FORMAT json)", "EXPLAIN (FORMAT dot)", "EXPLAIN ANALYZE", "EXPLAIN (ANALYZE, FORMAT json)", "EXPLAIN (ANALYZE, FORMAT dot)"} {
		stdout.Reset()
		stderr.Reset()
		if err := exec(t, s, explain+" "+fmt.Sprintf(mrVShape, "ALL ROWS PER MATCH")+";"); err != nil {
			t.Fatalf("%s: %v\n%s", explain, err, stderr)
		}
		fmt.Fprintf(&out, "== %s\n%s%s", explain, stdout, stderr)
	}
	testkit.Golden(t, "testdata/mr_explain.golden", out.String())
}

// TestMatchRecognizeInto checks INTO: each output row becomes an event of
// the derived stream at the ts of the row it is at, loaded and live, and
// a query on the derived stream reads them in ts order.
func TestMatchRecognizeInto(t *testing.T) {
	data := mrData(1500, 3)
	const mr = "SELECT * FROM s MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES A.price AS low, C.price AS fall, C.ts AS at " +
		"ONE ROW PER MATCH PATTERN (A B+ C) WITHIN 20 DEFINE B AS B.price > PREV(B.price), C AS C.price < PREV(C.price))"
	const consumer = "PATTERN d e FROM d WITHIN 1 RETURN e.symbol, e.low, e.fall, e.at"
	rows := runMR(t, data, mr, false, 1)
	// The rows as the consumer returns them: in ts order ("at"), with its
	// column names.
	var want []string
	for line := range strings.Lines(rows) {
		line = strings.NewReplacer(`"symbol"`, `"e.symbol"`, `"low"`, `"e.low"`, `"fall"`, `"e.fall"`, `"at"`, `"e.at"`).Replace(line)
		want = append(want, line)
	}
	at := func(line string) string {
		_, a, _ := strings.Cut(line, `"e.at":`)
		return fmt.Sprintf("%10s", strings.TrimSuffix(strings.TrimSpace(a), "}"))
	}
	slices.SortStableFunc(want, func(a, b string) int { return strings.Compare(at(a), at(b)) })
	if len(want) < 10 {
		t.Fatalf("too few matches to test: %d", len(want))
	}
	for _, live := range []bool{false, true} {
		got := runMR(t, data, mr+" INTO d; "+consumer, live, 2)
		if got != strings.Join(want, "") {
			t.Errorf("live %v: the derived stream's events:\n%s\nwant\n%s", live, got, strings.Join(want, ""))
		}
	}
}

// TestMatchRecognizeIntoErrors checks INTO's refusals, with a caret.
func TestMatchRecognizeIntoErrors(t *testing.T) {
	s, _, stderr := newSession(t)
	for _, tt := range []struct{ stmt, want string }{
		{"SELECT * FROM stocks MATCH_RECOGNIZE (MEASURES A.ts AS ts PATTERN (A) DEFINE A AS true) INTO d;", "column ts would be hidden by the derived event's ts"},
		{"SELECT * FROM stocks MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS true) INTO stocks;", "stocks is a loaded stream, not one made by INTO"},
	} {
		stderr.Reset()
		if err := exec(t, s, tt.stmt); err == nil || !strings.Contains(stderr.String(), tt.want) || !strings.Contains(stderr.String(), "^") {
			t.Errorf("%s: got %v\n%s\nwant %q with a caret", tt.stmt, err, stderr, tt.want)
		}
	}
}
