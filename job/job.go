// Package job runs one compiled query over one source of events into one
// sink: the limit, cancellation, progress counts, a live stream's pauses,
// the stats and the end-of-run summary, with one lifecycle (Start, Stop,
// Wait, State, Stats while it runs). Every way the session and a NATS
// group run a query goes through it, as Benthos' stream assembles input,
// pipeline and output once.
//
//	j := job.New(job.Config{Query: q, Source: job.Loaded(stream.All()), Sink: w, Limit: 10})
//	sum, err := j.Run(ctx)
package job

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/query"
)

// State is where a job is in its life: Running from its start, then one
// of the others, once, when its run ends.
type State int32

const (
	Running      State = iota
	Ended              // its events ended
	EndedAtLimit       // it wrote its limit of matches
	Stopped            // Stop, or its context was cancelled
	Failed             // its run, its source or its sink returned an error
)

var stateNames = [...]string{"running", "ended", "ended at the limit", "stopped", "failed"}

func (st State) String() string {
	if int(st) < len(stateNames) {
		return stateNames[st]
	}
	return "State(" + strconv.Itoa(int(st)) + ")"
}

// Source is where a job's events come from. Events are the events of one
// run; on a live run (Config.Live) the events call pause, on the
// goroutine that iterates them, whenever none is ready, and end when ctx
// is done. A Source that also has Close() is closed once the events end,
// before the sink finishes; one that has Err() error reports through it
// why its events ended early.
type Source interface {
	Events(ctx context.Context, pause func()) iter.Seq[*event.Event]
}

// Loaded is a Source of events already at hand (a loaded stream's).
func Loaded(events iter.Seq[*event.Event]) Source { return loaded(events) }

type loaded iter.Seq[*event.Event]

func (l loaded) Events(context.Context, func()) iter.Seq[*event.Event] {
	return iter.Seq[*event.Event](l)
}

// Slice is a Source of events at hand in one slice (a loaded stream's),
// which a RunAll reads without a copy.
func Slice(events []*event.Event) Source { return slice(events) }

type slice []*event.Event

func (s slice) Events(context.Context, func()) iter.Seq[*event.Event] { return slices.Values(s) }

// Config is what a job runs.
type Config struct {
	Query query.Query
	// Run, when set, runs instead of Query (a MATCH_RECOGNIZE's matcher):
	// it reads the events and hands each row to sink until sink returns
	// false, and says how many events it read.
	Run func(ctx context.Context, events iter.Seq[*event.Event], sink func([]query.Cell) bool) (int64, error)
	// RunAll, when set, runs instead of Query on all the events at once
	// (a loaded MATCH_RECOGNIZE sorts them before it matches): a Slice's
	// without a copy, another Source's collected first. It hands each
	// row to sink until sink returns false.
	RunAll func(ctx context.Context, events []*event.Event, sink func([]query.Cell) bool) error
	Source Source
	// Sink writes the matches; a Row error stops the run and fails it.
	// Finish is called once the run has ended.
	Sink  output.Writer
	Limit int64 // matches to write; 0: all
	// Workers splits the run (query.RunOptions); with Chunks the workers
	// encode the rows themselves when Sink can take them so
	// (output.Chunked).
	Workers  int
	Chunks   bool
	AnyOrder bool
	Timing   bool // each operator's time, for EXPLAIN ANALYZE
	// Live: the events come from a live stream, which pauses. At a pause
	// the sink's rows go out (Sync, then Flush); a stop is a normal end,
	// and drops the matches the stop would release before their window
	// closed, which are not complete.
	Live bool
	// Flush, if not nil, follows the sink's Sync at a pause and its
	// Finish at the end (a buffer in front of the sink's writer).
	Flush func()
	// Progress counts the events as they are read, for Stats while the
	// job runs (one atomic store per 1024 events).
	Progress bool
}

// Stats is how far a job has got; while it runs, Events (with
// Config.Progress) and Matches lag by up to 1024.
type Stats struct {
	State   State
	Events  int64 // events read
	Matches int64 // matches written
	Elapsed time.Duration
}

// Summary is how a run ended.
type Summary struct {
	State   State
	Matches int64        // matches written, which the sink took
	Stats   *query.Stats // the engine's: events read, its time (how it split: Detail)
}

// Cancelled is the error of a job that is not live when its context is
// cancelled: how far it got.
type Cancelled struct{ Events, Matches int64 }

func (c *Cancelled) Error() string {
	return fmt.Sprintf("query cancelled after %s and %s", Plural(c.Events, "event", "events"), Plural(c.Matches, "match", "matches"))
}

// Job is one run of a query; New makes it, Run or Start starts it.
type Job struct {
	cfg   Config
	start atomic.Pointer[time.Time] // set as it starts; Stats may read it meanwhile (a progress line)

	state   atomic.Int32
	events  atomic.Int64
	matches atomic.Int64
	shown   int64 // the matches last published, read by the run alone

	once   sync.Once
	cancel context.CancelFunc
	done   chan struct{}
	sum    Summary
	err    error
}

// New prepares a job; it starts with Run or Start.
func New(cfg Config) *Job {
	return &Job{cfg: cfg, done: make(chan struct{}), cancel: func() {}}
}

// Start runs the job in the background until its events end, its limit,
// an error, Stop, or ctx is done.
func (j *Job) Start(ctx context.Context) {
	ctx = j.begin(ctx)
	go j.finish(ctx)
}

// Run runs the job on the caller's goroutine and returns its summary
// (Start, then Wait).
func (j *Job) Run(ctx context.Context) (Summary, error) {
	j.finish(j.begin(ctx))
	return j.sum, j.err
}

func (j *Job) begin(ctx context.Context) context.Context {
	started := false
	j.once.Do(func() { started = true })
	if !started {
		panic("job: started twice")
	}
	now := time.Now()
	j.start.Store(&now)
	ctx, j.cancel = context.WithCancel(ctx)
	return ctx
}

func (j *Job) finish(ctx context.Context) {
	defer close(j.done)
	defer j.cancel()
	j.sum, j.err = j.run(ctx)
	j.state.Store(int32(j.sum.State))
}

// Stop ends the job and waits until its sink has finished.
func (j *Job) Stop() {
	j.cancel()
	<-j.done
}

// Done is closed once the job has ended.
func (j *Job) Done() <-chan struct{} { return j.done }

// Wait waits until the job has ended and returns its summary, and the
// error that ended it: its run's, its source's or its sink's, or
// Cancelled when the context of a job that is not live was cancelled.
func (j *Job) Wait() (Summary, error) {
	<-j.done
	return j.sum, j.err
}

// State is where the job is.
func (j *Job) State() State { return State(j.state.Load()) }

// Stats says how far the job has got, while it runs and after.
func (j *Job) Stats() Stats {
	st := Stats{State: j.State(), Events: j.events.Load(), Matches: j.matches.Load()}
	select {
	case <-j.done:
		if j.sum.Stats != nil {
			st.Events, st.Elapsed = j.sum.Stats.Events, j.sum.Stats.Elapsed
		}
	default:
		if start := j.start.Load(); start != nil {
			st.Elapsed = time.Since(*start)
		}
	}
	return st
}

func (j *Job) run(ctx context.Context) (Summary, error) {
	c := j.cfg
	var n int64 // matches written
	written := func(n int64) {
		// Live: each match, for SHOW QUERIES; otherwise once per 1024: an
		// atomic store per match cost W2 a fifth of its time.
		if c.Live || n-j.shown >= 1024 {
			j.shown = n
			j.matches.Store(n)
		}
	}
	var werr error
	sink := func(row []query.Cell) bool {
		if c.Live && ctx.Err() != nil {
			return false // stopped: the run's end would release incomplete matches
		}
		if werr = c.Sink.Row(row); werr != nil {
			return false // the output is gone (a full disk, a closed pipe): stop
		}
		n++
		written(n)
		return c.Limit == 0 || n < c.Limit
	}
	o := query.RunOptions{Workers: c.Workers, AnyOrder: c.AnyOrder, Timing: c.Timing, Live: c.Live}
	if c.Chunks {
		// A split run's workers encode the rows; one worker calls sink.
		o.Chunks = output.ChunksOf(c.Sink, c.Limit, func(rows int) { n += int64(rows); written(n) })
	}
	o.Idle = func() {
		c.Sink.Sync()
		if c.Flush != nil {
			c.Flush()
		}
	}
	all, isSlice := c.Source.(slice)
	readAtOnce := isSlice && c.RunAll != nil // a loaded stream's slice, read whole
	if c.Progress && readAtOnce {
		j.events.Store(int64(len(all)))
	}
	open := func(pause func()) iter.Seq[*event.Event] {
		events := c.Source.Events(ctx, pause)
		if c.Progress && !readAtOnce {
			events = j.count(events)
		}
		return events
	}
	var pause func()
	if c.Live {
		pause = o.Idle // a Run writes each row as it decides it
	}
	var stats *query.Stats
	var err error
	start := time.Now()
	switch {
	case c.RunAll != nil:
		if !isSlice {
			all = slices.Collect(open(pause))
		}
		err = c.RunAll(ctx, all, sink)
		stats = &query.Stats{Events: int64(len(all)), Matches: n, Elapsed: time.Since(start)}
	case c.Run != nil:
		var read int64
		read, err = c.Run(ctx, open(pause), sink)
		stats = &query.Stats{Events: read, Matches: n, Elapsed: time.Since(start)}
	default:
		stats, err = c.Query.Run(ctx, open, sink, o)
	}
	if cl, ok := c.Source.(interface{ Close() }); ok {
		cl.Close()
	}
	if serr, ok := c.Source.(interface{ Err() error }); ok && serr.Err() != nil {
		err = serr.Err()
	}
	if ferr := c.Sink.Finish(); werr == nil {
		werr = ferr
	}
	if c.Flush != nil {
		c.Flush()
	}
	j.matches.Store(n)
	sum := Summary{State: Ended, Matches: n, Stats: stats}
	switch {
	case ctx.Err() != nil && c.Live: // Stop, not the end of the stream
		sum.State, err = Stopped, nil
	case ctx.Err() != nil:
		sum.State, err = Stopped, &Cancelled{Events: stats.Events, Matches: n}
	case err != nil:
		sum.State = Failed
	case werr != nil:
		sum.State, err = Failed, fmt.Errorf("writing the results: %w", werr)
	case c.Limit > 0 && n >= c.Limit:
		sum.State = EndedAtLimit
	}
	return sum, err
}

// count passes events through, publishing how many have passed every
// 1024 events (one atomic store per 1024: nothing per event that need not
// be).
func (j *Job) count(events iter.Seq[*event.Event]) iter.Seq[*event.Event] {
	return func(yield func(*event.Event) bool) {
		var n int64
		defer func() { j.events.Store(n) }()
		for e := range events {
			if n++; n&1023 == 0 {
				j.events.Store(n)
			}
			if !yield(e) {
				return
			}
		}
	}
}

// Plural is "1 match", "2 matches".
func Plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
