// Package query is what the layers that run queries (output, job,
// session, repl) see of the compiler, in types of its own: a match's row
// (Cell, Column, Chunks), a compiled query (Query: its run, Stats, split
// and EXPLAIN text), a rulebook, a MATCH_RECOGNIZE, a statement's text
// (Syntax) and the Compiler that makes them. So the session and the shell
// import neither the parser, the planner, the optimizer nor an engine:
// they may change behind these interfaces.
//
// Package compiler implements them over the facade (package sase) and the
// packages beside it, and registers itself as its init runs (Register),
// as a database/sql driver does: a program that runs sessions imports it
// for that effect (cmd/sase, serve; the tests of session, repl and
// natsio), and one that does not gets ErrNoCompiler at its first
// statement. A registry rather than a session option: every way a session
// is made (the shell, scripts, sase serve, a hundred tests) then needs no
// argument for the one compiler there is, and the shell, which gets a
// session, finds the same one.
//
// Cell is the engines' own row type (package exec aliases it), so a row
// reaches a sink without a copy; the other types are converted once per
// query or per run. Package derive stays importable by the session: it
// merges the producers' events of a derived stream and knows nothing of
// plans (whether a producer's matches come late is Query.Late).
package query

import (
	"context"
	"iter"
	"time"

	"github.com/sase-cep/sase/event"
)

// Cell is one column of a match's row: a value, an event, or a closure's
// list, as the query's Column says. The engines (package exec) write
// their rows in it, so that a row reaches a sink without a copy.
type Cell struct {
	Value event.Value
	Event *event.Event
	List  []*event.Event
}

// Sink receives each match as a row of cells, valid only during the call.
// Returning false stops the run.
type Sink func(row []Cell) bool

// ColumnKind is what a column of a query's rows holds: a computed value
// (Cell.Value), a positive variable's event (Cell.Event) or a closure
// variable's events (Cell.List).
type ColumnKind int

// The kinds of column.
const (
	ValueColumn ColumnKind = iota
	EventColumn
	ListColumn
)

// Column is one column of the rows a query's sink receives.
type Column struct {
	Name string
	Kind ColumnKind
	// Time marks a Value column that holds timestamps (a.ts), in the
	// stream's ticks.
	Time bool
}

// Encode appends the encoding of a row to b (Chunks).
type Encode func(b []byte, row []Cell) []byte

// Chunks is a sink whose rows the workers of a split run encode
// themselves: the run hands them to Put in chunks of bytes, in the order
// of one worker's run (but for RunOptions.AnyOrder), and does not call
// its Sink.
type Chunks struct {
	// NewEncoder returns an encoder for one worker, with its own state;
	// nil, or returning nil, for a sink that only counts rows.
	NewEncoder func() Encode
	// Put takes the next rows rows, encoded in bufs one after the other;
	// bufs are the workers' and valid only during the call. Returning
	// false stops the run.
	Put func(bufs [][]byte, rows int) bool
	// Limit, if above 0, is the most rows Put takes.
	Limit int64
}

// SinkKind is what workers = auto knows of where a run's matches go.
type SinkKind int

// The sinks AutoWorkers tells apart: each match through the ordered merge
// to a callback (a table, INTO, ...); rows the workers encode (jsonl,
// csv); matches the workers count in bulk.
const (
	SinkRows SinkKind = iota
	SinkChunks
	SinkCount
)

// Stats summarizes a run.
type Stats struct {
	Events    int64 // events read
	Matches   int64 // matches emitted
	Instances int64 // state instances or runs the engine created
	MaxBuffer int64 // the longest element buffer (ReCEP)
	Elapsed   time.Duration
	// Detail is the compiler's own record of the run (its operators'
	// counts, how it split), which its Query's ExplainAs reads; nil for
	// a run that is not a compiled query's.
	Detail any
}

// Query is a compiled query, ready to run any number of times.
type Query interface {
	// Columns describes the rows the query's sink receives.
	Columns() []Column
	// Window is the query's WITHIN in the stream's ticks; ok is false
	// when it has none.
	Window() (w int64, ok bool)
	// Bounded reports whether the plan keeps its state bounded by the
	// window, which a live stream needs.
	Bounded() bool
	// OddValues lists the notices on the events of schema sc, less those
	// of base (nil for none), that the query's comparisons read an
	// absent attribute or a value of another kind on.
	OddValues(sc, base *event.Schema) []Odd
	// Late reports whether the query's matches may complete after their
	// last event (a flat pattern that ends with a negation or a closure,
	// ...): a derived stream holds its events back until the window has
	// passed.
	Late() bool
	// SplitKeys are the attributes of the query's top-level equivalence
	// tests: no match spans two of their values.
	SplitKeys() []string
	// AutoWorkers is how many workers workers = auto runs the query on,
	// over a loaded stream of events events (< 0: a live stream) into
	// sink, and why one where it could run more.
	AutoWorkers(events int, sink SinkKind) (n int, why string)
	// SplitWorkers is how many workers a run asked to use workers runs
	// on, on a live stream or a loaded one: 1 where the query does not
	// split.
	SplitWorkers(workers int, live bool) int
	// ExplainAs prints the plan in format "text", "dot" or "json", for a
	// run on the given number of workers, on a live stream or a loaded
	// one; with each operator's counts when stats (a run's with
	// RunOptions.Timing) is not nil (EXPLAIN ANALYZE).
	ExplainAs(format string, workers int, live bool, stats *Stats) (string, error)
	// Run runs the query over the events open returns, calling sink for
	// each match, until they end, sink returns false, or ctx is done
	// (then it returns ctx's error). On a live run (RunOptions.Live) open
	// gets the pause its events must call whenever none is ready; else
	// nil.
	Run(ctx context.Context, open func(pause func()) iter.Seq[*event.Event], sink Sink, o RunOptions) (*Stats, error)
}

// RunOptions configure a Query's Run.
type RunOptions struct {
	// Workers splits the run, as the query's split record allows
	// (<= 1: one run on the caller's goroutine).
	Workers int
	// Chunks, if not nil, takes the matches of a run that splits over
	// workers instead of its sink, which a run on one worker calls.
	Chunks *Chunks
	// AnyOrder lets a split run over a loaded stream emit its matches in
	// the order the workers find them.
	AnyOrder bool
	// Timing measures each operator's time, for EXPLAIN ANALYZE.
	Timing bool
	// Live says the events come from a live stream, which pauses; the run
	// calls Idle (if not nil), on the goroutine that calls the sink, once
	// the matches of the events before a pause are out.
	Live bool
	Idle func()
}

// Odd is a notice on the events a query's comparisons read an absent
// attribute or a value of another kind on; Key tells two notices apart.
type Odd struct {
	Key, Text string
}

func (o Odd) String() string { return o.Text }
