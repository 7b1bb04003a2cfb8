package compiler

import (
	"context"
	"iter"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/rulebook"
)

func (Compiler) Rulebook(schema *event.Schema, rules []query.Rule) query.Rulebook {
	return book{rulebook.New(schema, rulesOf(rules))}
}

// rulesOf are rules as package rulebook takes them.
func rulesOf(rules []query.Rule) []rulebook.Rule {
	rs := make([]rulebook.Rule, len(rules))
	for i, r := range rules {
		rs[i] = ruleOf(r)
	}
	return rs
}

func ruleOf(r query.Rule) rulebook.Rule { return rulebook.Rule{Name: r.Name, Query: Facade(r.Query)} }

// sinks are query's sinks as the facade's.
func sinks(ss []query.Sink) []sase.Sink {
	out := make([]sase.Sink, len(ss))
	for i, s := range ss {
		out[i] = sase.Sink(s)
	}
	return out
}

func resultOf(r rulebook.Result) query.RuleResult {
	return query.RuleResult{Stats: Stats(r.Stats), Err: r.Err}
}

func resultsOf(rs []rulebook.Result) []query.RuleResult {
	out := make([]query.RuleResult, len(rs))
	for i, r := range rs {
		out[i] = resultOf(r)
	}
	return out
}

// book is query.Rulebook over package rulebook.
type book struct{ b *rulebook.Book }

func (b book) Explain(workers int) string { return b.b.Split(workers).Explain() }

func (b book) Run(ctx context.Context, workers int, events iter.Seq[*event.Event], ss []query.Sink) []query.RuleResult {
	return resultsOf(b.b.Split(workers).Run(ctx, events, sinks(ss)))
}

func (b book) AutoWorkers() int { return b.b.AutoWorkers() }

func (b book) Start(ctx context.Context, ss []query.Sink) query.RulePass {
	return pass{b.b.Start(ctx, sinks(ss))}
}

func (b book) Shares(workers int) []query.RuleShare {
	rules, books := b.b.Split(workers).Passes()
	out := make([]query.RuleShare, len(rules))
	for k := range rules {
		out[k] = query.RuleShare{Rules: rules[k], Book: book{books[k]}}
	}
	return out
}

// pass is query.RulePass over package rulebook's.
type pass struct{ *rulebook.Pass }

func (p pass) Add(schema *event.Schema, r query.Rule, sink query.Sink) int {
	return p.Pass.Add(schema, ruleOf(r), sase.Sink(sink))
}

func (p pass) End(i int) query.RuleResult { return resultOf(p.Pass.End(i)) }

func (p pass) Finish() []query.RuleResult { return resultsOf(p.Pass.Finish()) }
