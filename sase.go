// Package sase is the one way to compile and run a query: parse, check
// against a stream's schema, plan, optimize for an engine, and run over
// events, handing each match to a sink.
//
//	stream := source.GenerateStocks("stocks", source.DefaultStockConfig())
//	q, err := sase.Compile("PATTERN SEQ(stock1 a, stock2 b) WITHIN 10", stream)
//	if err != nil { ... }
//	stats, err := q.Run(ctx, stream.All(), func(row []sase.Cell) bool { ...; return true })
//
// The REPL, scripts, `sase bench` and the tests all go through this package.
package sase

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/exec"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/optimizer"
	"github.com/sase-cep/sase/planner"
	"github.com/sase-cep/sase/query"
)

// Engine is a plan shape (`SET engine`); Engines lists them.
type Engine = optimizer.Engine

// Cell is one column of a match's row; Stats describes a run.
type (
	Cell  = exec.Cell
	Stats = exec.Stats
)

// Sink receives each match as a row of cells, valid only during the call.
// Returning false stops the run.
type Sink = exec.Emit

// Engines lists every engine, sorted by name; the default is Auto.
var (
	Engines = optimizer.Engines
	Auto    = optimizer.Auto
)

// EngineNames lists the engines' names, sorted.
func EngineNames() []string { return optimizer.EngineNames() }

// LookupEngine finds an engine by name, case-insensitively; "" is Auto.
func LookupEngine(name string) (*Engine, error) { return optimizer.LookupEngine(name) }

// QueryNames are the event types and attributes a query reads.
type QueryNames = planner.QueryNames

// Names lists the types and attributes q reads, before any schema binds
// them: what a live stream must know before the query's first event.
func Names(q *ast.Query) QueryNames { return planner.Names(q) }

// Option configures Compile.
type Option func(*config)

type config struct {
	engine *Engine
	name   string
}

// WithEngine plans the query for e instead of Auto.
func WithEngine(e *Engine) Option { return func(c *config) { c.engine = e } }

// WithSourceName names the query's text in error messages (a script's
// path; "<query>" by default).
func WithSourceName(name string) Option { return func(c *config) { c.name = name } }

// Query is a compiled, optimized query, ready to run any number of times.
type Query struct {
	plan *planner.Plan
}

// Compile parses text, one PATTERN query, and compiles it against stream's
// schema. Errors carry the position, the source line and a caret.
func Compile(text string, stream *event.Stream, opts ...Option) (*Query, error) {
	c := config{engine: optimizer.Auto, name: "<query>"}
	for _, o := range opts {
		o(&c)
	}
	src := &ast.Source{Name: c.name, Text: text}
	q, err := grammar.ParseQuery(src)
	if err != nil {
		return nil, err
	}
	return compile(q, src, stream, c)
}

// CompileAST compiles a query already parsed from src (a statement of a
// script).
func CompileAST(q *ast.Query, src *ast.Source, stream *event.Stream, opts ...Option) (*Query, error) {
	c := config{engine: optimizer.Auto}
	for _, o := range opts {
		o(&c)
	}
	return compile(q, src, stream, c)
}

func compile(q *ast.Query, src *ast.Source, stream *event.Stream, c config) (*Query, error) {
	plan, err := planner.Compile(q, src, stream)
	if err != nil {
		return nil, err
	}
	if plan, err = optimizer.Optimize(plan, c.engine); err != nil {
		return nil, err
	}
	return &Query{plan: plan}, nil
}

// Plan is the optimized plan, for tests and benchmarks that inspect it;
// the layers above the facade use the query's own methods.
func (q *Query) Plan() *planner.Plan { return q.plan }

// ColumnKind is what a column of a query's rows holds: a computed value
// (Cell.Value), a positive variable's event (Cell.Event) or a closure
// variable's events (Cell.List).
type ColumnKind = query.ColumnKind

// The kinds of column.
const (
	ValueColumn = query.ValueColumn
	EventColumn = query.EventColumn
	ListColumn  = query.ListColumn
)

// Column is one column of the rows a query's sink receives (package
// query's, which the layers above the facade see).
type Column = query.Column

// columnKinds are the planner's kinds of column as package query's.
var columnKinds = map[planner.ColumnKind]ColumnKind{planner.ColValue: ValueColumn, planner.ColEvent: EventColumn, planner.ColList: ListColumn}

// Columns describes the rows the query's sink receives.
func (q *Query) Columns() []Column {
	cols := make([]Column, len(q.plan.Columns))
	for i, c := range q.plan.Columns {
		a, isAttr := c.Expr.(*planner.Attr)
		cols[i] = Column{Name: c.Name, Kind: columnKinds[c.Kind], Time: isAttr && a.Builtin == planner.BuiltinTS}
	}
	return cols
}

// Odd is a notice on the events a query's comparisons read an absent
// attribute or a value of another kind on.
type Odd = planner.Odd

// OddValues lists the notices for the events of schema sc, less those of
// base (nil for none: a live stream's schema when the query started),
// counted from the schema, never the events.
func (q *Query) OddValues(sc, base *event.Schema) []Odd { return q.plan.OddValues(sc, base) }

// Window is the query's WITHIN in the stream's ticks; ok is false when it
// has none.
func (q *Query) Window() (w int64, ok bool) { return q.plan.Window, q.plan.HasWindow }

// Bounded reports whether the plan keeps its state bounded by the window,
// which a live stream needs.
func (q *Query) Bounded() bool { return q.plan.Bounded() }

// Late reports whether the query's matches may complete after their
// last event (a derived stream holds its events back until then): a flat
// pattern that ends with a negation or a closure waits until its input
// has passed ts(P1) + W; a v3 pattern (LANGUAGE.md §9) run as a union of
// flat plans does when one of them does, run as the Algebra source's
// products it may (they emit a match once the stream has passed its
// first ts + W), and run as a join it does not (a match comes out at its
// last event).
func (q *Query) Late() bool { return late(q.plan) }

func late(p *planner.Plan) bool {
	switch src := p.Source.(type) {
	case *planner.Algebra:
		return !src.Join
	case *planner.Union:
		return slices.ContainsFunc(src.Branches, func(br *planner.Branch) bool { return late(br.Plan) })
	}
	return p.Components[len(p.Components)-1].Kind != planner.Single
}

// RunOption configures Run.
type RunOption = exec.Option

// WithTiming measures each operator's time, for ExplainAnalyze.
func WithTiming() RunOption { return exec.WithOpTiming() }

// WithWorkers runs a query on n workers, split by partition or, over a
// loaded stream (a run without WithLive), by time; its matches come in the
// order of one worker's run (n <= 1: one run on the caller's goroutine).
// Split says how a run splits.
func WithWorkers(n int) RunOption { return exec.WithWorkers(n) }

// Chunks is a sink whose rows the workers of a split run encode
// themselves (exec.Chunks): the run hands them to its Put in chunks of
// bytes, in the order of one worker's run, and does not call its Sink.
type Chunks = query.Chunks

// Encode appends the encoding of a row to a buffer (Chunks).
type Encode = query.Encode

// WithChunks has a run that splits over workers hand its matches to c
// instead of its Sink, which a run on one worker calls.
func WithChunks(c *Chunks) RunOption { return exec.WithChunks(c) }

// WithAnyOrder lets a split run over a loaded stream emit its matches in
// the order the workers find them (`SET order = 'any'`), not in one
// worker's: the same matches, in an order that may change from run to run.
func WithAnyOrder() RunOption { return exec.WithAnyOrder() }

// Live carries a live stream's pauses to a run (exec.Live): pass its
// Pause to the stream's events and WithLive to Run.
type Live = exec.Live

// NewLive returns the pauses of a live stream for one run; the run calls
// idle, on the goroutine that calls the sink, once the matches of the
// events before a pause are out.
func NewLive(idle func()) *Live { return exec.NewLive(idle) }

// WithLive says the events come from a live stream that pauses through l.
func WithLive(l *Live) RunOption { return exec.WithLive(l) }

// Split is how a run divides its work over workers.
type Split = exec.Split

// Split says how a run on the given number of workers splits the query,
// on a live stream (a run WithLive) or a loaded one.
func (q *Query) Split(workers int, live bool) Split { return exec.SplitOf(q.plan, workers, live) }

// SinkKind is what workers = auto knows of where a run's matches go.
type SinkKind = query.SinkKind

// The sinks AutoWorkers tells apart: each match through the ordered merge
// to a callback (a table, INTO, ...); rows the workers encode (jsonl,
// csv); matches the workers count in bulk.
const (
	SinkRows   = query.SinkRows
	SinkChunks = query.SinkChunks
	SinkCount  = query.SinkCount
)

// sinks are package query's sinks as the planner's.
var sinks = map[SinkKind]planner.Sink{SinkRows: planner.SinkRows, SinkChunks: planner.SinkChunks, SinkCount: planner.SinkCount}

// AutoWorkers is how many workers workers = auto runs the query on, over
// a loaded stream of events events (< 0: a live stream) into sink, and
// why one where it could run more, by the plan's split record
// (planner.Split.Auto).
func (q *Query) AutoWorkers(events int, sink SinkKind) (int, string) {
	return q.plan.Split.Auto(events, sinks[sink])
}

// AutoEvents is the fewest events of a loaded stream that workers = auto
// gives each worker (planner.AutoEvents).
const AutoEvents = planner.AutoEvents

// AutoWorkers is workers = auto for a query without a plan's estimate.
func AutoWorkers(events int, sink SinkKind) (int, string) {
	return (&planner.Split{Kind: planner.SplitKey, MatchesPerEvent: -1}).Auto(events, sinks[sink])
}

// SplitKeys are the attributes of the query's top-level equivalence
// tests: no match spans two of their values.
func (q *Query) SplitKeys() []string { return slices.Clone(q.plan.Split.Keys) }

// Run executes the query over events, calling sink for each match, until
// the events end, sink returns false, or ctx is cancelled (then it returns
// ctx's error, even in the middle of a burst of matches from one event).
func (q *Query) Run(ctx context.Context, events iter.Seq[*event.Event], sink Sink, opts ...RunOption) (*Stats, error) {
	stats, err := exec.Run(ctx, q.plan, events, sink, opts...)
	if err == nil {
		err = ctx.Err()
	}
	return stats, err
}

// Explain prints the plan as EXPLAIN shows it.
func (q *Query) Explain() string { return q.plan.Explain(nil) }

// ExplainAnalyze prints the plan with each operator's counts from a run
// made WithTiming.
func (q *Query) ExplainAnalyze(stats *Stats) string { return stats.Explain(q.plan) }

// ExplainOn prints the plan as EXPLAIN shows it for a run on the given
// number of workers, on a live stream or a loaded one: with more than one
// worker, how the run splits.
func (q *Query) ExplainOn(workers int, live bool) string {
	if workers <= 1 {
		return q.Explain()
	}
	return q.Explain() + q.Split(workers, live).String() + "\n"
}

// ExplainAs prints the plan in format "text" (as ExplainOn), "dot" (a
// Graphviz digraph) or "json"; with each operator's counts when stats is
// not nil, as ExplainAnalyze.
func (q *Query) ExplainAs(format string, workers int, live bool, stats *Stats) (string, error) {
	var annotate func(int) string
	if stats != nil {
		annotate = stats.Annotate
	}
	switch format {
	case "", "text":
		if stats != nil {
			return q.ExplainAnalyze(stats), nil
		}
		return q.ExplainOn(workers, live), nil
	case "dot":
		return q.plan.ExplainDOT(annotate), nil
	case "json":
		var analyzed func(int) planner.Analyzed
		if stats != nil {
			analyzed = func(op int) planner.Analyzed {
				o := stats.Operators[op]
				a := planner.Analyzed{In: o.In, Out: o.Out, Time: o.Time}
				for _, c := range o.Counters {
					if a.Counters == nil {
						a.Counters = map[string]int64{}
					}
					a.Counters[c.Name] = c.N
				}
				return a
			}
		}
		return q.plan.ExplainJSON(analyzed), nil
	}
	return "", fmt.Errorf("unknown EXPLAIN format %q (formats: text, dot, json)", format)
}
