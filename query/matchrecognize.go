package query

import (
	"context"

	"github.com/sase-cep/sase/event"
)

// MatchRecognize is a compiled MATCH_RECOGNIZE.
type MatchRecognize interface {
	// Columns are its output rows' columns' names.
	Columns() []string
	// Window is its WITHIN in the stream's ticks; ok is false when it
	// has none.
	Window() (w int64, ok bool)
	// LiveError says why it cannot run on a live stream; nil when it can.
	LiveError() error
	// Run matches it over events (a loaded stream's), partitioned and
	// sorted, on workers at once, and emits the output rows in partition
	// order.
	Run(ctx context.Context, events []*event.Event, workers int, emit MREmit) (MRStats, error)
	// RunProfiled is Run on one worker, counting its work per
	// instruction, for Plan.
	RunProfiled(ctx context.Context, events []*event.Event, emit MREmit) (MRStats, MRProfile, error)
	// Live starts a live run.
	Live(emit MREmit) MRLive
	// Plan describes it; a run's stats and profile (nil for EXPLAIN) add
	// the run's counts.
	Plan(st *MRStats, p MRProfile) MRPlan
}

// MREmit receives an output row: its values and the input row it is at.
// Returning false stops the run.
type MREmit func(row []event.Value, at *event.Event) bool

// MRStats counts a run's work.
type MRStats struct {
	Rows       int64 // input rows
	Partitions int64
	Matches    int64 // including empty matches
	Output     int64 // rows emitted
}

// MRProfile is what a profiled run counted, which Plan reads.
type MRProfile any

// MRLive is a live run: Push adds an event (or a tick) and writes the
// matches it decides, End the ones the stream's end decides.
type MRLive interface {
	Push(e *event.Event) error
	End() error
	Stopped() bool // emit asked the run to stop
	Stats() MRStats
}

// MRPlan is a MATCH_RECOGNIZE's plan in EXPLAIN's formats.
type MRPlan interface {
	Text() string
	JSON() string
	Dot() string
}
