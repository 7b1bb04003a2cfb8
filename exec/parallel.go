package exec

import (
	"fmt"

	"github.com/sase-cep/sase/planner"
)

// A parallel run splits a partitioned query over workers: a dispatcher
// hashes each event's partition value to one worker and hands events
// lacking it to all; every worker runs its own runner over the plan (read
// only) and sees every position of the stream, its own events as events
// and the others' as time, so that time-released matches come out at the
// same position as in one run. A match is tagged with that position and
// its partition value, and the merge emits by (position, value, the
// worker's order): the one-worker order with the matches that several
// partitions complete at one position sorted by partition value
// (docs/LANGUAGE.md, workers).
//
// By concern: this file has the options and the split; parallel_run.go
// the run and its workers, parallel_owners.go which worker owns a key,
// parallel_dispatch.go the batches handed to the workers,
// parallel_result.go the rows a worker keeps for the merge,
// parallel_merge.go the ordered merge, chunks.go the rows the workers
// encode; splitrun.go what a run in time segments (segments.go) shares.

// parallel is what WithWorkers and WithLive ask of a run.
type parallel struct {
	workers  int
	live     *Live
	chunks   *Chunks
	anyOrder bool
}

// WithWorkers runs a partitioned query on n workers (goroutines); n <= 1
// is one run on the caller's goroutine.
func WithWorkers(n int) Option { return func(r *runner) { r.par.workers = n } }

// WithLive says the events come from a live stream, which calls l.Pause
// before it waits for more.
func WithLive(l *Live) Option { return func(r *runner) { r.par.live = l } }

// Live carries a live stream's pauses to the run: its source calls Pause
// before it waits for events, and the run calls idle once it has emitted
// every match of the events before the pause, on the goroutine that emits
// (so that a writer may flush there). A parallel run hands a partial batch
// to its workers at a pause, so a quiet stream's matches are not held back.
type Live struct {
	idle func()
	d    *dispatcher // a parallel run's; nil for one run
}

// NewLive returns the pauses of a live stream for one run; idle may be nil.
func NewLive(idle func()) *Live {
	if idle == nil {
		idle = func() {}
	}
	return &Live{idle: idle}
}

// Pause says the stream has no event ready; the source calls it on the
// goroutine that iterates the events.
func (l *Live) Pause() {
	if l.d == nil {
		l.idle()
		return
	}
	l.d.pause()
}

// Split is how a run divides its work.
type Split struct {
	Workers int // 1: one run
	// By is the partition attribute of a partitioned run; of a segmented
	// one, the order of the matches that one item completes or releases.
	By *planner.Equiv
	// Overlap is how far, in ticks, a time segment's worker reads back
	// before the segment's start; Segmented says the run splits that way.
	Overlap   int64
	Segmented bool
	Why       string // why one worker, when more were asked for
}

// String says how the run is split, for EXPLAIN.
func (s Split) String() string {
	switch {
	case s.Segmented && s.By != nil:
		return fmt.Sprintf("Parallel: %d workers, time segments of the loaded stream overlapping by %d (one event's matches in %s order)", s.Workers, s.Overlap, s.By.Text)
	case s.Segmented:
		return fmt.Sprintf("Parallel: %d workers, time segments of the loaded stream overlapping by %d", s.Workers, s.Overlap)
	case s.Workers > 1:
		return fmt.Sprintf("Parallel: %d workers, partitioned by %s", s.Workers, s.By.Text)
	}
	return "Parallel: one worker (" + s.Why + ")"
}

// Explain is the split's EXPLAIN ANALYZE lines: how the run split and each
// worker's events and matches (events lacking the attribute count at
// every worker; a segment's overlap at the worker that reads it again).
func (s *Stats) explainSplit() string {
	if s.Split == nil {
		return ""
	}
	text := s.Split.String() + "\n"
	if s.Split.Segmented {
		text += fmt.Sprintf("   segments: %d\n", s.Segments)
	}
	for i, w := range s.Workers {
		text += fmt.Sprintf("   worker %d: events=%d matches=%d", i+1, w.Events, w.Matches)
		if w.MaxBuffer > 0 {
			text += fmt.Sprintf(" max buffer=%d", w.MaxBuffer)
		}
		text += "\n"
	}
	return text
}

// SplitOf says how a run of plan on the given number of workers splits,
// on a live stream or a loaded one, as the optimizer recorded it
// (planner.Split): by partition, in time segments of a loaded stream
// (segments.go), or on one worker.
func SplitOf(plan *planner.Plan, workers int, live bool) Split {
	sp := &plan.Split
	switch {
	case workers <= 1:
		return Split{Workers: 1, Why: "workers = 1"}
	case sp.Kind == planner.SplitKey:
		return Split{Workers: workers, By: sp.By}
	case live && sp.LiveWhy != "":
		return Split{Workers: 1, Why: sp.LiveWhy}
	case sp.Kind == planner.SplitSegments:
		return Split{Workers: workers, Segmented: true, Overlap: sp.Overlap, By: sp.By}
	}
	return Split{Workers: 1, Why: sp.Why}
}
