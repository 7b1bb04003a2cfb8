package query

import (
	"context"
	"iter"

	"github.com/sase-cep/sase/event"
)

// Rule is one query of a rulebook, with its name (may be empty).
type Rule struct {
	Name  string
	Query Query
}

// RuleResult is how one rule's run ended: its stats, and the error that
// ended it early (a run-time error, or the context's).
type RuleResult struct {
	Stats *Stats
	Err   error
}

// Rulebook is a set of rules compiled on one stream, indexed so that one
// pass over the stream feeds each event to the rules it may reach.
type Rulebook interface {
	// Explain shows the index, and how the rules are shared among
	// workers passes.
	Explain(workers int) string
	// Run runs every rule over events, rule i's matches to sinks[i],
	// until the events end or ctx is done; a rule whose sink returns
	// false, or which fails, ends alone. With workers > 1 the rules are
	// shared among passes run in parallel (a rule's sink is called on its
	// pass's goroutine).
	Run(ctx context.Context, workers int, events iter.Seq[*event.Event], sinks []Sink) []RuleResult
	// AutoWorkers is workers = auto for the rulebook.
	AutoWorkers() int
	// Start starts a pass of the rules whose items the caller pushes.
	Start(ctx context.Context, sinks []Sink) RulePass
	// Shares shares the rules among up to workers passes as Run does.
	Shares(workers int) []RuleShare
}

// RuleShare is one pass's share of a rulebook's rules: their numbers in
// the book, ascending, and the rulebook of them.
type RuleShare struct {
	Rules []int
	Book  Rulebook
}

// RulePass is a rulebook's run whose items are pushed to it.
type RulePass interface {
	// Add adds rule r, compiled on a stream of schema, to the running
	// pass, its matches to sink, from the next item on; it returns the
	// rule's number.
	Add(schema *event.Schema, r Rule, sink Sink) int
	// Push hands one item (an event or a tick) to the rules it reaches,
	// in time order; Flush has every rule read the items queued for it.
	Push(ev *event.Event)
	Flush()
	// Item is the number (from 0, in push order, ticks counted) of the
	// item that released the match a sink is called with: in Flush, the
	// item its rule reads; otherwise the item pushed last.
	Item() int64
	// Events is how many items rule i has read so far.
	Events(i int) int64
	// Failed is the first rule whose run failed at run time (it ended
	// alone) and was not ended by End, with its error; -1 and nil when
	// none has.
	Failed() (rule int, err error)
	// End ends rule i alone and returns its result; Finish ends the pass
	// and returns each rule's result, in rule order.
	End(i int) RuleResult
	Finish() []RuleResult
}
