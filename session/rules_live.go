package session

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/derive"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/job"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/source"
)

// The RULE queries on one live stream run as one rulebook: one job reads
// the stream once (one subscription, one decode) and hands each item to
// the rules it reaches (query.RulePass), each rule writing its rows, led by
// a rule column, with its own writer into the book's one place in the
// order of the stream's lines. Each rule is a query of its own for SHOW
// QUERIES and STOP QUERY; a rule added while the book runs reads from the
// next item on. The book reads one item at a time to its end (no batch),
// so that each line keeps the position that released it.
type liveBook struct {
	s      *Session
	live   *source.Live
	lq     *liveQuery      // the book's own, unlisted: counts what it reads, stops it when its stream is stopped
	ctx    context.Context // the book's run's: cancelled, it stops
	cancel context.CancelFunc
	m      *orderedOut
	res    *results

	mu    sync.Mutex // the book's goroutine holds it for each item and pause; what follows is under it, as m is
	pass  query.RulePass
	rules []*liveRule // in pass order
	into  []*liveRule // the rules with INTO: their producers follow the items' time
	dirty []*liveRule // rules with rows not synced
	// full are the rules that reached their limit at this item: the
	// book ends them after it, without a walk of every rule.
	full   []*liveRule
	ended  bool // the book ends: a new rule starts a new book
	timing bool
}

// liveRule is one rule of a live rulebook.
type liveRule struct {
	lq      *liveQuery
	i       int // its number in the pass
	w       output.Writer
	into    *derive.Producer // with INTO: its matches go to it (w), not to the book's lines
	limit   int64
	ended   bool // its run has ended (r.res)
	atLimit bool
	res     query.RuleResult
	err     error // its writer's
	closed  bool  // its summary is out, its done closed
}

// liveRule adds RULE query q, compiled as cq over view, to the rulebook of
// the live stream e, starting the book if e has none running. A rule
// with INTO runs its producer query (derive.Query) as the rule, its
// matches to its producer of the live derived stream into (nil: a new
// one), as intoLive's do, with no limit.
func (s *Session) liveRule(src *ast.Source, q *ast.Query, e, into *entry, cq query.Query, view *event.Stream, unseen []string) error {
	l := e.live
	var b *liveBook
	join := func() (err error) {
		b, err = s.liveBook(l)
		return err
	}
	r := &liveRule{limit: s.set.Limit}
	if q.Into != nil {
		pq, cols, late, w, err := s.producerQuery(src, q, view, cq)
		if err != nil {
			return err
		}
		if r.lq, r.into, err = s.liveProducer(src, q.Into, q, e, into, cols, late, w, join); err != nil {
			return err
		}
		cq, r.w, r.limit = pq, r.into, 0
		b.into = append(b.into, r)
	} else if err := join(); err != nil {
		return err
	}
	defer b.mu.Unlock()
	if r.into == nil {
		sc := schemaOf(cq, view.Schema, view.Unit, l.Update)
		sc.Columns = append([]output.Column{{Name: "rule"}}, sc.Columns...)
		r.lq, r.w = s.addQuery(l, q), s.writer(b.m, sc, 0)
	}
	r.lq.cancel = func() { b.stop(r) }
	b.rules = append(b.rules, r)
	r.i = b.pass.Add(view.Schema, query.Rule{Name: q.Rule.Name, Query: cq}, b.sink(r, q.Rule.Name))
	if r.into == nil { // a producer writes no lines, and is noted as it starts
		// A header (CSV's) goes out now, before any event, in statement order.
		b.dirty = append(b.dirty, r)
		b.m.Sync()
		text := fmt.Sprintf("query %d (rule %s) started on %s", r.lq.id, q.Rule.Name, l.Name())
		if len(unseen) > 0 {
			text += " (not seen yet: " + strings.Join(unseen, ", ") + ")"
		}
		s.note("%s", text)
	}
	if s.interactive || s.startLive {
		l.Start()
	}
	return nil
}

// liveBook returns the rulebook running on l, locked, started if l has
// none running.
func (s *Session) liveBook(l *source.Live) (*liveBook, error) {
	b := s.books[l]
	if b != nil {
		b.mu.Lock()
		if !b.ended {
			return b, nil
		}
		b.mu.Unlock()
	}
	b, err := s.startBook(l)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	return b, nil
}

// startBook starts an empty rulebook on l, its job waiting for items.
func (s *Session) startBook(l *source.Live) (*liveBook, error) {
	m, res, sub, err := s.ordered(l, false, "")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &liveBook{s: s, live: l, m: m, res: res, ctx: ctx, cancel: cancel, timing: s.set.Timing,
		lq: &liveQuery{live: l, cancel: cancel}}
	m.w = bookWriter{b}
	b.pass = s.c.Rulebook(l.Snapshot().Schema, nil).Start(ctx, nil)
	if s.books == nil {
		s.books = map[*source.Live]*liveBook{}
	}
	s.books[l] = b
	j := job.New(job.Config{Run: b.run, Source: &liveSource{sub: sub, live: l, q: b.lq}, Sink: lockedOut{b}, Live: true})
	j.Start(ctx)
	go func() {
		_, err := j.Wait()
		if rerr := res.release(); err == nil {
			err = rerr
		}
		if err != nil {
			s.bgNote("%s rulebook on %s: %v", s.style.errorPrefix(), l.Name(), err)
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, r := range b.rules {
			if !r.closed {
				b.summary(r)
			}
		}
	}()
	return b, nil
}

// sink is rule r's: its rows, led by its name, to its writer, until its
// limit or its stop.
func (b *liveBook) sink(r *liveRule, name string) query.Sink {
	row := []query.Cell{{Value: event.StringValue(name)}}
	return func(cells []query.Cell) bool {
		if r.ended || b.ctx.Err() != nil {
			return false // stopped: the end of its run would release incomplete matches
		}
		if r.into != nil {
			// Its events are the derived stream's, not the book's lines
			// (its producer syncs at each pause), and it has no limit.
			if r.err = r.into.Row(cells); r.err != nil {
				return false
			}
			r.lq.matches.Add(1)
			return true
		}
		row = append(row[:1], cells...)
		if r.err = r.w.Row(row); r.err != nil {
			return false
		}
		b.m.rows = true
		if len(b.dirty) == 0 || b.dirty[len(b.dirty)-1] != r {
			b.dirty = append(b.dirty, r)
		}
		n := r.lq.matches.Add(1)
		if r.atLimit = r.limit > 0 && n >= r.limit; r.atLimit {
			b.full = append(b.full, r)
		}
		return !r.atLimit
	}
}

// run is the book's job's: each item to the rules it reaches, in order.
func (b *liveBook) run(ctx context.Context, events iter.Seq[*event.Event], _ func([]query.Cell) bool) (int64, error) {
	var n int64
	for ev := range events {
		b.mu.Lock()
		b.m.step()
		for _, r := range b.into {
			if !r.ended {
				// As Follow does alone: every rule has read every item
				// before ev (Push and Flush above), so no match to come
				// is older than what ev's time releases.
				r.into.Advance(ev.TS)
			}
		}
		b.pass.Push(ev)
		b.pass.Flush()
		for _, r := range b.full {
			if !r.ended {
				b.end(r, EndedAtLimit)
			}
		}
		b.full = b.full[:0]
		ended := b.ended
		b.mu.Unlock()
		if !ev.IsTick() {
			n++
		}
		if ended {
			break
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended = true
	if ctx.Err() == nil {
		b.m.pos = math.MaxInt64 // the stream's end: what the run's end releases
	}
	results := b.pass.Finish()
	for _, r := range b.rules {
		if r.ended {
			continue
		}
		state := Ended
		switch res := results[r.i]; {
		case ctx.Err() != nil:
			state = Stopped
		case res.Err != nil || r.err != nil:
			state = Failed
		case r.atLimit:
			state = EndedAtLimit
		}
		b.finish(r, results[r.i], state)
	}
	return n, nil
}

// end ends rule r alone, in state: its run, its writer, its lines handed
// over; its summary follows at once unless it was the book's last rule,
// which ends the book.
func (b *liveBook) end(r *liveRule, state State) {
	r.ended = true // what its run's end releases is not written: a stop's is not complete
	b.finish(r, b.pass.End(r.i), state)
	b.m.tag()
	b.m.handOver(b.m.pos, false)
	if !slices.ContainsFunc(b.rules, func(r *liveRule) bool { return !r.ended }) {
		b.ended = true // its summary follows the book's end, once its lines are out
		return
	}
	b.summary(r)
}

// finish records the end of rule r's run and writes its writer's end.
func (b *liveBook) finish(r *liveRule, res query.RuleResult, state State) {
	r.ended, r.res = true, res
	if err := r.w.Finish(); r.err == nil {
		r.err = err
	}
	if res.Stats != nil {
		r.lq.events.Store(res.Stats.Events)
	}
	r.lq.state.Store(int32(state))
}

// summary notes how rule r ended and closes its done.
func (b *liveBook) summary(r *liveRule) {
	s := b.s
	state := r.lq.State()
	if err := errors.Join(r.res.Err, r.err); err != nil && state != Stopped {
		s.bgNote("%s query %d: %v", s.style.errorPrefix(), r.lq.id, err)
	}
	stats := r.res.Stats
	if stats == nil {
		stats = &query.Stats{}
	}
	s.bgNote("(query %d %s: %s)", r.lq.id, state, counts(r.lq.matches.Load(), stats, b.live.Name(), b.timing))
	r.closed = true
	close(r.lq.done)
}

// stop is STOP QUERY on rule r: it ends alone, the others go on; the last
// one stops the book.
func (b *liveBook) stop(r *liveRule) {
	b.mu.Lock()
	if !r.ended && !b.ended {
		b.end(r, Stopped)
	}
	last := b.ended
	b.mu.Unlock()
	if last {
		b.cancel()
	}
}

// bookWriter is the book's writer in the order: its rules' writers.
type bookWriter struct{ b *liveBook }

func (w bookWriter) Row([]query.Cell) error { return errors.New("a rulebook writes its rules' rows") }

// Sync syncs the rules that have rows; it is the book's pause, where the
// rules' event counts are published too (SHOW QUERIES).
func (w bookWriter) Sync() error {
	b := w.b
	var errs []error
	for _, r := range b.dirty {
		if !r.ended {
			errs = append(errs, r.w.Sync())
		}
	}
	clear(b.dirty)
	b.dirty = b.dirty[:0]
	for _, r := range b.into {
		if !r.ended {
			errs = append(errs, r.w.Sync()) // what its producer released goes out, as alone at each pause
		}
	}
	for _, r := range b.rules {
		if !r.ended {
			r.lq.events.Store(b.pass.Events(r.i))
		}
	}
	return errors.Join(errs...)
}

// Finish: the rules' writers have finished as their runs ended.
func (w bookWriter) Finish() error { return nil }

// lockedOut is the book's sink for its job, which calls it at pauses and
// at the end, under the book's lock.
type lockedOut struct{ b *liveBook }

func (o lockedOut) Row([]query.Cell) error { return errors.New("a rulebook writes its rules' rows") }

func (o lockedOut) Sync() error {
	o.b.mu.Lock()
	defer o.b.mu.Unlock()
	return o.b.m.Sync()
}

// Finish waits until the book's lines are out: not under the lock, which
// the order's release does not need.
func (o lockedOut) Finish() error { return o.b.m.Finish() }
