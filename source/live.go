package source

import (
	"context"
	"fmt"
	"io"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sase-cep/sase/event"
)

// Live shares a live source among queries (LOAD '-', LOAD 'path' FOLLOW,
// LISTEN): it reads the source once, in the background, and hands each
// batch to every subscribed query. It keeps no events; the schema grows as
// types and attributes appear.
type Live struct {
	name string
	src  Source

	subsMu    sync.Mutex
	subs      []*Subscription // replaced, never changed in place: publish iterates it unlocked
	ended     bool
	published int64 // the items (events and ticks) handed out so far

	start   sync.Once
	started atomic.Bool
	closed  atomic.Bool // Close was called: the stream stops rather than ends
	stdin   bool        // Close cannot interrupt its read
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	err     error // why the source stopped; nil at its end
}

// NewLive shares src, a stream named name. It does not read src until
// Start.
func NewLive(name string, src Source) *Live {
	l := &Live{name: name, src: src, done: make(chan struct{})}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l
}

// LiveReader is a live stream read from r, standard input: it ends when r
// does. format is as Load takes it, csv by default; errors name "stdin".
func LiveReader(name string, r io.Reader, format string, opts Options, errs io.Writer) (*Live, error) {
	c := newConfig(WithName(name), WithFormat(format), WithOptions(opts), WithErrors(errs), WithStdin(r))
	src, err := timedOpen(openStdin(c))(c)
	if err != nil {
		return nil, err
	}
	l := NewLive(name, src)
	l.stdin = true
	return l, nil
}

// openStdin is "-": standard input, live.
func openStdin(c Config) (Source, error) {
	return newLineSource("-", c, func(_ context.Context, feed func(Producer) error) error {
		return feed(Producer{Name: "stdin", R: c.Stdin})
	}, nil)
}

// Name is the stream's name; Source where it comes from ("-", a path, or
// tcp://address with the port the listener got).
func (l *Live) Name() string   { return l.name }
func (l *Live) Source() string { return l.src.URL() }

// Start starts reading the source, once; the stream ends when the source
// does or at Close.
func (l *Live) Start() {
	l.start.Do(func() {
		l.started.Store(true)
		go func() {
			err := l.src.Read(l.ctx, l.publish)
			l.subsMu.Lock()
			l.err, l.ended = err, true
			close(l.done) // before the queries see the end
			for _, s := range l.subs {
				close(s.ch)
			}
			l.subs = nil
			l.subsMu.Unlock()
		}()
	})
}

// Close stops following a file or listening; the stream then ends. It
// cannot interrupt a read of standard input.
func (l *Live) Close() {
	l.closed.Store(true)
	l.cancel()
	l.src.Close()
}

// Stops reports whether Close stops the stream's reading: not standard
// input's. A stopped stream releases the events its slack holds, then
// ends.
func (l *Live) Stops() bool { return !l.stdin }

// Stopped reports whether Close was called: a query that sees the stream
// end then was stopped, and its end releases no match whose window is
// still open.
func (l *Live) Stopped() bool { return l.closed.Load() }

// CloseWait is Close, and then waits until the source has let go of what
// it holds (a listener's port), so that a successor can take it. It must
// not be used on standard input, whose read Close cannot interrupt.
func (l *Live) CloseWait() {
	l.Close()
	if l.started.Load() {
		<-l.done
	}
}

// Done is closed when the stream has ended; Err then says why: nil at the
// end of the input, else the error that stopped the stream (on_error =
// 'stop', a line over max_line, a failed read), which the source has
// reported on its error writer when it happened.
func (l *Live) Done() <-chan struct{} { return l.done }
func (l *Live) Err() error            { <-l.done; return l.err }

// Counts returns the event lines read so far, the events used (handed to
// the queries) and the lines rejected.
func (l *Live) Counts() (read, used, rejected int64) {
	st := l.src.Stats()
	return st.Read, st.Used, st.Rejected
}

// Stats counts what the stream has read, used, found late and rejected,
// with its time.
func (l *Live) Stats() Stats { return l.src.Stats() }

// Unit is the duration of one timestamp tick: the time_unit option, or
// milliseconds once an RFC 3339 timestamp has been read; 0 until then,
// and for unit-less integer timestamps.
func (l *Live) Unit() time.Duration { return l.src.Unit() }

// Update runs f on the growing schema, which the stream's producers change
// under the same lock: a query registers the names it reads with it.
func (l *Live) Update(f func(*event.Schema)) { l.src.Schema(f) }

// Snapshot returns the stream as it is now, for the planner: a copy of the
// schema (type ids and attribute slots are never renumbered, so a plan
// compiled against it reads later events correctly), no events, Live set.
func (l *Live) Snapshot() *event.Stream {
	s := &event.Stream{Name: l.name, Source: l.src.URL(), Live: true}
	l.src.Schema(func(sc *event.Schema) { s.Schema = cloneSchema(sc) })
	s.Unit = l.src.Unit()
	return s
}

func cloneSchema(s *event.Schema) *event.Schema {
	c := event.NewSchema()
	for _, name := range s.Attrs {
		c.AddAttr(name)
	}
	for _, t := range s.Types {
		ct := c.Types[c.AddType(t.Name)]
		ct.Count = t.Count
		ct.Kinds = slices.Clone(t.Kinds)
		ct.Declared = slices.Clone(t.Declared)
		ct.Present = slices.Clone(t.Present)
		ct.ByKind = slices.Clone(t.ByKind)
	}
	return c
}

// Subscription is one query's view of a live stream: the events from the
// moment it subscribed on.
type Subscription struct {
	l     *Live
	start int64
	ch    chan []*event.Event
	quit  chan struct{}
	once  sync.Once
}

// Start is the position in the stream of the subscription's first item:
// the events and ticks the stream had handed out before it. The stream's
// items are numbered alike for every subscription, from 0.
func (s *Subscription) Start() int64 { return s.start }

// Subscribe starts a query's view of the stream. The stream does not start
// reading until Start.
func (l *Live) Subscribe() (*Subscription, error) {
	subs, err := l.SubscribeN(1)
	if err != nil {
		return nil, err
	}
	return subs[0], nil
}

// SubscribeN starts n views of the stream from one position, for a query
// whose parts read the stream each on its own goroutine (a live
// rulebook's passes): a batch costs a channel send per view.
func (l *Live) SubscribeN(n int) ([]*Subscription, error) {
	l.subsMu.Lock()
	defer l.subsMu.Unlock()
	if l.ended {
		return nil, fmt.Errorf("live stream %s has ended", l.name)
	}
	subs := make([]*Subscription, n)
	for i := range subs {
		subs[i] = &Subscription{l: l, start: l.published, ch: make(chan []*event.Event, 8), quit: make(chan struct{})}
	}
	l.subs = append(slices.Clip(l.subs), subs...)
	return subs, nil
}

// Close ends the subscription: the stream stops waiting for this query.
func (s *Subscription) Close() {
	s.once.Do(func() {
		close(s.quit)
		l := s.l
		l.subsMu.Lock()
		if i := slices.Index(l.subs, s); i >= 0 {
			l.subs = slices.Delete(slices.Clone(l.subs), i, i+1)
		}
		l.subsMu.Unlock()
	})
}

// Events yields the stream's events until it ends or ctx is done. Before
// it waits for the producers it calls idle, so that a query can flush the
// matches it has so far.
func (s *Subscription) Events(ctx context.Context, idle func()) iter.Seq[*event.Event] {
	return func(yield func(*event.Event) bool) {
		for {
			var batch []*event.Event
			var ok bool
			select {
			case batch, ok = <-s.ch:
			default:
				idle()
				select {
				case batch, ok = <-s.ch:
				case <-ctx.Done():
					return
				}
			}
			if !ok {
				return
			}
			for _, e := range batch {
				if !yield(e) {
					return
				}
			}
		}
	}
}

// publish hands a batch to every subscriber; a slow query holds the
// producers back (bounded memory), a stopped one no longer does.
func (l *Live) publish(batch []*event.Event) bool {
	l.subsMu.Lock()
	subs := l.subs // those who get the batch, as published counts it
	l.published += int64(len(batch))
	l.subsMu.Unlock()
	for _, s := range subs {
		select {
		case s.ch <- batch:
		case <-s.quit:
		}
	}
	return true
}
