package source_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/source"
)

// row is one CSV data row of a random case, with its ts.
type row struct {
	ts   int64
	text string
}

func caseRows(t testing.TB, csv string) (header string, rows []row) {
	lines := strings.Split(strings.TrimSuffix(csv, "\n"), "\n")
	for _, l := range lines[1:] {
		ts, err := strconv.ParseInt(strings.Split(l, ",")[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row{ts, l})
	}
	return lines[0], rows
}

// shuffle moves each row by at most bound ticks: it gets the key ts +
// U[0, bound], and rows arrive in key order (ties in row order), so a row
// arriving after another has a ts at most bound below that one's.
func shuffle(rng *rand.Rand, rows []row, bound int64) []row {
	type keyed struct {
		key int64
		r   row
	}
	ks := make([]keyed, len(rows))
	for i, r := range rows {
		ks[i] = keyed{r.ts + rng.Int64N(bound+1), r}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return cmpTS(a.key, b.key) })
	out := make([]row, len(ks))
	for i, k := range ks {
		out[i] = k.r
	}
	return out
}

func cmpTS(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// byDefinition splits rows in arrival order into the late ones (ts below
// M − slack, M the largest ts that arrived before) and the others,
// stably sorted by ts: what the queries must see.
func byDefinition(rows []row, slack int64) (late, kept []row) {
	var m int64
	for i, r := range rows {
		if i > 0 && r.ts < m-slack {
			late = append(late, r)
			continue
		}
		if i == 0 || r.ts > m {
			m = r.ts
		}
		kept = append(kept, r)
	}
	kept = slices.Clone(kept)
	slices.SortStableFunc(kept, func(a, b row) int { return cmpTS(a.ts, b.ts) })
	return late, kept
}

func csvOf(header string, rows []row) string {
	var b strings.Builder
	b.WriteString(header + "\n")
	for _, r := range rows {
		b.WriteString(r.text + "\n")
	}
	return b.String()
}

// readLive reads csv through a live source (standard input) with opts:
// the items it delivers, ticks included, and its stats.
func readLive(t *testing.T, csv string, opts source.Options) (*event.Stream, []*event.Event, source.Stats) {
	t.Helper()
	src, err := source.Open(context.Background(), "-", source.WithStdin(source.OneLineReader(csv)), source.WithOptions(opts))
	if err != nil {
		t.Fatal(err)
	}
	var items []*event.Event
	if err := src.Read(context.Background(), func(b []*event.Event) bool { items = append(items, b...); return true }); err != nil {
		t.Fatal(err)
	}
	s := &event.Stream{Name: "s", Source: "-", Unit: src.Unit()}
	src.Schema(func(sc *event.Schema) { s.Schema = sc })
	last := int64(-1 << 63)
	for _, e := range items {
		if e.TS < last {
			t.Fatalf("item at %d after time %d", e.TS, last)
		}
		last = e.TS
		if !e.IsTick() {
			s.Events = append(s.Events, e)
		}
	}
	return s, items, src.Stats()
}

// TestReorderMatchesSorted is the slack's contract (docs/LANGUAGE.md,
// Event time): on random streams shuffled within the slack, every engine
// returns over a batch LOAD and over a live stream the matches of the
// sorted stream, and nothing is late; shuffled beyond it, the late events
// are exactly those the definition names, written unchanged to the late
// file (after the header), and the matches are those of the sorted non-late events.
func TestReorderMatchesSorted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(13, 71))
	dir := t.TempDir()
	// 40 random cases by default (each case both within and beyond the
	// slack, on every engine, batch and live), 120 with -long.
	cases := testkit.Size(40, 120)
	if testing.Short() {
		cases = 30
	}
	for i := range cases {
		c := randquery.Generate(rng, randquery.Strategies())
		header, rows := caseRows(t, c.StreamCSV)
		slack := int64(1 + rng.IntN(5))
		for _, beyond := range []bool{false, true} {
			bound := slack
			if beyond {
				bound = slack + 1 + int64(rng.IntN(6))
			}
			arrived := shuffle(rng, rows, bound)
			wantLate, kept := byDefinition(arrived, slack)
			if !beyond && len(wantLate) > 0 {
				t.Fatalf("case %d: shuffle within the slack made %d late", i, len(wantLate))
			}
			ref, err := source.LoadCSV(strings.NewReader(csvOf(header, kept)), "sorted.csv", source.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ref.Name = "s"
			in := csvOf(header, arrived)
			latePath := filepath.Join(dir, "late"+strconv.Itoa(i)+strconv.FormatBool(beyond)+".csv")
			opts := source.Options{Slack: slack, Late: latePath}
			batch, err := source.LoadCSV(strings.NewReader(in), "in.csv", opts)
			if err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			batch.Name = "s"
			got, err := os.ReadFile(latePath)
			if err != nil {
				t.Fatal(err)
			}
			want := "" // a new late file gets the header before its first line
			if len(wantLate) > 0 {
				want = csvOf(header, wantLate)
			}
			if string(got) != want {
				t.Fatalf("case %d (slack %d): late file\n%s\nwant\n%s\ninput:\n%s", i, slack, got, want, in)
			}
			liveOpts := opts
			liveOpts.Late = ""
			live, items, st := readLive(t, in, liveOpts)
			if st.Late != int64(len(wantLate)) || st.Read != st.Used+st.Late+st.Rejected || st.Rejected != 0 {
				t.Fatalf("case %d: live stats %+v, want %d late", i, st, len(wantLate))
			}
			for _, engine := range sase.EngineNames() {
				want, werr := randquery.Matches(ctx, ref, c.Query, engine)
				gotB, berr := randquery.Matches(ctx, batch, c.Query, engine)
				gotL, lerr := randquery.MatchesOf(ctx, live, slices.Values(items), c.Query, engine)
				if (werr != nil) != (berr != nil) || (werr != nil) != (lerr != nil) {
					t.Fatalf("case %d %s: errors %v / %v / %v\nquery: %s", i, engine, werr, berr, lerr, c.Query)
				}
				if !slices.Equal(want, gotB) || !slices.Equal(want, gotL) {
					t.Fatalf("case %d %s (slack %d, moved by %d): query %s\nsorted: %d %v\nbatch: %d %v\nlive: %d %v\ninput:\n%s",
						i, engine, slack, bound, c.Query, len(want), want, len(gotB), gotB, len(gotL), gotL, in)
				}
			}
		}
	}
}

// TestReorderBatches: a file longer than a batch is released batch by
// batch, in the order of the sorted file.
func TestReorderBatches(t *testing.T) {
	var gen strings.Builder
	cfg := source.DefaultStockConfig()
	cfg.Events = 3000
	if err := source.WriteStocksCSV(&gen, cfg); err != nil {
		t.Fatal(err)
	}
	header, rows := caseRows(t, gen.String())
	rng := rand.New(rand.NewPCG(5, 5))
	arrived := shuffle(rng, rows, 40)
	sorted, err := source.LoadCSV(strings.NewReader(gen.String()), "sorted.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []source.Options{{Slack: 40}, {Sort: true}} {
		got, err := source.LoadCSV(strings.NewReader(csvOf(header, arrived)), "in.csv", opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Events) != len(sorted.Events) {
			t.Fatalf("%+v: %d events, want %d", opts, len(got.Events), len(sorted.Events))
		}
		for i, e := range got.Events {
			w := sorted.Events[i]
			if e.TS != w.TS || e.Seq != int64(i) || !slices.EqualFunc(e.Attrs, w.Attrs, event.Value.Identical) {
				t.Fatalf("%+v: event %d is ts %d seq %d %v, want ts %d %v", opts, i, e.TS, e.Seq, e.Attrs, w.TS, w.Attrs)
			}
		}
	}
}
