package source

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/testkit"
)

// Expected values printed by java.util.Random (OpenJDK).
func TestJavaRandom(t *testing.T) {
	r := newJavaRandom(42)
	// 16 and 1<<30 take the power-of-two path; (1<<30)+1 rejects about half
	// its draws, so the loop runs.
	bounds := []int32{16, 1, 1<<30 + 1, 1000, 1<<30 + 1, 1<<30 + 1, 7, 1 << 30, 1<<30 + 1, 1<<30 + 1}
	want := []int32{11, 0, 102948884, 970, 595021505, 196118093, 3, 484533751, 791955276, 819572292}
	for i, b := range bounds {
		if got := r.nextInt(b); got != want[i] {
			t.Fatalf("draw %d: nextInt(%d) = %d, want %d", i, b, got, want[i])
		}
	}
	r = newJavaRandom(-5)
	if got := r.next(32); got != 1156638822 { // Random.nextInt()
		t.Errorf("seed -5: nextInt() = %d, want 1156638822", got)
	}
	if got := r.nextInt(100); got != 21 {
		t.Errorf("seed -5: second draw nextInt(100) = %d, want 21", got)
	}
}

type stockRef struct {
	seq, symbol, price, volume int64
	typ                        string
}

func checkStock(t *testing.T, s *event.Stream, want stockRef) {
	t.Helper()
	e := s.Events[want.seq]
	got := stockRef{e.Seq, e.Attrs[slotSymbol].Int(), e.Attrs[slotPrice].Int(), e.Attrs[slotVolume].Int(), s.Schema.Types[e.Type].Name}
	if got != want {
		t.Errorf("event %d = %+v, want %+v", want.seq, got, want)
	}
	if e.TS != e.Seq || e.Attrs[slotID].Int() != e.Seq {
		t.Errorf("event %d: ts %d, id %d, want both = seq", e.Seq, e.TS, e.Attrs[slotID].Int())
	}
}

// Reference values from SASE's Java generator.
func TestGenerateStocksReference(t *testing.T) {
	s := GenerateStocks("stocks", DefaultStockConfig())
	if len(s.Events) != 10000 || s.Unit != 0 || s.Source != "generated" || s.Name != "stocks" {
		t.Fatalf("stream: %d events, unit %v, source %q, name %q", len(s.Events), s.Unit, s.Source, s.Name)
	}
	for _, want := range []stockRef{
		{0, 9, 12, 156, "stock9"},
		{1, 4, 8, 741, "stock4"},
		{2, 4, 94, 108, "stock4"},
		{9999, 2, 71, 571, "stock2"},
	} {
		checkStock(t, s, want)
	}

	cfg := DefaultStockConfig()
	cfg.Events, cfg.Symbols, cfg.MaxPrice, cfg.IncreaseProbability = 1000, 3, 1000, 55
	s = GenerateStocks("walk", cfg)
	for _, want := range []stockRef{
		{0, 1, 739, 741, "stock"},
		{1, 3, 108, 815, "stock"},
		{2, 1, 736, 363, "stock"},
		{3, 2, 666, 729, "stock"},
		{999, 1, 958, 194, "stock"},
	} {
		checkStock(t, s, want)
	}
}

func TestStockSchema(t *testing.T) {
	s := GenerateStocks("s", DefaultStockConfig())
	sc := s.Schema
	if got := strings.Join(sc.Attrs, ","); got != "id,symbol,price,volume" {
		t.Errorf("attrs = %s", got)
	}
	var total int64
	for i, ti := range sc.Types {
		if want := "stock" + string(rune('1'+i)); i < 9 && ti.Name != want {
			t.Errorf("type %d = %s, want %s", i, ti.Name, want)
		}
		for slot := range stockAttrs {
			if !ti.Has(slot) || ti.Kinds[slot] != event.KindSet(0).With(event.Int) {
				t.Errorf("%s slot %d: declared %v kinds %v", ti.Name, slot, ti.Has(slot), ti.Kinds[slot])
			}
			if ti.Present[slot] != ti.Count {
				t.Errorf("%s slot %d: present in %d of %d events", ti.Name, slot, ti.Present[slot], ti.Count)
			}
		}
		total += ti.Count
	}
	if len(sc.Types) != 10 || sc.Types[9].Name != "stock10" || total != 10000 {
		t.Errorf("%d types, last %s, counted %d events", len(sc.Types), sc.Types[len(sc.Types)-1].Name, total)
	}

	cfg := DefaultStockConfig()
	cfg.IncreaseProbability = 55
	if sc := StockSchema(cfg); len(sc.Types) != 1 || sc.Types[0].Name != "stock" {
		t.Errorf("random walk types: %d", len(sc.Types))
	}
}

func TestStockEventsMatchesGenerate(t *testing.T) {
	for _, p := range []int{101, 55} {
		cfg := DefaultStockConfig()
		cfg.Events, cfg.IncreaseProbability = 9000, p // past one allocation block
		want := GenerateStocks("s", cfg).Events
		var got []*event.Event
		for e := range StockEvents(cfg) {
			got = append(got, e)
		}
		if len(got) != len(want) {
			t.Fatalf("p=%d: %d events, want %d", p, len(got), len(want))
		}
		for i := range got { // every yielded event must still be intact
			if !sameEvent(got[i], want[i]) {
				t.Fatalf("p=%d: event %d = %+v, want %+v", p, i, *got[i], *want[i])
			}
		}
		n := 0
		for range StockEvents(cfg) {
			if n++; n == 3 {
				break
			}
		}
	}
}

func sameEvent(a, b *event.Event) bool {
	return a.Type == b.Type && a.TS == b.TS && a.Seq == b.Seq && slices.EqualFunc(a.Attrs, b.Attrs, event.Value.Identical)
}

func TestWriteStocksCSVRoundTrip(t *testing.T) {
	for _, p := range []int{101, 55} {
		cfg := DefaultStockConfig()
		cfg.Events, cfg.IncreaseProbability = 5000, p
		var buf bytes.Buffer
		if err := WriteStocksCSV(&buf, cfg); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(buf.String(), "type,ts,id,symbol,price,volume\n") {
			t.Fatalf("header: %q", buf.String()[:40])
		}
		loaded, err := LoadCSV(&buf, "stocks.csv", Options{})
		if err != nil {
			t.Fatal(err)
		}
		gen := GenerateStocks("s", cfg)
		if len(loaded.Events) != len(gen.Events) {
			t.Fatalf("%d events, want %d", len(loaded.Events), len(gen.Events))
		}
		for i, e := range loaded.Events {
			g := gen.Events[i]
			// Type ids follow first appearance in a loaded file, so compare names.
			if loaded.Schema.Types[e.Type].Name != gen.Schema.Types[g.Type].Name ||
				e.TS != g.TS || e.Seq != g.Seq || !slices.EqualFunc(e.Attrs, g.Attrs, event.Value.Identical) {
				t.Fatalf("p=%d: event %d = %+v, want %+v", p, i, *e, *g)
			}
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestWriteStocksCSVError(t *testing.T) {
	if err := WriteStocksCSV(failWriter{}, DefaultStockConfig()); err != io.ErrClosedPipe {
		t.Errorf("err = %v", err)
	}
}

func TestStockConfigFromOptions(t *testing.T) {
	cfg, err := StockConfigFromOptions(map[string]int64{"events": 5, "SYMBOLS": 3, "seed": -1 << 40, "increase_probability": 50, "max_price": 7, "max_volume": 9})
	want := StockConfig{Events: 5, Symbols: 3, MaxPrice: 7, MaxVolume: 9, Seed: -1 << 40, IncreaseProbability: 50}
	if err != nil || cfg != want {
		t.Errorf("got %+v, %v", cfg, err)
	}
	if cfg, err := StockConfigFromOptions(nil); err != nil || cfg != DefaultStockConfig() {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}
	for _, tc := range []struct {
		kv   map[string]int64
		want string
	}{
		{map[string]int64{"event": 5}, `unknown GENERATE STOCKS option "event" (valid: events, increase_probability, max_price, max_volume, seed, symbols)`},
		{map[string]int64{"events": 0}, "events must be positive, got 0"},
		{map[string]int64{"symbols": -2}, "symbols must be positive"},
		{map[string]int64{"max_price": 0}, "max_price must be positive"},
		{map[string]int64{"max_volume": 0}, "max_volume must be positive"},
		{map[string]int64{"symbols": 1 << 40}, "symbols = 1099511627776 is out of range"},
	} {
		if _, err := StockConfigFromOptions(tc.kv); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.kv, err, tc.want)
		}
	}
}

func BenchmarkStockEvents(b *testing.B) {
	cfg := DefaultStockConfig()
	cfg.Events = 1_000_000
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for range StockEvents(cfg) {
			n++
		}
		if n != cfg.Events {
			b.Fatal(n)
		}
	}
}

func BenchmarkGenerateStocks(b *testing.B) {
	cfg := DefaultStockConfig()
	cfg.Events = 1_000_000
	b.ReportAllocs()
	for b.Loop() {
		GenerateStocks("s", cfg)
	}
}

// TestWriteStocksJSONL checks that the JSON Lines and the CSV rendering of
// a stock stream load as the same events.
func TestWriteStocksJSONL(t *testing.T) {
	cfg := DefaultStockConfig()
	cfg.Events = 500
	var c, j bytes.Buffer
	if err := WriteStocksCSV(&c, cfg); err != nil {
		t.Fatal(err)
	}
	if err := WriteStocksJSONL(&j, cfg); err != nil {
		t.Fatal(err)
	}
	fromCSV, err := LoadCSV(&c, "s.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	fromJSONL, err := LoadJSONL(&j, "s.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := dump(fromCSV), dump(fromJSONL); a != b || len(fromCSV.Events) != cfg.Events {
		t.Errorf("CSV loads as\n%s\nJSON Lines as\n%s", a, b)
	}
}

// TestBoundMod checks the division-free modulo against %, at the edges of
// its range and at random.
func TestBoundMod(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ns := []int32{1, 2, 3, 7, 10, 100, 1000, 1 << 30, math.MaxInt32}
	for range 100 {
		ns = append(ns, r.Int32N(math.MaxInt32)+1)
	}
	for _, n := range ns {
		b := newBound(n)
		xs := []int32{0, 1, n - 1, n, math.MaxInt32, math.MaxInt32 - 1}
		for range 1000 {
			xs = append(xs, r.Int32())
		}
		for _, x := range xs {
			if x >= 0 && b.mod(x) != x%n {
				t.Fatalf("%d mod %d = %d, want %d", x, n, b.mod(x), x%n)
			}
		}
	}
}

// TestGenerateStocksSchema checks that GENERATE's schema counts are what
// observing each event records, in both modes.
func TestGenerateStocksSchema(t *testing.T) {
	for _, inc := range []int{101, 55} {
		cfg := DefaultStockConfig()
		cfg.Events, cfg.IncreaseProbability = 3000, inc
		s := GenerateStocks("s", cfg)
		want := StockSchema(cfg)
		for _, e := range s.Events {
			want.Observe(e)
		}
		if !reflect.DeepEqual(s.Schema, want) {
			t.Errorf("increase %d: schema\n%+v\nwant\n%+v", inc, s.Schema.Types[0], want.Types[0])
		}
	}
}

// TestGenerateStocksCollected checks that a generated stream, whose events
// the generation keeps by arena block, survives collections during and
// after it, with garbage reusing freed memory.
func TestGenerateStocksCollected(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	cfg := DefaultStockConfig()
	cfg.Events = 30_000 // several arena blocks
	s := GenerateStocks("s", cfg)
	testkit.Churn()
	i := 0
	for want := range StockEvents(cfg) {
		if !sameEvent(s.Events[i], want) {
			t.Fatalf("event %d = %+v, want %+v", i, *s.Events[i], *want)
		}
		i++
	}
	if i != len(s.Events) {
		t.Fatalf("%d events, want %d", len(s.Events), i)
	}
}
