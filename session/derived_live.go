package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/derive"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/job"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/source"
)

// A live derived stream is a source.Live whose Source is the merge of its
// producers (derivedSource): their released events are handed over as
// events, in batches, so its consumers, SHOW STREAMS and the stream's
// summary work as for any live stream, with no encoding in between.

// intoLive starts an INTO query cq over the live stream from in the
// background, as query n, writing into the live derived stream target
// (nil: a new one, created here and started at once, so that its
// producers never wait for it). view and unit are from as cq was compiled
// over it (unitView).
func (s *Session) intoLive(src *ast.Source, q *ast.Query, from, target *entry, cq query.Query, view *event.Stream, unit *ast.Duration) error {
	pq, cols, late, w, err := s.producerQuery(src, q, view, cq)
	if err != nil {
		return err
	}
	lq, ls, p, err := s.soloProducer(src, q.Into, q, from, target, cols, late, w)
	if err != nil {
		return err
	}
	ls.unit = unit
	// One worker: the producer releases derived events by the input's
	// time as it reads it (Follow), which a parallel run reads ahead of
	// the matches it has merged. SET limit is for results: the stream
	// gets every match.
	s.runLive(lq, job.Config{Query: pq, Source: ls, Sink: s.counted(lq, p), Workers: 1}, nil, nil)
	return nil
}

// soloProducer is liveProducer for a query run alone, on its own
// subscription to from: it returns the query's source too, subscribed,
// following the producer.
func (s *Session) soloProducer(src *ast.Source, into *ast.Ident, q fmt.Stringer, from, target *entry, cols []string, late bool, w int64) (*liveQuery, *liveSource, *derive.Producer, error) {
	var sub *source.Subscription
	lq, p, err := s.liveProducer(src, into, q, from, target, cols, late, w, func() (err error) {
		sub, err = from.live.Subscribe()
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return lq, &liveSource{sub: sub, live: from.live, into: p, q: lq}, p, nil
}

// liveProducer adds query q over the live stream from as a producer of
// the live derived stream into names (target; nil: a new one, created here
// and started at once, so that its producers never wait for it), of
// columns cols, released as late with window w says (derive.Stream.Add).
// join has the query read from (its subscription, or its stream's
// rulebook), once the producer is added and before anything is noted. It
// returns the query and the producer, which the query's rows go to.
func (s *Session) liveProducer(src *ast.Source, into *ast.Ident, q fmt.Stringer, from, target *entry, cols []string, late bool, w int64, join func() error) (*liveQuery, *derive.Producer, error) {
	l := from.live
	name := into.Name
	d, dl := (*derivation)(nil), (*source.Live)(nil)
	var ds *derivedSource
	if target != nil {
		d, dl, ds = target.derived, target.live, target.derived.src
	} else {
		ds = newDerivedSource(name, l.Unit)
		d = &derivation{unit: from.view().Unit, merge: derive.New(mergeOut{ds}), src: ds}
		dl = source.NewLive(name, ds)
	}
	p, err := d.merge.Add(cols, late, w)
	if errors.Is(err, derive.ErrStarted) {
		return nil, nil, errAt(src, into.Span.Start, "the live derived stream %s has started: a query writes into it only before its first events (in a script, live streams start at its end)", name)
	}
	if err := join(); err != nil {
		p.Finish() // it would hold the others back
		return nil, nil, err
	}
	// Its type and attributes are known before its first event, so that
	// consumers compile against them.
	ds.declare(p, cols)
	lq := s.addQuery(l, q)
	d.producers = append(d.producers, &producer{from: from, query: lq.id})
	if target == nil {
		s.addLiveEntry(&entry{name: name, kind: Live, live: dl, derived: d}, "derived stream "+name+" ("+d.describe()+")")
		dl.Start()
	}
	rule := ""
	if aq, ok := q.(*ast.Query); ok && aq.Rule != nil {
		rule = " (rule " + aq.Rule.Name + ")"
	}
	s.note("query %d%s started on %s, into %s", lq.id, rule, l.Name(), name)
	return lq, p, nil
}

// derivedSource is a live derived stream's Source: it takes the events
// its producers' merge releases (mergeOut), numbers them and hands them to
// the stream's source.Live in batches (a batch goes when the merge
// flushes, as a producer waits for input, or when it is full).
type derivedSource struct {
	url  string
	unit func() time.Duration // the producers' input's, which is known at its first event

	mu     sync.Mutex // the schema and counts, which consumers read as events arrive
	schema *event.Schema
	typ    int
	seq    int64 // events released
	last   int64 // the last one's ts
	cols   map[*derive.Producer]columns
	values []event.Value // where the events whose columns move get their slots

	batch []*event.Event // under the merge's lock

	ch       chan []*event.Event
	quit     chan struct{} // closed when Read ends or at Close: no send waits then
	quitOnce sync.Once
}

// columns are the slots of a producer's columns in the stream's schema;
// moved when they are not its first ones in order (a later producer's).
type columns struct {
	slots []int
	width int
	moved bool
}

func newDerivedSource(name string, unit func() time.Duration) *derivedSource {
	ds := &derivedSource{url: "INTO " + name, unit: unit, schema: event.NewSchema(), cols: map[*derive.Producer]columns{},
		ch: make(chan []*event.Event, 8), quit: make(chan struct{})}
	ds.typ = ds.schema.AddType(name)
	return ds
}

// declare adds producer p's columns to the stream's type, before its
// first event, so that consumers compile against them.
func (ds *derivedSource) declare(p *derive.Producer, names []string) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	c := columns{slots: make([]int, len(names))}
	for i, name := range names {
		slot := ds.schema.AddAttr(name)
		ds.schema.Declare(ds.typ, slot)
		c.slots[i], c.width = slot, max(c.width, slot+1)
		c.moved = c.moved || slot != i
	}
	ds.cols[p] = c
}

// event takes a released event: the producer's i-th value goes to the
// slot of its i-th column (in place for the stream's first producer).
func (ds *derivedSource) event(p *derive.Producer, e *event.Event) {
	ds.mu.Lock() // declare may be adding a producer
	if c := ds.cols[p]; c.moved {
		if len(ds.values) < c.width {
			ds.values = make([]event.Value, 256*c.width)
		}
		attrs := ds.values[:c.width:c.width]
		ds.values = ds.values[c.width:]
		for i, slot := range c.slots {
			attrs[slot] = e.Attrs[i]
		}
		e.Attrs = attrs
	}
	e.Type = ds.typ
	e.Seq = ds.seq
	ds.seq++
	ds.last = e.TS
	ds.schema.Observe(e)
	ds.mu.Unlock()
	if ds.batch == nil {
		ds.batch = make([]*event.Event, 0, maxBatch)
	}
	if ds.batch = append(ds.batch, e); len(ds.batch) == maxBatch {
		ds.flush()
	}
}

// maxBatch bounds a batch, as the line sources do.
const maxBatch = 512

// flush hands the events released so far to the stream, waiting while
// its consumers are behind (as a pipe's writer would), unless it has
// ended.
func (ds *derivedSource) flush() {
	if len(ds.batch) == 0 {
		return
	}
	select {
	case ds.ch <- ds.batch:
	case <-ds.quit:
	}
	ds.batch = nil // a batch is the consumers' to keep
}

func (ds *derivedSource) URL() string { return ds.url }
func (ds *derivedSource) Live() bool  { return true }

// Read hands the batches to the stream until the producers have all
// finished, or the stream is closed.
func (ds *derivedSource) Read(ctx context.Context, emit func([]*event.Event) bool) error {
	defer ds.Close()
	for {
		select {
		case batch, ok := <-ds.ch:
			if !ok || !emit(batch) {
				return nil
			}
		case <-ctx.Done():
			return nil
		}
	}
}

// Close stops the stream: the producers' events are dropped from then on.
func (ds *derivedSource) Close() error {
	ds.quitOnce.Do(func() { close(ds.quit) })
	return nil
}

func (ds *derivedSource) Schema(f func(*event.Schema)) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	f(ds.schema)
}

func (ds *derivedSource) Unit() time.Duration { return ds.unit() }

func (ds *derivedSource) Stats() source.Stats {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return source.Stats{Read: ds.seq, Used: ds.seq, Time: ds.last, MaxTS: ds.last, HasTime: ds.seq > 0}
}

// mergeOut is the derive.Output of a live derived stream's producers.
type mergeOut struct{ ds *derivedSource }

func (o mergeOut) Event(p *derive.Producer, e *event.Event) { o.ds.event(p, e) }
func (o mergeOut) Flush()                                   { o.ds.flush() }

// Close ends the stream: every producer has finished.
func (o mergeOut) Close() {
	o.ds.flush()
	close(o.ds.ch)
}
