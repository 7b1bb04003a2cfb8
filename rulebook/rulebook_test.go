package rulebook_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/rulebook"
	"github.com/sase-cep/sase/source"
)

// row formats a match's cells, values and events alike, so that two runs'
// outputs compare byte for byte.
func row(cells []sase.Cell) string {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteByte('|')
		}
		switch {
		case c.Event != nil:
			fmt.Fprintf(&b, "#%d", c.Event.Seq)
		case c.List != nil:
			b.WriteByte('[')
			for _, e := range c.List {
				fmt.Fprintf(&b, "%d ", e.Seq)
			}
			b.WriteByte(']')
		default:
			b.WriteString(c.Value.String())
		}
	}
	return b.String()
}

// collect is a sink per rule that keeps its rows.
func collect(n int) ([][]string, []sase.Sink) {
	out := make([][]string, n)
	sinks := make([]sase.Sink, n)
	for i := range sinks {
		sinks[i] = func(cells []sase.Cell) bool {
			out[i] = append(out[i], row(cells))
			return true
		}
	}
	return out, sinks
}

// filterQuery is a rule the filter index files: its first component
// compares an attribute with a constant, in every form the index reads.
func filterQuery(r *rand.Rand) string {
	types := []string{"A", "B", "C", "D"}
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	var conj []string
	for range 1 + r.IntN(2) {
		op := pick([]string{"=", "<", "<=", ">", ">="})
		switch r.IntN(4) {
		case 0:
			conj = append(conj, fmt.Sprintf("a.price %s %d", op, r.IntN(22)))
		case 1:
			conj = append(conj, fmt.Sprintf("%d.5 %s a.price", r.IntN(22), op))
		case 2:
			conj = append(conj, fmt.Sprintf("a.sym %s '%s'", op, pick([]string{"x", "y", "z", "w"})))
		default:
			// Huge ids too: a float orders them only roughly.
			conj = append(conj, fmt.Sprintf("a.id %s %s", op, pick([]string{"2", "2.0", "3", "9007199254740993", "9007199254740992.0", "-9223372036854775808"})))
		}
	}
	conj = append(conj, laterBound(r))
	if r.IntN(4) == 0 {
		conj = append(conj, pick([]string{"skip-till-next-match", "skip-till-any-match", "strict-contiguity", "partition-contiguity"}))
	}
	pattern := fmt.Sprintf("SEQ(%s a, %s b)", pick(types), pick(types))
	switch r.IntN(4) {
	case 0:
		pattern = fmt.Sprintf("SEQ(%s a, !(%s n), %s b)", pick(types), pick(types), pick(types))
	case 1: // gated on two types
		pattern = fmt.Sprintf("SEQ(%s a, %s c, %s b)", pick(types), pick(types), pick(types))
	}
	return fmt.Sprintf("PATTERN %s WHERE %s WITHIN %d", pattern, strings.Join(conj, " AND "), 1+r.IntN(10))
}

// laterBound is a conjunct between a start a and a later b in the forms
// the index bounds (b.x op a.x ± k, either way round), on attributes of
// every kind: small numbers, huge ids, strings, absent cells, ts.
func laterBound(r *rand.Rand) string {
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	attr := pick([]string{"price", "price", "id", "sym", "ts"})
	op := pick([]string{"<", "<=", ">", ">="})
	k := fmt.Sprint(r.IntN(5))
	if r.IntN(4) == 0 {
		k += ".5"
	}
	start := pick([]string{"a." + attr, "a." + attr + " + " + k, "a." + attr + " - " + k, k + " + a." + attr})
	if r.IntN(2) == 0 {
		return fmt.Sprintf("b.%s %s %s", attr, op, start)
	}
	return fmt.Sprintf("%s %s b.%s", start, op, attr)
}

// TestDifferential runs random rulebooks, each rule on a random engine:
// every rule's matches through the rulebook are those it finds alone,
// in the same order.
func TestDifferential(t *testing.T) {
	ctx := context.Background()
	engines := sase.Engines
	trials := 30
	if testing.Short() {
		trials = 10
	}
	for trial := range trials {
		r := rand.New(rand.NewPCG(uint64(trial), 31))
		stream, csv := randomStream(t, r)
		n := 1 + r.IntN(200)
		switch trial % 10 {
		case 0, 4, 8:
			n = 1 + r.IntN(10)
		case 1: // the rules of a pass span several of its blocks (256)
			n = 257 + r.IntN(400)
		}
		var rules []rulebook.Rule
		for len(rules) < n {
			text := randquery.Generate(r, randquery.Strategies()).Query
			if r.IntN(2) == 0 {
				text = filterQuery(r)
			}
			q, err := sase.Compile(text, stream, sase.WithEngine(engines[r.IntN(len(engines))]))
			if err != nil {
				continue // a generated query may not compile on this stream
			}
			rules = append(rules, rulebook.Rule{Name: fmt.Sprint("r", len(rules)), Query: q})
		}
		book := rulebook.New(stream.Schema, rules)
		// Small batches, so that the rules read theirs mid-stream too.
		defer rulebook.SetBatch(1 + r.IntN(8))()
		defer rulebook.SetChunk(1 + r.IntN(8))()
		for _, live := range []bool{false, true} {
			events := stream.All()
			if live {
				events = withTicks(stream, r)
			}
			alone := make([][]string, len(rules))
			errs := make([]error, len(rules))
			for i, rule := range rules {
				_, errs[i] = rule.Query.Run(ctx, events, func(cells []sase.Cell) bool {
					alone[i] = append(alone[i], row(cells))
					return true
				})
			}
			// On 2 workers the rules share 2 passes, run in parallel.
			for _, workers := range []int{1, 2} {
				got, sinks := collect(len(rules))
				res := book.Split(workers).Run(ctx, events, sinks)
				for i, rule := range rules {
					if fmt.Sprint(errs[i]) != fmt.Sprint(res[i].Err) {
						t.Fatalf("trial %d live=%v workers=%d rule %d %q on %s: error %v, alone %v", trial, live, workers, i, rule.Query.Plan().Query, rule.Query.Plan().Engine, res[i].Err, errs[i])
					}
					if !slices.Equal(got[i], alone[i]) {
						t.Fatalf("trial %d live=%v workers=%d rule %d (%s) on %s:\n%s\nrulebook: %v\nalone:    %v\nindex:\n%s", trial, live, workers, i, rule.Query.Plan().Engine, rule.Query.Plan().Query, csv, got[i], alone[i], book.Explain())
					}
				}
			}
		}
	}
}

// randomStream is a random case's stream, and its CSV (for a failure's
// message).
func randomStream(t *testing.T, r *rand.Rand) (*event.Stream, string) {
	t.Helper()
	csv := randquery.Generate(r, randquery.Strategies()).StreamCSV
	stream, err := source.LoadCSV(strings.NewReader(csv), "s.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stream.Name = "s"
	return stream, csv
}

// withTicks is the stream's events with ticks among them, as a live
// stream's idle time makes them.
func withTicks(stream *event.Stream, r *rand.Rand) func(func(*event.Event) bool) {
	var items []*event.Event
	prev := int64(math.MinInt64)
	for e := range stream.All() {
		if r.IntN(4) == 0 && prev != math.MinInt64 {
			items = append(items, event.Tick(prev+r.Int64N(e.TS-prev+1)))
		}
		items, prev = append(items, e), e.TS
	}
	return func(yield func(*event.Event) bool) {
		for _, e := range items {
			if !yield(e) {
				return
			}
		}
	}
}

// TestCancelled: a cancelled pass ends every rule with the context's
// error, and releases nothing that waits on the end of the stream.
func TestCancelled(t *testing.T) {
	cfg := source.DefaultStockConfig()
	cfg.Events = 3000
	stream := source.GenerateStocks("stocks", cfg)
	var rules []rulebook.Rule
	for _, text := range []string{
		"PATTERN SEQ(stock1 a, stock2 b) WHERE a.price > 50 WITHIN 20",
		"PATTERN SEQ(stock1 a, stock2 b, !(stock3 n)) WITHIN 20", // waits on its window
	} {
		q, err := sase.Compile(text, stream)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, rulebook.Rule{Query: q})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, workers := range []int{1, 2} {
		got, sinks := collect(len(rules))
		for i, res := range rulebook.New(stream.Schema, rules).Split(workers).Run(ctx, stream.All(), sinks) {
			if !errors.Is(res.Err, context.Canceled) || len(got[i]) > 0 {
				t.Errorf("workers=%d rule %d: %d matches, error %v; want none and %v", workers, i, len(got[i]), res.Err, context.Canceled)
			}
		}
	}
}

// TestAddAndEnd: a rule added to a running pass finds what it finds
// alone on the items from there on, a rule ended mid-pass what it finds
// alone on the items until then, and the other rules what they find
// alone on all.
func TestAddAndEnd(t *testing.T) {
	ctx := context.Background()
	for trial := range 60 {
		r := rand.New(rand.NewPCG(uint64(trial), 37))
		stream, _ := randomStream(t, r)
		var rules []rulebook.Rule
		for len(rules) < 12 {
			text := randquery.Generate(r, randquery.Strategies()).Query
			if r.IntN(2) == 0 {
				text = filterQuery(r)
			}
			if q, err := sase.Compile(text, stream); err == nil {
				rules = append(rules, rulebook.Rule{Name: fmt.Sprint("r", len(rules)), Query: q})
			}
		}
		items := slices.Collect(withTicks(stream, r))
		first := 6
		if trial%2 == 0 {
			first = 1 // a pass of one rule grows
		}
		ended := r.IntN(first)
		addAt, endAt := r.IntN(len(items)+1), r.IntN(len(items)+1)
		got, sinks := collect(len(rules))
		p := rulebook.New(stream.Schema, rules[:first]).Start(ctx, sinks[:first])
		for at := 0; at <= len(items); at++ {
			if at == addAt {
				for i := first; i < len(rules); i++ {
					if n := p.Add(stream.Schema, rules[i], sinks[i]); n != i {
						t.Fatalf("Add gave rule %d number %d", i, n)
					}
				}
			}
			if at == endAt {
				p.End(ended)
			}
			if at < len(items) {
				p.Push(items[at])
			}
		}
		p.Finish()
		for i, rule := range rules {
			from, to := 0, len(items)
			switch {
			case i >= first:
				from = addAt
			case i == ended:
				to = endAt
			}
			var alone []string
			rule.Query.Run(ctx, slices.Values(items[from:to]), func(cells []sase.Cell) bool {
				alone = append(alone, row(cells))
				return true
			})
			if !slices.Equal(got[i], alone) {
				t.Fatalf("trial %d rule %d %q (items %d to %d of %d):\nin the pass: %v\nalone:       %v", trial, i, rule.Query.Plan().Query, from, to, len(items), got[i], alone)
			}
		}
	}
}

// TestEndsAlone: a rule that fails mid-batch, or whose sink wants no more
// matches, ends with the error and the matches it has alone, on every
// engine, and the rule after it reads on.
func TestEndsAlone(t *testing.T) {
	const csv = "type,ts,x\nA,1,1\nB,2,5\nA,3,0\nB,4,6\nA,5,2\nB,6,7\nB,7,8\n"
	stream, err := source.LoadCSV(strings.NewReader(csv), "s.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	texts := []string{
		"PATTERN SEQ(A a, B b) WHERE b.x / a.x > 1",             // fails at the B after A x=0
		"PATTERN SEQ(A a, B b) WHERE b.x > a.x",                 // its sink stops at the third match
		"PATTERN SEQ(A a, B b) WHERE b.x > a.x RETURN a.x, b.x", // reads every item
	}
	stopAt := []int{-1, 3, -1}
	for _, engine := range sase.Engines {
		var rules []rulebook.Rule
		for _, text := range texts {
			q, err := sase.Compile(text, stream, sase.WithEngine(engine))
			if err != nil {
				t.Fatal(err)
			}
			rules = append(rules, rulebook.Rule{Query: q})
		}
		sinkOf := func(out *[]string, stop int) sase.Sink {
			return func(cells []sase.Cell) bool {
				*out = append(*out, row(cells))
				return len(*out) != stop
			}
		}
		for _, workers := range []int{1, 2} {
			got := make([][]string, len(rules))
			sinks := make([]sase.Sink, len(rules))
			for i := range sinks {
				sinks[i] = sinkOf(&got[i], stopAt[i])
			}
			res := rulebook.New(stream.Schema, rules).Split(workers).Run(ctx, stream.All(), sinks)
			for i, rule := range rules {
				var alone []string
				_, err := rule.Query.Run(ctx, stream.All(), sinkOf(&alone, stopAt[i]))
				if fmt.Sprint(err) != fmt.Sprint(res[i].Err) || !slices.Equal(got[i], alone) {
					t.Errorf("%s workers=%d rule %d: %v, error %v; alone %v, error %v", engine.Name, workers, i, got[i], res[i].Err, alone, err)
				}
			}
			if res[0].Err == nil || len(got[1]) != 3 {
				t.Errorf("%s workers=%d: rule 0's error %v, rule 1's matches %d; want division by zero and 3", engine.Name, workers, res[0].Err, len(got[1]))
			}
		}
	}
}

// TestFlushInRuleOrder: a flush hands the rules their events in rule
// order, whatever order the events reached them in (a live stream's
// rules write each item's rows in that order), in one block of rules
// and across several. The last rule's start comes first, so the live
// list on B has it before rule 2.
func TestFlushInRuleOrder(t *testing.T) {
	ctx := context.Background()
	stream, err := source.LoadCSV(strings.NewReader("type,ts,x\nA,1,1\nA,2,10\nB,3,0\n"), "s.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Rules 2, 300 and n-1 have events: in one block of 256 rules, and in
	// three.
	for _, n := range []int{40, 600} {
		rules := make([]rulebook.Rule, n)
		for i := range rules {
			text := "PATTERN SEQ(C a, C b) WITHIN 10"
			switch {
			case i == 2:
				text = "PATTERN SEQ(A a, B b) WHERE a.x > 5 WITHIN 10"
			case i == n-1, i == 300:
				text = "PATTERN SEQ(A a, B b) WHERE a.x > 0 WITHIN 10"
			}
			q, err := sase.Compile(text, stream)
			if err != nil {
				t.Fatal(err)
			}
			rules[i] = rulebook.Rule{Query: q}
		}
		var order []int
		sinks := make([]sase.Sink, n)
		for i := range sinks {
			sinks[i] = func([]sase.Cell) bool { order = append(order, i); return true }
		}
		p := rulebook.New(stream.Schema, rules).Start(ctx, sinks)
		for _, ev := range stream.Events {
			p.Push(ev)
			p.Flush()
		}
		p.Finish()
		want := []int{2, n - 1, n - 1}
		if n > 300 {
			want = []int{2, 300, 300, n - 1, n - 1}
		}
		if !slices.Equal(order, want) {
			t.Errorf("%d rules: matches of rules %v, want %v", n, order, want)
		}
	}
}
