// Package rulebook runs many compiled queries, its rules, over one pass
// of a stream: an index says which rules each event reaches (the rules
// whose patterns name its type, less those whose first component's
// constant filter it fails, as Esper's filter index), and only those
// read it. Each rule's matches are exactly those it finds run alone, in
// the same order.
//
//	b := rulebook.New(stream.Schema, rules)
//	results := b.Run(ctx, stream.All(), sinks)
package rulebook

import (
	"context"
	"iter"
	"math"
	"slices"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
)

// Rule is one query of a rulebook, with its name (may be empty).
type Rule struct {
	Name  string
	Query *sase.Query
}

// Book is a set of rules compiled on one stream, indexed.
type Book struct {
	Rules []Rule
	ix    *index
}

// New indexes rules, compiled on a stream with schema.
func New(schema *event.Schema, rules []Rule) *Book {
	qs := make([]*sase.Query, len(rules))
	for i, r := range rules {
		qs[i] = r.Query
	}
	return &Book{Rules: rules, ix: newIndex(qs, schema)}
}

// Explain shows the index: per type how many rules read it, per indexed
// attribute the bounds.
func (b *Book) Explain() string { return b.ix.explain() }

// Result is how one rule's run ended: its stats, and the error that
// ended it early (a run-time error, or the context's).
type Result struct {
	Stats *sase.Stats
	Err   error
}

// Run runs every rule over events, rule i's matches to sinks[i], until
// the events end or ctx is done. A rule whose sink returns false, or
// which fails, ends alone; the others go on.
func (b *Book) Run(ctx context.Context, events iter.Seq[*event.Event], sinks []sase.Sink, opts ...sase.RunOption) []Result {
	r := b.Start(ctx, sinks, opts...)
	var n int
	for ev := range events {
		if n++; n&1023 == 0 && ctx.Err() != nil {
			break
		}
		r.Push(ev)
	}
	return r.Finish()
}

// batch is how many items a pass reads before the rules that follow no
// time read theirs: each rule then reads its share of a batch in one go,
// its state hot in the cache, where reading one rule after another for
// each event missed the cache at every rule (a push cost 5 to 10 times an
// event of the rule run alone, at 1,000 rules).
var batch = 256

// Pass is one pass of a rulebook over a stream, fed an item at a time.
// A rule reads its events in stream order; the rules that follow time
// read each item as it comes, the others a batch at a time, so the
// matches of different rules interleave by batch.
type Pass struct {
	b      *Book
	ctx    context.Context
	runs   []*sase.Pusher
	timed  []int32 // the rules that follow time, which see every item's
	isTime []bool  // by rule
	set    bitset
	lastTS int64
	open   []int64 // by rule: the time of the last start it read (index.gates)
	queued [][]*event.Event
	held   bitset // the rules with queued events
	n      int    // items since the last flush
	mark   func(int32)
	ev     *event.Event
	ended  []*Result // by rule: its result once End ended it alone
}

// Start starts a pass of every rule, rule i's matches to sinks[i].
func (b *Book) Start(ctx context.Context, sinks []sase.Sink, opts ...sase.RunOption) *Pass {
	n := len(b.Rules)
	p := &Pass{b: b, ctx: ctx, runs: make([]*sase.Pusher, n), isTime: make([]bool, n), set: newBitset(n), held: newBitset(n),
		lastTS: math.MinInt64, open: make([]int64, n), queued: make([][]*event.Event, n), ended: make([]*Result, n)}
	for i, r := range b.Rules {
		p.start(i, r, sinks[i], opts)
	}
	p.mark = func(i int32) {
		if g := &p.b.ix.gates[i]; g.on && slices.Contains(g.first, p.ev.Type) {
			p.open[i] = p.ev.TS
		}
		if p.isTime[i] {
			p.runs[i].Push(p.ev)
			return
		}
		p.queued[i] = append(p.queued[i], p.ev)
		p.held.set(i)
	}
	return p
}

// start starts rule i's run.
func (p *Pass) start(i int, r Rule, sink sase.Sink, opts []sase.RunOption) {
	p.runs[i] = r.Query.Start(p.ctx, sink, opts...)
	if p.isTime[i] = p.runs[i].Timed(); p.isTime[i] {
		p.timed = append(p.timed, int32(i))
	}
	p.open[i] = math.MinInt64
}

// Add adds rule r, compiled on a stream of schema, to the running pass,
// its matches to sink: it reads from the next item on (a rule added to a
// running live stream). It returns the rule's number; the index is built
// anew, as a rule is added once and read at every event.
func (p *Pass) Add(schema *event.Schema, r Rule, sink sase.Sink, opts ...sase.RunOption) int {
	p.Flush()
	i := len(p.runs)
	p.b = New(schema, append(slices.Clip(p.b.Rules), r))
	p.runs, p.isTime, p.open = append(p.runs, nil), append(p.isTime, false), append(p.open, 0)
	p.queued, p.ended = append(p.queued, nil), append(p.ended, nil)
	p.set, p.held = newBitset(i+1), newBitset(i+1) // both empty after a push and a flush
	p.start(i, r, sink, opts)
	return i
}

// End ends rule i alone (STOP QUERY on one rule, or its limit): what
// waits on the end of the stream goes out to its sink, and the others go
// on. It returns the rule's result; Finish returns it again.
func (p *Pass) End(i int) Result {
	if p.ended[i] == nil {
		p.Flush()
		stats, err := p.runs[i].Finish()
		p.ended[i] = &Result{Stats: stats, Err: err}
	}
	return *p.ended[i]
}

// Events is how many items rule i has read so far.
func (p *Pass) Events(i int) int64 { return p.runs[i].Events() }

// Push hands one item (an event or a tick) to the rules it reaches, and
// its time to the rules that follow time.
func (p *Pass) Push(ev *event.Event) {
	if !ev.IsTick() {
		p.b.ix.rules(ev, p.set, p.open)
		p.ev = ev
		p.set.drain(p.mark)
		p.ev = nil
	}
	if ev.TS > p.lastTS {
		p.lastTS = ev.TS
		for _, i := range p.timed {
			p.runs[i].Advance(ev.TS) // a rule that read ev is there already
		}
	}
	if p.n++; p.n == batch {
		p.Flush()
	}
}

// Flush has every rule read the events queued for it: at the end of a
// batch, and when a live stream pauses, before its sinks sync.
func (p *Pass) Flush() {
	p.n = 0
	p.held.drain(func(i int32) {
		run := p.runs[i]
		for _, ev := range p.queued[i] {
			if !run.Push(ev) {
				break
			}
		}
		clear(p.queued[i])
		p.queued[i] = p.queued[i][:0]
	})
}

// Finish ends the pass: the matches that wait on the end of the stream
// go out. It returns each rule's result, in rule order.
func (p *Pass) Finish() []Result {
	p.Flush()
	res := make([]Result, len(p.runs))
	for i, run := range p.runs {
		if p.ended[i] != nil {
			res[i] = *p.ended[i]
			continue
		}
		stats, err := run.Finish()
		if err == nil {
			err = p.ctx.Err()
		}
		res[i] = Result{Stats: stats, Err: err}
	}
	return res
}
