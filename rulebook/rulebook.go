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

// Pass is one pass of a rulebook over a stream, fed an item at a time.
type Pass struct {
	b      *Book
	ctx    context.Context
	runs   []*sase.Pusher
	timed  []int32 // the rules that follow time, which see every item's
	set    bitset
	lastTS int64
	open   []int64 // by rule: the time of the last start it read (index.gates)
	push   func(int32)
	ev     *event.Event
}

// Start starts a pass of every rule, rule i's matches to sinks[i].
func (b *Book) Start(ctx context.Context, sinks []sase.Sink, opts ...sase.RunOption) *Pass {
	p := &Pass{b: b, ctx: ctx, runs: make([]*sase.Pusher, len(b.Rules)), set: newBitset(len(b.Rules)), lastTS: math.MinInt64}
	for i, r := range b.Rules {
		p.runs[i] = r.Query.Start(ctx, sinks[i], opts...)
		if p.runs[i].Timed() {
			p.timed = append(p.timed, int32(i))
		}
	}
	p.open = make([]int64, len(b.Rules))
	for i := range p.open {
		p.open[i] = math.MinInt64
	}
	p.push = func(i int32) {
		if g := &b.ix.gates[i]; g.on && slices.Contains(g.first, p.ev.Type) {
			p.open[i] = p.ev.TS
		}
		p.runs[i].Push(p.ev)
	}
	return p
}

// Push hands one item (an event or a tick) to the rules it reaches, and
// its time to the rules that follow time.
func (p *Pass) Push(ev *event.Event) {
	if !ev.IsTick() {
		p.b.ix.rules(ev, p.set, p.open)
		p.ev = ev
		p.set.drain(p.push)
		p.ev = nil
	}
	if ev.TS > p.lastTS {
		p.lastTS = ev.TS
		for _, i := range p.timed {
			p.runs[i].Advance(ev.TS) // a rule that read ev is there already
		}
	}
}

// Finish ends the pass: the matches that wait on the end of the stream
// go out. It returns each rule's result, in rule order.
func (p *Pass) Finish() []Result {
	res := make([]Result, len(p.runs))
	for i, run := range p.runs {
		stats, err := run.Finish()
		if err == nil {
			err = p.ctx.Err()
		}
		res[i] = Result{Stats: stats, Err: err}
	}
	return res
}
