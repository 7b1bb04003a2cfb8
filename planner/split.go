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
	// EventsPerKey is the loaded stream's events per value of By, from a
	// sample (< 0: unknown): how finely a split by key can balance.
	EventsPerKey float64
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
// may cost more than the engines' work that the split divides. Since the
// workers encode their rows in chunks, the splits measured up to 36
// matches an event (estimated 7.1) gained 1.3-2.3× into jsonl and csv
// in most runs (docs/LANGUAGE.md, Why the default); above 10, not
// measured, auto keeps one worker.
const autoMatchesPerEvent = 10.0

// Auto is how many workers workers = auto runs the query on, over a loaded
// stream of events events (< 0: a live stream) into sink, and why one
// where it could run more ("" otherwise; a query that does not split
// says why itself, on any number of workers). It splits only where the
// split pays: by key, not in time segments (which re-read each segment's
// overlap and merge by time: W1's gained 1.01-1.03× on a quiet machine,
// lost 1.5× into jsonl and 2-5× on a loaded machine); where the workers
// encode or count the matches themselves,
// on AutoEvents events a worker at least, and, into an encoded output,
// on an estimated autoMatchesPerEvent matches an event at most.
func (s *Split) Auto(events int, sink Sink) (n int, why string) {
	if events < 0 || sink == SinkRows {
		return 1, ""
	}
	cpus := runtime.NumCPU()
	n = min(cpus, max(1, events/AutoEvents))
	switch {
	case n > 1 && s.Kind == SplitSegments:
		n, why = 1, "workers = auto does not cut a stream into time segments: they gained 1.01-1.03× at best, and lost up to 5× on a loaded machine (SET workers = N cuts them)"
	case n == 1 && cpus > 1:
		why = fmt.Sprintf("workers = auto and %d %s: a split needs %d a worker", events, plural(events, "event", "events"), AutoEvents)
	case n > 1 && s.Kind != SplitNone && sink == SinkChunks && s.MatchesPerEvent > autoMatchesPerEvent:
		n, why = 1, fmt.Sprintf("workers = auto and an estimated %s matches an event: their output, which one writer writes, may cost more than the split saves (a split needs at most %g)", num(s.MatchesPerEvent), autoMatchesPerEvent)
	}
	return n, why
}

// num prints an estimate with three significant digits.
func num(x float64) string { return fmt.Sprintf("%.3g", x) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// KindName names the kind, for EXPLAIN in JSON: key, segments or none.
func (s *Split) KindName() string {
	return [...]string{SplitNone: "none", SplitKey: "key", SplitSegments: "segments"}[s.Kind]
}
