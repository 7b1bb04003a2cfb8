package source

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"iter"
	"math"
	"math/bits"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/sase-cep/sase/event"
)

// javaRandom is java.util.Random, bit for bit, so that a seed gives the
// same stream as SASE's Java generator.
type javaRandom struct{ seed int64 }

const (
	javaMultiplier = 0x5DEECE66D
	javaAddend     = 0xB
	javaMask       = 1<<48 - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ javaMultiplier) & javaMask}
}

func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaMultiplier + javaAddend) & javaMask
	return int32(r.seed >> (48 - bits))
}

// nextInt is Random.nextInt(bound). bound must be positive (Java throws).
func (r *javaRandom) nextInt(bound int32) int32 { return r.below(newBound(bound)) }

// bound is a positive bound of nextInt with what makes its modulo cheap:
// a division is most of a draw's cost.
type bound struct {
	n    int32
	pow2 bool   // n is a power of two
	m    uint64 // 2^64 / n rounded up, for Lemire's fastmod
}

func newBound(n int32) bound {
	if n <= 0 {
		panic("nextInt: bound must be positive")
	}
	return bound{n: n, pow2: n&-n == n, m: ^uint64(0)/uint64(n) + 1}
}

// mod is x % b.n for 0 <= x < 2^31 (exact for any 32-bit x and n).
func (b bound) mod(x int32) int32 {
	hi, _ := bits.Mul64(b.m*uint64(x), uint64(b.n))
	return int32(hi)
}

// below is Random.nextInt(b.n), written small enough to inline into the
// generator's loop (next is spelled out).
func (r *javaRandom) below(b bound) int32 {
	for {
		r.seed = (r.seed*javaMultiplier + javaAddend) & javaMask
		x := int32(r.seed >> 17) // next(31)
		if b.pow2 {              // a power of two: take the high bits
			return int32(int64(b.n) * int64(x) >> 31)
		}
		// int32 wrap-around here is Java's test for the biased tail.
		if val := b.mod(x); x-val+(b.n-1) >= 0 {
			return val
		}
	}
}

// StockConfig are GENERATE STOCKS's settings (docs/LANGUAGE.md, Statements).
type StockConfig struct {
	Events              int
	Symbols             int
	MaxPrice            int
	MaxVolume           int
	Seed                int64
	IncreaseProbability int // > 100: uniform prices; <= 100: a random walk
}

// DefaultStockConfig returns SASE's defaults.
func DefaultStockConfig() StockConfig {
	return StockConfig{Events: 10000, Symbols: 10, MaxPrice: 100, MaxVolume: 1000, Seed: 11, IncreaseProbability: 101}
}

var stockKeys = []string{"events", "increase_probability", "max_price", "max_volume", "seed", "symbols"}

// StockConfigFromOptions applies GENERATE STOCKS's WITH options to the
// defaults. Keys are case-insensitive. Since GENERATE keeps the events, it
// also checks that they fit in memory (see checkMemory).
func StockConfigFromOptions(kv map[string]int64) (StockConfig, error) {
	cfg := DefaultStockConfig()
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := kv[k]
		var dst *int
		switch strings.ToLower(k) {
		case "seed":
			cfg.Seed = v
			continue
		case "events":
			dst = &cfg.Events
		case "symbols":
			dst = &cfg.Symbols
		case "max_price":
			dst = &cfg.MaxPrice
		case "max_volume":
			dst = &cfg.MaxVolume
		case "increase_probability":
			dst = &cfg.IncreaseProbability
		default:
			return StockConfig{}, fmt.Errorf("unknown GENERATE STOCKS option %q (valid: %s)", k, strings.Join(stockKeys, ", "))
		}
		if v < math.MinInt32 || v > math.MaxInt32 { // a Java int in SASE
			return StockConfig{}, fmt.Errorf("GENERATE STOCKS option %s = %d is out of range", k, v)
		}
		*dst = int(v)
	}
	if err := cfg.Validate(); err != nil {
		return StockConfig{}, err
	}
	return cfg, cfg.checkMemory()
}

// stockEventBytes is what one generated event takes in memory: the event,
// its four values and its pointer in the stream.
const stockEventBytes = int64(unsafe.Sizeof(event.Event{}) + stockAttrs*unsafe.Sizeof(event.Value{}) + unsafe.Sizeof(&event.Event{}))

// stockTypeBytes is what one symbol takes in uniform mode, where it is a
// type (stock1 ... stockN): its TypeInfo with a slot each of Kinds,
// Declared, Present and ByKind (the counts by kind that say when values
// are absent or mixed), its name, its entry in the schema's index, and
// its counts. TestStockSymbolBytes measures it (586 bytes). In
// random-walk mode a symbol is a price and a count.
const stockTypeBytes = 640

// symbolBytes is what one symbol takes in memory.
func (c StockConfig) symbolBytes() int64 {
	if c.uniform() {
		return stockTypeBytes
	}
	return 16
}

// checkMemory refuses a stream whose events and symbols would take more
// than half of
// the memory available, which leaves the other half to the queries on it:
// allocating them would otherwise end the process with a fatal
// out-of-memory error, which nothing can catch. Where the available memory
// cannot be told, nothing is refused.
func (c StockConfig) checkMemory() error {
	limit, says, ok := MemoryLimit()
	events, symbols := int64(c.Events)*stockEventBytes, int64(c.Symbols)*c.symbolBytes()
	need := events + symbols
	if !ok || need <= limit {
		return nil
	}
	// The option that takes the most is named: each is checked alone
	// first, the others at their defaults (the session's checkEach).
	what := fmt.Sprintf("events = %d", c.Events)
	if symbols > events {
		what = fmt.Sprintf("symbols = %d", c.Symbols)
	}
	return fmt.Errorf("GENERATE STOCKS %s would take about %s of memory, more than %s: generate fewer (sase gen stocks writes any number of events as CSV)",
		what, FormatBytes(need), says)
}

// MemoryLimit is the most a stream that a statement makes in memory may
// take: half of the memory available (memoryAvailable), which leaves the
// other half to the queries on it, since running out ends the process
// with a fatal error that nothing can catch. says is the figure's text
// ("half of the 3.2 GB available (MemAvailable in /proc/meminfo)"); ok is
// false when the available memory cannot be told.
func MemoryLimit() (limit int64, says string, ok bool) {
	avail, from, ok := memoryAvailable()
	return avail / 2, fmt.Sprintf("half of the %s available (%s)", FormatBytes(max(avail, 0)), from), ok
}

// memoryAvailable is how much memory the process may still take, and
// what says so: the least of the kernel's MemAvailable, a cgroup's limit
// less its use, the address-space limit less what is mapped, and the Go
// memory limit less what the runtime holds. ok is
// false when none is known (no /proc, no limit). A variable, for tests.
var memoryAvailable = func() (n int64, from string, ok bool) {
	consider := func(v int64, what string) {
		if !ok || v < n {
			n, from, ok = v, what, true
		}
	}
	if text, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(text)) {
			if kb, found := strings.CutPrefix(line, "MemAvailable:"); found {
				if v, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64); err == nil {
					consider(v<<10, "MemAvailable in /proc/meminfo")
				}
			}
		}
	}
	for _, cg := range []struct{ limit, usage, what string }{
		{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current", "the cgroup's memory.max"},
		{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes", "the cgroup's memory limit"},
	} {
		limit, lerr := readInt(cg.limit) // "max" (no limit) does not parse
		usage, uerr := readInt(cg.usage)
		if lerr == nil && uerr == nil {
			consider(limit-usage, cg.what)
		}
	}
	if left, found := addressSpaceLeft(); found {
		consider(left, "the address-space limit, ulimit -v, less what the process has mapped")
	}
	if limit := debug.SetMemoryLimit(-1); limit < math.MaxInt64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		consider(limit-int64(ms.Sys-ms.HeapReleased), "the Go memory limit, GOMEMLIMIT")
	}
	return n, from, ok
}

func readInt(path string) (int64, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(text)), 10, 64)
}

// Validate reports a setting the generator cannot use.
func (c StockConfig) Validate() error {
	for _, s := range []struct {
		name string
		v    int
	}{{"events", c.Events}, {"symbols", c.Symbols}, {"max_price", c.MaxPrice}, {"max_volume", c.MaxVolume}} {
		if s.v <= 0 {
			return fmt.Errorf("GENERATE STOCKS option %s must be positive, got %d", s.name, s.v)
		}
		if s.name != "events" && s.v > math.MaxInt32 {
			return fmt.Errorf("GENERATE STOCKS option %s = %d is out of range", s.name, s.v)
		}
	}
	return nil
}

func (c StockConfig) uniform() bool { return c.IncreaseProbability > 100 }

// Attribute slots of stock events, in the order StockSchema declares them.
const (
	slotID = iota
	slotSymbol
	slotPrice
	slotVolume
	stockAttrs
)

// StockSchema returns the schema of the stream cfg generates: attributes
// id, symbol, price, volume (slots 0-3, all int), and types stock1 ..
// stockN (type id = symbol - 1) in uniform mode, or the single type stock
// in random-walk mode. Counts are zero.
func StockSchema(cfg StockConfig) *event.Schema {
	s := event.NewSchema()
	for _, a := range []string{"id", "symbol", "price", "volume"} {
		s.AddAttr(a)
	}
	names := []string{"stock"}
	if cfg.uniform() {
		names = make([]string, cfg.Symbols)
		for i := range names {
			names[i] = "stock" + strconv.Itoa(i+1)
		}
	}
	for _, n := range names {
		id := s.AddType(n)
		for slot := range stockAttrs {
			s.Declare(id, slot)
			s.Types[id].Kinds[slot] = s.Types[id].Kinds[slot].With(event.Int)
		}
	}
	return s
}

// stockGen is the generator's state between events.
type stockGen struct {
	cfg                    StockConfig
	uniform                bool
	rnd                    javaRandom
	symbols, price, volume bound
	percent, step          bound   // random walk: nextInt(100), nextInt(3)
	prices                 []int64 // random walk: current price per symbol (index symbol-1)
	i                      int64
}

func newStockGen(cfg StockConfig) *stockGen {
	g := &stockGen{cfg: cfg, uniform: cfg.uniform(), rnd: *newJavaRandom(cfg.Seed),
		symbols: newBound(int32(cfg.Symbols)), volume: newBound(int32(cfg.MaxVolume)),
		percent: newBound(100), step: newBound(3)}
	if g.uniform {
		g.price = newBound(int32(cfg.MaxPrice))
		g.rnd.nextInt(100) // SASE draws and discards one number in this mode
	} else {
		g.prices = make([]int64, cfg.Symbols)
		for i := range g.prices {
			g.prices[i] = int64(g.rnd.nextInt(1000))
		}
	}
	return g
}

// fill sets every field and every one of the stockAttrs slots of run's
// events (an arena's run is not cleared) to the next events, and counts them by type (counts has one
// per symbol at least: a type id is below the symbols).
func (g *stockGen) fill(run []event.Event, counts []int64) {
	rnd, i := g.rnd, g.i // locals in registers across the loop, not fields
	for k := range run {
		e := &run[k]
		symbol := int64(rnd.below(g.symbols)) + 1
		var price int64
		if g.uniform {
			price = int64(rnd.below(g.price)) + 1
			e.Type = int(symbol - 1)
		} else {
			p := g.cfg.IncreaseProbability
			x := int(rnd.below(g.percent)) + 1
			if x <= p {
				g.prices[symbol-1] += int64(rnd.below(g.step)) + 1
			} else if x > (100+p)/2 {
				g.prices[symbol-1] -= int64(rnd.below(g.step)) + 1
			}
			price = g.prices[symbol-1]
			e.Type = 0
		}
		volume := int64(rnd.below(g.volume)) + 1
		counts[e.Type]++
		e.TS, e.Seq = i, i
		a := e.Attrs[:stockAttrs:stockAttrs] // only ever numbers: SetNumber's words suffice
		event.SetNumber(a, slotID, event.IntValue(i))
		event.SetNumber(a, slotSymbol, event.IntValue(symbol))
		event.SetNumber(a, slotPrice, event.IntValue(price))
		event.SetNumber(a, slotVolume, event.IntValue(volume))
		i++
	}
	g.rnd, g.i = rnd, i
}

// StockEvents yields the stream cfg describes (docs/LANGUAGE.md, Statements), each event valid
// after the iteration moves on; type ids are StockSchema(cfg)'s. cfg must
// be valid (see Validate). Each iteration starts again from the seed.
func StockEvents(cfg StockConfig) iter.Seq[*event.Event] {
	return func(yield func(*event.Event) bool) {
		g := newStockGen(cfg)
		var a event.Arena
		counts := make([]int64, cfg.Symbols)
		for range cfg.Events {
			run := a.Run(1, stockAttrs)
			g.fill(run, counts)
			if !yield(&run[0]) {
				return
			}
		}
	}
}

// GenerateStocks materializes the stream cfg describes, named name, with
// unit-less timestamps (ts = seq) and Source "generated". cfg must be
// valid, and fit in memory (StockConfigFromOptions checks both).
func GenerateStocks(name string, cfg StockConfig) *event.Stream {
	s, _ := GenerateStocksContext(context.Background(), name, cfg)
	return s
}

// stockCheckEvery is how many events GenerateStocksContext makes between
// two looks at its context, a run of the arena's: small enough that the
// run stays in the cache while it is filled (120 KB).
const stockCheckEvery = 1 << 10

// GenerateStocksContext is GenerateStocks, stopped with ctx's error once
// ctx is done.
func GenerateStocksContext(ctx context.Context, name string, cfg StockConfig) (*event.Stream, error) {
	schema := StockSchema(cfg)
	// The events and their values come from an arena: blocks the
	// collector need not scan or the runtime clear, allocated as they are
	// filled, so that a cancel need not wait for gigabytes to be zeroed.
	// They are kept by run (event.Arena.Run), a pointer a run: a
	// collection during the generation then scans a few pointers, not one
	// an event; the stream's pointers are made at the end.
	var a event.Arena
	var runs [][]event.Event
	g := newStockGen(cfg)
	counts := make([]int64, len(schema.Types))
	for left := cfg.Events; left > 0; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		run := a.Run(min(left, stockCheckEvery), stockAttrs)
		g.fill(run, counts)
		runs = append(runs, run)
		left -= len(run)
	}
	events := event.Pointers(cfg.Events)
	for _, run := range runs {
		for i := range run {
			events = append(events, &run[i])
		}
	}
	// Every event of a type has the kinds of this one: all int.
	sample := make([]event.Value, stockAttrs)
	for i := range sample {
		sample[i] = event.IntValue(0)
	}
	for id, n := range counts {
		if n > 0 {
			schema.ObserveN(&event.Event{Type: id, Attrs: sample}, n)
		}
	}
	return &event.Stream{Name: name, Source: "generated", Schema: schema, Events: events}, nil
}

// WriteStocksCSV writes the stream cfg describes as CSV with the header
// type,ts,id,symbol,price,volume. cfg must be valid.
func WriteStocksCSV(w io.Writer, cfg StockConfig) error {
	return writeStocks(w, cfg, "type,ts,id,symbol,price,volume\n", func(line []byte, typ string, e *event.Event) []byte {
		line = append(line, typ...)
		line = append(line, ',')
		line = strconv.AppendInt(line, e.TS, 10)
		for _, v := range e.Attrs {
			line = append(line, ',')
			line = strconv.AppendInt(line, v.Int(), 10)
		}
		return append(line, '\n')
	})
}

// WriteStocksJSONL writes the stream cfg describes as JSON Lines, one
// {"type":..,"ts":..,"id":..,"symbol":..,"price":..,"volume":..} per
// event: what LoadJSONL reads back as WriteStocksCSV's stream. cfg must be
// valid.
func WriteStocksJSONL(w io.Writer, cfg StockConfig) error {
	keys := []string{`,"id":`, `,"symbol":`, `,"price":`, `,"volume":`}
	return writeStocks(w, cfg, "", func(line []byte, typ string, e *event.Event) []byte {
		line = append(line, `{"type":"`...)
		line = append(line, typ...) // stock names need no escaping
		line = append(line, `","ts":`...)
		line = strconv.AppendInt(line, e.TS, 10)
		for i, v := range e.Attrs {
			line = append(line, keys[i]...)
			line = strconv.AppendInt(line, v.Int(), 10)
		}
		return append(line, '}', '\n')
	})
}

// writeStocks writes head, then each event of cfg's stream as line
// renders it.
func writeStocks(w io.Writer, cfg StockConfig, head string, line func([]byte, string, *event.Event) []byte) error {
	schema := StockSchema(cfg)
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(head)
	g := newStockGen(cfg)
	run := []event.Event{{Attrs: make([]event.Value, stockAttrs)}}
	e := &run[0]
	counts := make([]int64, cfg.Symbols)
	var text []byte
	for range cfg.Events {
		g.fill(run, counts)
		text = line(text[:0], schema.Types[e.Type].Name, e)
		if _, err := bw.Write(text); err != nil {
			return err // bufio keeps the first error; stop early
		}
	}
	return bw.Flush()
}
