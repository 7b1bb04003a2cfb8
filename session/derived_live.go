package session

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/derive"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/source"
)

// A live derived stream is a source.Live like LOAD '-' reading a pipe: the
// producers' released events are written into it as JSON Lines, so its
// consumers, SHOW STREAMS and the stream's summary work as for any live
// stream. (A source.Live fed by events rather than lines would save the
// encoding; main's source package has no such constructor yet.)

// intoLive starts an INTO query cq over the live stream l in the
// background, as query n, writing into the live derived stream target (nil:
// a new one, created here and started at once, so that its producers never
// wait for it). view and unit are l as cq was compiled over it (unitView).
func (s *Session) intoLive(src *ast.Source, q *ast.Query, l *source.Live, target *entry, cq *sase.Query, view *event.Stream, unit *ast.Duration) error {
	from := s.cat.entries[l.Name()]
	pq, cols, late, w, err := s.producerQuery(src, q, view, cq)
	if err != nil {
		return err
	}
	name := q.Into.Name
	d, dl := (*derivation)(nil), (*source.Live)(nil)
	if target != nil {
		d, dl = target.derived, target.live
	} else {
		pr, pw := io.Pipe()
		unit := from.view().Unit
		if dl, err = source.LiveReader(name, pr, "jsonl", source.Options{TimeUnit: unit}, s.errw); err != nil {
			return err
		}
		go func() {
			<-dl.Done()
			pr.CloseWithError(errDerivedEnded) // writes fail rather than block
		}()
		d = &derivation{unit: unit, merge: derive.New(&liveOut{head: jsonHead(name), w: bufio.NewWriterSize(pw, 32<<10), pw: pw})}
	}
	p, err := d.merge.Add(cols, late, w)
	if errors.Is(err, derive.ErrStarted) {
		return errAt(src, q.Into.Span.Start, "the live derived stream %s has started: a query writes into it only before its first events (in a script, live streams start at its end)", name)
	}
	sub, err := l.Subscribe()
	if err != nil {
		p.Finish() // it would hold the others back
		return err
	}
	// Its type and attributes are known before its first event, so that
	// consumers compile against them.
	dl.Update(func(sc *event.Schema) {
		typ := sc.AddType(name)
		for _, c := range cols {
			sc.Declare(typ, sc.AddAttr(c))
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	lq := &liveQuery{id: len(s.queries) + 1, live: l, text: strings.TrimSpace(q.String()), cancel: cancel, done: make(chan struct{}), into: p, unit: unit}
	s.queries = append(s.queries, lq)
	d.producers = append(d.producers, &producer{from: from, query: lq.id})
	if target == nil {
		s.addLiveEntry(&entry{name: name, kind: Live, live: dl, derived: d}, "derived stream "+name+" ("+d.describe()+")")
		dl.Start()
	}
	s.note("query %d started on %s, into %s", lq.id, l.Name(), name)
	timing := s.set.Timing
	go func() {
		defer close(lq.done)
		defer cancel()
		// One worker: the producer releases derived events by the input's
		// time as it reads it (Follow), which a parallel run reads ahead of
		// the matches it has merged. SET limit is for results: the stream
		// gets every match.
		stats, err := lq.run(ctx, pq, sub, p, nil, 0, 1)
		if err != nil {
			s.bgNote("%s query %d: %v", s.style.errorPrefix(), lq.id, err)
		}
		s.bgNote("(query %d %s: %s)", lq.id, lq.State(), counts(lq.matches.Load(), stats, l.Name(), timing))
	}()
	if s.interactive {
		l.Start()
	}
	return nil
}

var errDerivedEnded = errors.New("the derived stream has ended")

// jsonHead is the start of a derived event's line: {"type":"name","ts":
func jsonHead(name string) []byte {
	return append(event.AppendJSONString([]byte(`{"type":`), name), `,"ts":`...)
}

// liveOut writes a live derived stream's released events, as JSON Lines,
// into the pipe its source.Live reads.
type liveOut struct {
	head []byte
	w    *bufio.Writer
	pw   *io.PipeWriter
	keys map[*derive.Producer][][]byte // each producer's `,"col":`
	buf  []byte
}

func (o *liveOut) Event(p *derive.Producer, e *event.Event) {
	keys, ok := o.keys[p]
	if !ok {
		for _, c := range p.Cols() {
			keys = append(keys, append(event.AppendJSONString([]byte{','}, c), ':'))
		}
		if o.keys == nil {
			o.keys = map[*derive.Producer][][]byte{}
		}
		o.keys[p] = keys
	}
	b := strconv.AppendInt(append(o.buf[:0], o.head...), e.TS, 10)
	for i, v := range e.Attrs {
		if !v.IsAbsent() {
			b = v.AppendJSON(append(b, keys[i]...))
		}
	}
	o.buf = append(b, "}\n"...)
	o.w.Write(o.buf) // fails only once the stream has ended, when nothing reads it
}

func (o *liveOut) Flush() { o.w.Flush() }

func (o *liveOut) Close() {
	o.w.Flush()
	o.pw.Close()
}
