// Package query is what the layers that run queries (output, job,
// session, repl) see of the compiler: a compiled query's rows (Cell,
// Column), its run (Run, Stats) and its plan's text (ExplainAs), in types
// of its own, so that they import neither the parser nor the planner.
// Package compiler implements it over the facade (package sase) and
// registers itself (Register), as a database/sql driver does; a program
// that runs queries imports it for that effect.
package query

import (
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
