package job_test

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/compiler"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/job"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/source"
)

func stocks(t testing.TB, n int) *event.Stream {
	t.Helper()
	cfg := source.DefaultStockConfig()
	cfg.Events = n
	return source.GenerateStocks("stocks", cfg)
}

func compile(t testing.TB, text string, stream *event.Stream) *sase.Query {
	t.Helper()
	q, err := sase.Compile(text, stream)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// rows is a sink that keeps the rows' first cells' seqs; it fails at the
// row failAt (1-based; 0: never).
type rows struct {
	seqs     []int64
	failAt   int
	synced   int
	finished int
}

func (r *rows) Row(cells []sase.Cell) error {
	if r.failAt > 0 && len(r.seqs)+1 == r.failAt {
		return errors.New("disk full")
	}
	r.seqs = append(r.seqs, cells[0].Value.Int())
	return nil
}
func (r *rows) Sync() error   { r.synced++; return nil }
func (r *rows) Finish() error { r.finished++; return nil }

const pairs = "PATTERN SEQ(stock1 a, stock2 b) WITHIN 10 RETURN a.seq"

// want runs q to its end directly: the matches a job must write.
func want(t *testing.T, q *sase.Query, stream *event.Stream) int64 {
	t.Helper()
	stats, err := q.Run(context.Background(), stream.All(), func([]sase.Cell) bool { return true })
	if err != nil || stats.Matches < 20 {
		t.Fatalf("direct run: %d matches, %v", stats.Matches, err)
	}
	return stats.Matches
}

func TestLoaded(t *testing.T) {
	stream := stocks(t, 2000)
	q := compile(t, pairs, stream)
	all := want(t, q, stream)
	for _, tc := range []struct {
		name    string
		limit   int64
		workers int
		failAt  int
		state   job.State
		matches int64
		err     string
	}{
		{"all", 0, 1, 0, job.Ended, all, ""},
		{"all on two workers", 0, 2, 0, job.Ended, all, ""},
		{"limit", 7, 1, 0, job.EndedAtLimit, 7, ""},
		{"limit on two workers", 7, 2, 0, job.EndedAtLimit, 7, ""},
		{"sink error", 0, 1, 5, job.Failed, 4, "writing the results: disk full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &rows{failAt: tc.failAt}
			j := job.New(job.Config{Query: compiler.Of(q), Source: job.Loaded(stream.All()), Sink: sink, Limit: tc.limit, Workers: tc.workers, Progress: true})
			sum, err := j.Run(context.Background())
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || err.Error() != tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			if sum.State != tc.state || sum.Matches != tc.matches || int64(len(sink.seqs)) != tc.matches {
				t.Errorf("state %s, %d matches, %d rows; want %s, %d", sum.State, sum.Matches, len(sink.seqs), tc.state, tc.matches)
			}
			if sink.finished != 1 {
				t.Errorf("sink finished %d times", sink.finished)
			}
			if st := j.Stats(); st.State != tc.state || st.Matches != tc.matches || st.Events != sum.Stats.Events || j.State() != tc.state {
				t.Errorf("Stats = %+v after the end; summary %+v", st, sum)
			}
		})
	}
}

// TestChunks: a split run's workers encode the rows of a sink that takes
// chunks, within the limit, and the job counts them.
func TestChunks(t *testing.T) {
	stream := stocks(t, 2000)
	q := compile(t, pairs, stream)
	all := want(t, q, stream)
	for _, limit := range []int64{0, 9} {
		var buf bytes.Buffer
		w := output.New(output.CSV, &buf, output.Schema{Columns: []output.Column{{Name: "a.seq"}}})
		sum, err := job.New(job.Config{Query: compiler.Of(q), Source: job.Loaded(stream.All()), Sink: w, Limit: limit, Workers: 2, Chunks: true}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n := min(all, limit)
		if limit == 0 {
			n = all
		}
		if lines := int64(strings.Count(buf.String(), "\n")) - 1; sum.Matches != n || lines != n {
			t.Errorf("limit %d: %d matches, %d lines; want %d", limit, sum.Matches, lines, n)
		}
	}
}

// TestStatsWhileStarting reads a job's Stats from another goroutine while
// it starts and runs, as the shell's progress line does (go test -race
// found the start time written and read at once).
func TestStatsWhileStarting(t *testing.T) {
	stream := stocks(t, 2000)
	q := compile(t, pairs, stream)
	j := job.New(job.Config{Query: compiler.Of(q), Source: job.Loaded(stream.All()), Sink: &rows{}, Progress: true})
	done, reading := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		close(reading)
		for {
			select {
			case <-j.Done():
				return
			default:
				if st := j.Stats(); st.Elapsed < 0 || st.Events < 0 {
					t.Errorf("stats while running: %+v", st)
				}
			}
		}
	}()
	<-reading
	sum, err := j.Run(context.Background())
	<-done
	if err != nil || j.Stats().Matches != sum.Matches {
		t.Fatalf("%v; stats %+v, summary %d matches", err, j.Stats(), sum.Matches)
	}
}

// cancelAt cancels a context at its n-th event.
func cancelAt(events iter.Seq[*event.Event], n int, cancel func()) iter.Seq[*event.Event] {
	return func(yield func(*event.Event) bool) {
		i := 0
		for e := range events {
			if i++; i == n {
				cancel()
			}
			if !yield(e) {
				return
			}
		}
	}
}

func TestCancel(t *testing.T) {
	stream := stocks(t, 2000)
	q := compile(t, pairs, stream)
	ctx, cancel := context.WithCancel(context.Background())
	sink := &rows{}
	sum, err := job.New(job.Config{Query: compiler.Of(q), Source: job.Loaded(cancelAt(stream.All(), 1000, cancel)), Sink: sink}).Run(ctx)
	var c *job.Cancelled
	if !errors.As(err, &c) || sum.State != job.Stopped {
		t.Fatalf("err = %v, state %s", err, sum.State)
	}
	if c.Matches != int64(len(sink.seqs)) || c.Events >= 2000 || c.Events < 1000 || !strings.HasPrefix(err.Error(), "query cancelled after ") {
		t.Errorf("%v; %d rows written", err, len(sink.seqs))
	}
}

// errSource ends its events early, with an error.
type errSource struct{ events iter.Seq[*event.Event] }

func (s errSource) Events(context.Context, func()) iter.Seq[*event.Event] { return s.events }
func (errSource) Err() error                                              { return errors.New("bad input") }

func TestSourceError(t *testing.T) {
	stream := stocks(t, 200)
	q := compile(t, pairs, stream)
	sum, err := job.New(job.Config{Query: compiler.Of(q), Source: errSource{stream.All()}, Sink: &rows{}}).Run(context.Background())
	if err == nil || err.Error() != "bad input" || sum.State != job.Failed {
		t.Errorf("err = %v, state %s", err, sum.State)
	}
}

// feed is a live source: the events of a channel, pausing whenever none
// is ready, until the channel is closed or ctx is done.
type feed struct {
	ch     chan *event.Event
	closed bool
}

func (f *feed) Events(ctx context.Context, pause func()) iter.Seq[*event.Event] {
	return func(yield func(*event.Event) bool) {
		for {
			var e *event.Event
			var ok bool
			select {
			case e, ok = <-f.ch:
			default:
				pause()
				select {
				case e, ok = <-f.ch:
				case <-ctx.Done():
					return
				}
			}
			if !ok || !yield(e) {
				return
			}
		}
	}
}

func (f *feed) Close() { f.closed = true }

// TestLive: a live job syncs its sink at each pause, ends with its events
// or at Stop (then without error), and closes its source.
func TestLive(t *testing.T) {
	stream := stocks(t, 400)
	q := compile(t, pairs, stream)
	all := want(t, q, stream)
	for _, stop := range []bool{false, true} {
		f := &feed{ch: make(chan *event.Event)}
		sink := &rows{}
		flushed := 0
		j := job.New(job.Config{Query: compiler.Of(q), Source: f, Sink: sink, Live: true, Flush: func() { flushed++ }})
		j.Start(context.Background())
		for _, e := range stream.Events {
			f.ch <- e
		}
		if j.State() != job.Running {
			t.Fatalf("state %s while events may still come", j.State())
		}
		want, state := all, job.Ended
		if stop {
			j.Stop()
			state = job.Stopped
			want = j.Stats().Matches // those the events so far completed
		} else {
			close(f.ch)
		}
		sum, err := j.Wait()
		if err != nil || sum.State != state || sum.Matches != want || int64(len(sink.seqs)) != want || !f.closed {
			t.Errorf("stop %v: %v, state %s, %d matches, %d rows, closed %v; want %s, %d", stop, err, sum.State, sum.Matches, len(sink.seqs), f.closed, state, want)
		}
		if sink.synced == 0 || flushed != sink.synced+1 || sink.finished != 1 {
			t.Errorf("stop %v: synced %d, flushed %d, finished %d", stop, sink.synced, flushed, sink.finished)
		}
	}
}

// TestRun: a job whose Run is not a sase plan (a MATCH_RECOGNIZE's, a
// rulebook's) on a loaded source gets the same limit, cancel, errors and
// summary: here a Run that writes each event's seq.
func TestRun(t *testing.T) {
	stream := stocks(t, 2000)
	bad := errors.New("no row of B")
	for _, tc := range []struct {
		name     string
		limit    int64
		cancelAt int   // cancel at this event (0: never)
		failAt   int64 // the Run fails at this event (0: never)
		state    job.State
		events   int64
		matches  int64
		err      string
	}{
		{"all", 0, 0, 0, job.Ended, 2000, 2000, ""},
		{"limit", 7, 0, 0, job.EndedAtLimit, 7, 7, ""},
		{"cancel", 0, 1000, 0, job.Stopped, 1000, 1000, "query cancelled after 1000 events and 1000 matches"},
		{"error", 0, 0, 500, job.Failed, 500, 499, "no row of B"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			run := func(ctx context.Context, events iter.Seq[*event.Event], sink func([]sase.Cell) bool) (int64, error) {
				var n int64
				for e := range events {
					if n++; n == tc.failAt {
						return n, bad
					}
					if !sink([]sase.Cell{{Value: event.IntValue(e.Seq)}}) || ctx.Err() != nil {
						break
					}
				}
				return n, nil
			}
			src := stream.All()
			if tc.cancelAt > 0 {
				src = cancelAt(src, tc.cancelAt, cancel)
			}
			sink := &rows{}
			sum, err := job.New(job.Config{Run: run, Source: job.Loaded(src), Sink: sink, Limit: tc.limit}).Run(ctx)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || err.Error() != tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			if sum.State != tc.state || sum.Matches != tc.matches || int64(len(sink.seqs)) != tc.matches || sum.Stats.Events != tc.events {
				t.Errorf("state %s, %d matches, %d rows, %d events; want %s, %d, %d", sum.State, sum.Matches, len(sink.seqs), sum.Stats.Events, tc.state, tc.matches, tc.events)
			}
			if sink.finished != 1 {
				t.Errorf("sink finished %d times", sink.finished)
			}
		})
	}
}

// TestRunAll: a RunAll gets all the events at once, a Slice's or another
// Source's collected, with the same limit, cancel, errors and summary.
func TestRunAll(t *testing.T) {
	stream := stocks(t, 2000)
	for _, tc := range []struct {
		name     string
		limit    int64
		cancelAt int   // the run cancels at this row (0: never)
		failAt   int64 // the run fails at this row (0: never)
		state    job.State
		matches  int64
		err      string
	}{
		{"all", 0, 0, 0, job.Ended, 2000, ""},
		{"limit", 7, 0, 0, job.EndedAtLimit, 7, ""},
		{"cancel", 0, 1000, 0, job.Stopped, 1000, "query cancelled after 2000 events and 1000 matches"},
		{"error", 0, 0, 500, job.Failed, 499, "no row of B"},
	} {
		for _, src := range []job.Source{job.Slice(stream.Events), job.Loaded(stream.All())} {
			ctx, cancel := context.WithCancel(context.Background())
			run := func(ctx context.Context, events []*event.Event, sink func([]sase.Cell) bool) error {
				for i, e := range events {
					switch int64(i + 1) {
					case int64(tc.cancelAt):
						cancel()
					case tc.failAt:
						return errors.New("no row of B")
					}
					if !sink([]sase.Cell{{Value: event.IntValue(e.Seq)}}) {
						break
					}
					if ctx.Err() != nil {
						return ctx.Err()
					}
				}
				return nil
			}
			sink := &rows{}
			sum, err := job.New(job.Config{RunAll: run, Source: src, Sink: sink, Limit: tc.limit, Progress: true}).Run(ctx)
			cancel()
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || err.Error() != tc.err) {
				t.Fatalf("%s, %T: err = %v, want %q", tc.name, src, err, tc.err)
			}
			if sum.State != tc.state || sum.Matches != tc.matches || int64(len(sink.seqs)) != tc.matches || sum.Stats.Events != 2000 || sink.finished != 1 {
				t.Errorf("%s, %T: state %s, %d matches, %d rows, %d events, finished %d; want %s, %d, 2000 events", tc.name, src, sum.State, sum.Matches, len(sink.seqs), sum.Stats.Events, sink.finished, tc.state, tc.matches)
			}
		}
	}
}
