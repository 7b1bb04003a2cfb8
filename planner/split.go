package planner

import (
	"fmt"
	"runtime"
)

// SplitKind is how a run of a plan may divide its work over workers.
type SplitKind int

const (
	// SplitNone: one worker, for the reason Split.Why gives.
	SplitNone SplitKind = iota
	// SplitKey: each worker runs the partitions of some values of By.
	SplitKey
	// SplitSegments: each worker runs time segments of a loaded stream
	// (a live one runs on one worker), reading Overlap ticks back.
	SplitSegments
)

// Split is how a query may split over workers: the optimizer decides it
// once (optimizer/split.go), and the run (exec), EXPLAIN, workers = auto
// and a NATS group read it, nothing else.
type Split struct {
	Kind SplitKind
	// By is the partition attribute of SplitKey; on any kind, the order
	// of the matches that one item completes or releases (nil: the
	// engine's).
	By *Equiv
	// Overlap is how far a time segment's worker reads back (SplitSegments).
	Overlap int64
	// Why says why the query does not split by key ("" when it does);
	// LiveWhy why it runs on one worker on a live stream, where that is
	// another reason (no time segments).
	Why, LiveWhy string
	// ByKeyWhy is why the flat rules alone (strategy, no equivalence test,
	// ReCEP's buffers) keep it from splitting by key, "" if they do not:
	// a match whose positive events lack the attribute then takes its
	// closure's key, as a split run's would (exec's itemOrder).
	ByKeyWhy string
	// Keys are the attributes of the top-level equivalence tests: no
	// match spans two of their values, so a group whose stream is keyed
	// by one runs each key's partition on its own (natsio).
	Keys []string
	// The estimate workers = auto weighs (Auto): the matches per event,
	// from the stream's statistics (< 0: unknown, a live stream), and
	// whether a match's row holds only its events (no RETURN of values),
	// which a worker tells the partition of at emit without leaving the
	// engine's direct path to the output.
	MatchesPerEvent float64
	RowsOfEvents    bool
}

// A Sink is what workers = auto knows of where a run's matches go.
type Sink int

const (
	// SinkRows: each match goes through the ordered merge to a callback,
	// a table, INTO, EXPLAIN ANALYZE, a count with a limit.
	SinkRows Sink = iota
	// SinkChunks: the workers encode the rows (jsonl, csv).
	SinkChunks
	// SinkCount: the workers count the matches in bulk (count, no limit).
	SinkCount
)

// AutoEvents is the fewest events of a loaded stream that workers = auto
// gives each worker: eight of the batches a split run hands its workers.
// Below that, starting the workers and the hand-offs of a few batches,
// which the workers wait on, cost more than the split saves: Fig. 8's 30K
// events took 7 ms on 2 workers, 3 ms on 1 (docs/LANGUAGE.md, workers).
const AutoEvents = 1 << 16

// autoMatchesPerEvent is the most matches per event, estimated, at which
// workers = auto splits a query whose rows the workers encode: above it
// the output's bytes, which the merge copies and the one writer writes,
// cost more than the engines' work that the split divides
// (docs/LANGUAGE.md, Why the default).
const autoMatchesPerEvent = 4

// Auto is how many workers workers = auto runs the query on, over a loaded
// stream of events events (< 0: a live stream) into sink, and why one
// when the query could split but auto does not ("" when it splits or
// cannot split anyway, which EXPLAIN says on its own).
func (s *Split) Auto(events int, sink Sink) (n int, why string) {
	cpus := runtime.NumCPU()
	switch {
	case events < 0 || sink == SinkRows || cpus == 1 || s.Kind == SplitNone:
		return 1, ""
	case events/AutoEvents < 2:
		return 1, fmt.Sprintf("workers = auto and %d %s: a split needs %d a worker", events, plural(events, "event", "events"), AutoEvents)
	case sink == SinkChunks && s.MatchesPerEvent > autoMatchesPerEvent:
		return 1, fmt.Sprintf("workers = auto and an estimated %.3g matches an event: the output, which one writer writes, costs more than the split saves (a split needs at most %d)", s.MatchesPerEvent, autoMatchesPerEvent)
	case sink == SinkChunks && !s.RowsOfEvents && s.Kind == SplitKey:
		return 1, "workers = auto and RETURN of values: a worker would decide each match's partition off the engine's direct path to the output"
	}
	return min(cpus, events/AutoEvents), ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// String says how the query may split, for EXPLAIN.
func (s *Split) String() string {
	switch s.Kind {
	case SplitKey:
		return "by partition " + s.By.Text
	case SplitSegments:
		return fmt.Sprintf("by time segments of a loaded stream overlapping by %d (%s)", s.Overlap, s.Why)
	}
	return "none (" + s.Why + ")"
}
