// Package randquery makes random queries and streams that use every
// feature of the language, and runs a query on one engine to a canonical
// set of matches, for the tests that compare engines: the differential
// test and the strategy properties (exec), and the fuzz target (the
// facade).
package randquery

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/source"
)

// Source makes the generator's choices: IntN returns a number in [0, n).
// A *rand.Rand is one; Bytes makes one from a fuzzer's input.
type Source interface{ IntN(n int) int }

// Bytes reads choices from data, as many bytes a choice as its range
// needs, so that a fuzzer's change to a byte changes one choice. Once data
// runs out the choices go on from a generator seeded by all of data (the
// stream alone uses up a few hundred bytes, and the query must vary too).
func Bytes(data []byte) Source {
	h := fnv.New64a()
	h.Write(data)
	return &byteSource{data: data, rest: rand.New(rand.NewPCG(h.Sum64(), uint64(len(data))))}
}

type byteSource struct {
	data []byte
	rest *rand.Rand
}

func (s *byteSource) IntN(n int) int {
	if len(s.data) == 0 {
		return s.rest.IntN(n)
	}
	v := 0
	for k := 1; k < n; k <<= 8 {
		v <<= 8
		if len(s.data) > 0 {
			v |= int(s.data[0])
			s.data = s.data[1:]
		}
	}
	return v % n
}

// Case is a stream as CSV text (columns type, ts, price, vol, sym, id) and
// a query on it.
type Case struct {
	Name, StreamCSV, Query string
}

// Option widens what Generate makes.
type Option func(*config)

type config struct{ long, extremes, overflows, strategies, nested bool }

// Long lets one stream in five be long enough for window pruning (with a
// short pattern, since basic enumerates every sequence of a long stream).
// Skip-till-any-match, whose matches with a closure grow as 2^n (spec
// 4c.6.4), needs short streams.
func Long() Option { return func(c *config) { c.long = true } }

// Extremes puts timestamps near the minimum and maximum int64 (or jumps
// from one to the other), floats and huge ints among the values, and
// windows up to the largest (and beyond it, a compile error).
func Extremes() Option { return func(c *config) { c.extremes = true } }

// Overflows puts the ends of int64 and their neighbours among a third of
// the vol values of two streams in three, adds to one query in two a
// condition whose int arithmetic (+ - *, unary minus, abs, sum, a
// search's attribute plus a constant) may pass them, and gives one query
// in two a RETURN column of such arithmetic: a run that meets an overflow
// stops with its error. RETURN reads the matches alone, which every engine
// finds alike, so its error is every engine's; a condition's is where a
// plan evaluates it (docs/LANGUAGE.md).
func Overflows() Option { return func(c *config) { c.overflows = true } }

// Strategies names an event selection strategy in one query in three.
func Strategies() Option { return func(c *config) { c.strategies = true } }

// Nested makes a v3 pattern (LANGUAGE.md §9) instead of a flat SEQ; see
// nested.go. It overrides Long and Strategies (v3 patterns run
// skip-till-any-match only; basic enumerates their occurrences).
func Nested() Option { return func(c *config) { c.nested = true } }

// Generate makes a small stream and a valid query using every feature of
// the language: negation in every position, ANY, closures with
// per-element and whole-list predicates, constant filters on every kind
// of element, one or two equivalence tests (ints and equal floats among
// the values), windows. Without options the choices it draws from r are
// the same as ever, so a seed keeps its case.
func Generate(r Source, opts ...Option) Case {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }

	// Stream: ties are common; some streams have missing cells.
	var csv strings.Builder
	csv.WriteString("type,ts,price,vol,sym,id\n")
	holes := r.IntN(3) == 0
	cell := func(s string) string {
		if holes && r.IntN(8) == 0 {
			return ""
		}
		return s
	}
	events := 15 + r.IntN(25)
	long := cfg.long && !cfg.nested && r.IntN(5) == 0
	if long {
		events = 150 + r.IntN(150)
	}
	ts, jump := int64(1), -1
	ids := []string{"1", "2", "3", "2.0"}
	edgeVols := cfg.overflows && r.IntN(3) > 0
	if cfg.extremes {
		ts, jump = extremeStart(r, events)
		ids = append(ids, "9007199254740993", "9007199254740992.0", "-9223372036854775808", "9.3e18")
	}
	for i := range events {
		if i == jump {
			ts = math.MaxInt64 - int64(2*(events-i))
		}
		ts += int64(r.IntN(3))
		typ := pick(types)
		price := fmt.Sprint(1 + r.IntN(20))
		if cfg.extremes && r.IntN(4) == 0 {
			price += ".5"
		}
		price = cell(price) // drawn first, as ever
		vol := fmt.Sprint(r.IntN(8))
		if edgeVols && r.IntN(3) == 0 {
			vol = pick(edgeInts)
		}
		fmt.Fprintf(&csv, "%s,%d,%s,%s,%s,%s\n", typ, ts,
			price, cell(vol),
			cell(pick([]string{"x", "y", "z"})), cell(pick(ids)))
	}

	if cfg.nested {
		return Case{StreamCSV: csv.String(), Query: nestedQuery(r, cfg)}
	}

	// Pattern: kinds chosen so that closures touch neither closures nor
	// negations, and at least one positive single exists.
	n := 1 + r.IntN(5)
	if long {
		n = 1 + r.IntN(3)
	}
	kinds := make([]byte, n) // 's' single, 'n' negated, 'c' closure
	for i := range kinds {
		switch x := r.IntN(10); {
		case x < 6:
			kinds[i] = 's'
		case x < 8:
			kinds[i] = 'n'
		default:
			kinds[i] = 'c'
		}
	}
	for i := range kinds {
		if kinds[i] == 'c' && ((i > 0 && kinds[i-1] != 's') || (i+1 < n && kinds[i+1] == 'n')) {
			kinds[i] = 's'
		}
	}
	if kinds[0] == 'c' && kinds[n-1] == 'c' {
		kinds[n-1] = 's'
	}
	if !slices.Contains(kinds, 's') {
		kinds[r.IntN(n)] = 's'
	}
	// A closure takes a window: under skip-till-any-match, the default,
	// its matches are every subset of the events it may take, 2^25 and
	// more on a case's 38 events (a run of TestStrategyRandomCases at seed
	// 55,936 took 24 GB, SEQ(D v0, ANY(D, A)+ v1[], C v2, A v3)).
	needWindow := slices.Contains(kinds, 'c')

	var comps, singles, closures, negs []string
	for i, k := range kinds {
		v := fmt.Sprintf("v%d", i)
		typ := pick(types)
		if r.IntN(5) == 0 {
			typ = "ANY(" + pick(types) + ", " + pick(types) + ")"
		}
		switch k {
		case 's':
			comps = append(comps, typ+" "+v)
			singles = append(singles, v)
		case 'n':
			if r.IntN(2) == 0 {
				comps = append(comps, "!("+typ+" "+v+")")
			} else {
				comps = append(comps, "!"+typ+" "+v)
			}
			negs = append(negs, v)
		case 'c':
			comps = append(comps, typ+pick([]string{"+", "^2", "^3", "{2,}", "^1"})+" "+v+"[]")
			closures = append(closures, v)
		}
	}

	conds := conditions(r, cfg, singles, negs, closures)
	if cfg.strategies && r.IntN(3) == 0 {
		conds = append([]string{pick(strategyNames)}, conds...)
	}
	q := "PATTERN SEQ(" + strings.Join(comps, ", ") + ")"
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	if needWindow || long || r.IntN(4) > 0 {
		w := fmt.Sprint(r.IntN(15))
		if cfg.extremes && r.IntN(3) == 0 {
			w = pick(hugeWindows)
		}
		q += " WITHIN " + w
	}
	if cfg.overflows && r.IntN(2) == 0 {
		q += " RETURN " + overflowing(r, singles, closures, true) + " AS r"
	}
	return Case{StreamCSV: csv.String(), Query: q}
}

// conditions draws a WHERE clause's conjuncts: maybe equivalence tests,
// comparisons of the singles, each negation's and closure's own tests,
// and with Overflows maybe one whose arithmetic may overflow.
func conditions(r Source, cfg config, singles, negs, closures []string) []string {
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	var conds []string
	attrs := []string{"price", "vol"}
	if r.IntN(3) == 0 {
		conds = append(conds, pick([]string{"[sym]", "[id]", "[sym, id]", "[sym = 'x']", "[sym] AND [id]", "[id] AND [sym = 'y']", "[vol]"}))
	}
	for i := r.IntN(4); i > 0; i-- {
		a, b := pick(singles), pick(singles)
		switch r.IntN(6) {
		case 0:
			conds = append(conds, fmt.Sprintf("%s.price > %d", a, r.IntN(20)))
		case 1:
			conds = append(conds, fmt.Sprintf("%s.%s < %s.%s + %d", a, pick(attrs), b, pick(attrs), r.IntN(5)))
		case 2:
			conds = append(conds, fmt.Sprintf("(%s.vol > 4 OR %s.sym = 'y')", a, b))
		case 3:
			conds = append(conds, fmt.Sprintf("%s.id != %d", a, 1+r.IntN(3)))
		case 4:
			conds = append(conds, fmt.Sprintf("%s.sym = %s.sym", a, b))
		case 5:
			conds = append(conds, fmt.Sprintf("NOT (%s.price <= %s.price * 1.5)", a, b))
		}
	}
	for _, v := range negs {
		switch r.IntN(4) {
		case 0, 1:
			conds = append(conds, fmt.Sprintf("%s.price > %s.price", v, pick(singles)))
		case 2:
			conds = append(conds, pick([]string{fmt.Sprintf("%s.price > %d", v, r.IntN(15)), v + ".sym = 'y'"}))
		}
		if r.IntN(4) == 0 {
			conds = append(conds, fmt.Sprintf("%s.sym = %s.sym", v, pick(singles)))
		}
	}
	for _, v := range closures {
		switch r.IntN(5) {
		case 0:
			conds = append(conds, fmt.Sprintf("%s[i].price > %s[i-1].price", v, v))
		case 1:
			conds = append(conds, fmt.Sprintf("%s[i].price >= avg(%s[..i-1].price)", v, v))
		case 2:
			conds = append(conds, fmt.Sprintf("%s[i].vol > %s.vol", v, pick(singles)))
		case 3:
			conds = append(conds, fmt.Sprintf("%s[i].price > %d", v, r.IntN(12)))
		}
		switch r.IntN(4) {
		case 0:
			conds = append(conds, fmt.Sprintf("count(%s[]) <= %d", v, 2+r.IntN(3)))
		case 1:
			conds = append(conds, fmt.Sprintf("avg(%s[].price) > %d", v, 5+r.IntN(10)))
		case 2:
			conds = append(conds, fmt.Sprintf("%s[1].price < %s[%s.LEN].price", v, v, v))
		}
	}
	if cfg.overflows && r.IntN(2) == 0 {
		conds = append(conds, overflowing(r, singles, closures, false))
	}
	return conds
}

// edgeInts are the ends of int64 and their neighbours.
var edgeInts = []string{"9223372036854775807", "9223372036854775806", "-9223372036854775808", "-9223372036854775807", "-1", "0"}

// overflowing is a condition whose int arithmetic on vol may pass the
// ends of int64, or that arithmetic alone (value).
func overflowing(r Source, singles, closures []string, value bool) string {
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	a, b := pick(singles), pick(singles)
	k := pick([]string{"1", "5", "-1", "0", "9223372036854775807", "-9223372036854775808"})
	var x, op string
	switch n := r.IntN(9); {
	case n == 8 && len(closures) > 0:
		x = fmt.Sprintf("sum(%s[].vol)", pick(closures))
	case n >= 6: // with a condition, a search's int check with an offset
		x, op = fmt.Sprintf("%s.vol %s %s", a, pick([]string{"+", "-"}), k), pick([]string{"< " + b + ".vol", ">= " + b + ".vol"})
	case n == 5:
		x = fmt.Sprintf("abs(%s.vol)", a)
	case n == 4:
		x = fmt.Sprintf("-%s.vol", a)
	default:
		x = fmt.Sprintf("%s.vol %s %s.vol", a, pick([]string{"+", "-", "*"}), b)
	}
	if value {
		return x
	}
	if op == "" {
		op = "> " + k
	}
	return x + " " + op
}

var strategyNames = []string{"skip-till-any-match", "skip-till-next-match", "partition-contiguity", "strict-contiguity"}

// hugeWindows reach past either end of time from any timestamp; the last
// two do not fit and must fail to compile on every engine.
var hugeWindows = []string{"2.5", "4611686018427387904", "9223372036854775806", "9223372036854775807", "1e30", "9223372036854775807 ms"}

// extremeStart picks where an Extremes stream's timestamps start and the
// event at which they jump to near the maximum (-1: no jump). A stream
// of n events advances at most 2n ticks, so it never passes the maximum.
func extremeStart(r Source, n int) (ts int64, jump int) {
	switch r.IntN(5) {
	case 0:
		return math.MinInt64, -1
	case 1:
		return math.MaxInt64 - int64(2*n), -1
	case 2:
		return math.MinInt64 + int64(r.IntN(3)), 1 + r.IntN(n)
	case 3:
		return -int64(r.IntN(30)), -1
	}
	return 1, -1
}

// Matches compiles and runs the case's query on one engine; see Matches.
func (c Case) Matches(ctx context.Context, engine string) ([]string, error) {
	stream, err := source.LoadCSV(strings.NewReader(c.StreamCSV), c.Name+".csv", source.Options{})
	if err != nil {
		return nil, err
	}
	stream.Name = "s"
	return Matches(ctx, stream, c.Query, engine)
}

// Matches runs a query on a stream and returns its matches, sorted, as
// canonical strings: variables (positive singles and closures, by name)
// to seq numbers. It compares bindings, not RETURN columns: the query is
// compiled as written (its RETURN must compile too), then run without
// RETURN. It stops with ctx's error when ctx is done.
func Matches(ctx context.Context, stream *event.Stream, text, engine string) ([]string, error) {
	return Parse(text).Matches(ctx, stream, engine)
}

// MatchesOf is Matches over events, which may hold ticks (a live
// stream's), typed by stream's schema.
func MatchesOf(ctx context.Context, stream *event.Stream, events iter.Seq[*event.Event], text, engine string) ([]string, error) {
	got, err := Parse(text).Ordered(ctx, stream, events, engine)
	slices.Sort(got)
	return got, err
}

// Ordered is MatchesOf in the order of the run (one worker's): a test
// that also wants the order runs the query once for both.
func Ordered(ctx context.Context, stream *event.Stream, events iter.Seq[*event.Event], text, engine string) ([]string, error) {
	return Parse(text).Ordered(ctx, stream, events, engine)
}

// Parsed is a query's text parsed once for several compiles (engines,
// streams), which may run at once: a compile reads the syntax tree and
// changes nothing in it. Parsing costs more than a small case's compile.
type Parsed struct {
	src *ast.Source
	q   *ast.Query
	err error // the parse's, returned by every compile
}

// Parse parses a query's text.
func Parse(text string) *Parsed {
	src := &ast.Source{Name: "<query>", Text: text}
	q, err := grammar.ParseQuery(src)
	return &Parsed{src: src, q: q, err: err}
}

// Compile compiles the query on stream for an engine, without its RETURN
// unless returns.
func (p *Parsed) Compile(stream *event.Stream, engine string, returns bool) (*sase.Query, error) {
	if p.err != nil {
		return nil, p.err
	}
	e, err := sase.LookupEngine(engine)
	if err != nil {
		return nil, err
	}
	q := p.q
	if !returns {
		bare := *q // the tree is shared: its copy goes without RETURN
		bare.Return = nil
		q = &bare
	}
	return sase.CompileAST(q, p.src, stream, sase.WithEngine(e))
}

// Matches is the package's Matches of the parsed query.
func (p *Parsed) Matches(ctx context.Context, stream *event.Stream, engine string) ([]string, error) {
	got, err := p.Ordered(ctx, stream, stream.All(), engine)
	slices.Sort(got)
	return got, err
}

// Checked compiles the query as written (its RETURN must compile too)
// and returns it compiled without RETURN, as Matches runs it.
func (p *Parsed) Checked(stream *event.Stream, engine string) (*sase.Query, error) {
	if _, err := p.Compile(stream, engine, true); err != nil {
		return nil, err
	}
	return p.Compile(stream, engine, false)
}

// Ordered is the package's Ordered of the parsed query.
func (p *Parsed) Ordered(ctx context.Context, stream *event.Stream, events iter.Seq[*event.Event], engine string) ([]string, error) {
	cq, err := p.Checked(stream, engine)
	if err != nil {
		return nil, err
	}
	return Run(ctx, cq, events)
}

// Run runs a query compiled without RETURN over events and returns its
// matches as Bindings, in the order of the run.
func Run(ctx context.Context, cq *sase.Query, events iter.Seq[*event.Event]) ([]string, error) {
	got := []string{}
	binding := Binder(cq.Columns())
	_, err := cq.Run(ctx, events, func(row []sase.Cell) bool {
		got = append(got, binding(row))
		return true
	})
	return got, err
}

// Binding is a row of a query compiled without RETURN as a canonical
// string: variables to seq numbers. An unbound variable of a v3 pattern
// (a nil event or list) has no key; a bound empty closure is []. It is
// Canonical's JSON of that map, written directly: the differential tests
// make millions, and through a map and reflection they took a fifth of
// exec's test time.
func Binding(cols []sase.Column, row []sase.Cell) string {
	return Binder(cols)(row)
}

// Binder returns Binding of cols for each row: the columns' order and
// keys are worked out once for all the rows of a query.
func Binder(cols []sase.Column) func(row []sase.Cell) string {
	// Sorted by name, as json sorts a map's keys; of a name twice the
	// last bound column stands, as in a map.
	order := make([]int, len(cols))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(cols[a].Name, cols[b].Name) })
	keys := make([][]byte, len(cols))
	for i, col := range cols {
		keys[i] = appendKey(nil, col.Name)
	}
	// sameNext[j]: the column after order[j] has its name.
	sameNext := make([]bool, len(order))
	for j := 1; j < len(order); j++ {
		sameNext[j-1] = cols[order[j]].Name == cols[order[j-1]].Name
	}
	bound := func(row []sase.Cell, i int) bool {
		switch cols[i].Kind {
		case sase.ListColumn:
			return row[i].List != nil
		case sase.EventColumn:
			return row[i].Event != nil
		}
		return true
	}
	return func(row []sase.Cell) string {
		var buf [128]byte
		b := append(buf[:0], '{')
	next:
		for j, i := range order {
			if !bound(row, i) {
				continue
			}
			for k := j; sameNext[k]; k++ {
				if bound(row, order[k+1]) {
					continue next
				}
			}
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = append(b, keys[i]...)
			if cols[i].Kind == sase.ListColumn {
				b = append(b, '[')
				for k, e := range row[i].List {
					if k > 0 {
						b = append(b, ',')
					}
					b = strconv.AppendInt(b, e.Seq, 10)
				}
				b = append(b, ']')
			} else {
				b = strconv.AppendInt(b, row[i].Event.Seq, 10)
			}
		}
		return string(append(b, '}'))
	}
}

// appendKey appends name as json writes a map key, and a colon.
func appendKey(b []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(name) // escapes: json's own
			return append(append(b, q...), ':')
		}
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// Canonical is a match's JSON with its keys sorted.
func Canonical(m map[string]any) string {
	b, err := json.Marshal(m) // map keys are sorted
	if err != nil {
		panic(err)
	}
	return string(b)
}
