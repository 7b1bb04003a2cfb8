package session

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"runtime"
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

// The RULE queries on one live stream run as one rulebook, its rules
// shared among passes (SET workers): each pass is a job that reads the
// stream (a subscription of its own to the stream's one decode) and hands
// each item to its rules that it reaches (query.RulePass), one item at a
// time (no batch), so that each line keeps the position that released
// it; the passes do not wait for each other. Each rule writes its rows,
// led by a rule column, with its own writer; its pass puts each item's
// rows into the order of the stream's lines rule after rule, each tagged
// with its rule's query number, so that the lines go out by position,
// then query number, as separate live queries' do, however the rules are
// shared. Each rule is a query of its own for SHOW QUERIES and STOP
// QUERY. The rules added before the book reads its first item are shared
// among the passes then, as a loaded book's are (query.Rulebook.Shares);
// a rule added later joins the pass with the fewest rules running and
// reads from that pass's next item on.
type liveBook struct {
	s       *Session
	live    *source.Live
	ctx     context.Context // the book's run's: cancelled, it stops
	cancel  context.CancelFunc
	timing  bool
	workers int         // as SET said when the book started: 0 is auto
	passes  []*bookPass // as many as workers (auto: the CPUs, of which place may leave some idle)

	mu      sync.Mutex    // to add and stop rules, and to place them; taken before a pass's
	schema  *event.Schema // of the rule added last: the passes' indexes read it
	pending []*liveRule   // the rules added before the book's first item, until place shares them
	placed  bool

	// Under lmu, taken last: the rules running, and whether the book has
	// ended (its last rule has: a new rule starts a new book).
	lmu     sync.Mutex
	running int
	ended   bool
}

// bookPass is one pass of a live rulebook: its job's goroutine holds mu
// for each item and pause; what follows mu is under it, as m is.
type bookPass struct {
	b  *liveBook
	m  *orderedOut
	lq *liveQuery // unlisted: counts what it reads, stops the book when its stream is stopped

	mu      sync.Mutex
	pass    query.RulePass // nil until placed
	idle    bool           // placed without rules under workers = auto: it ends
	rules   []*liveRule    // in pass order, which is query order
	into    []*liveRule    // the rules with INTO: their producers follow the items' time
	running int            // its rules not ended
	dirty   []*liveRule    // rules with rows not put into m
	// full are the rules that reached their limit at this item: the
	// pass ends them after it, without a walk of every rule.
	full []*liveRule
}

// liveRule is one rule of a live rulebook.
type liveRule struct {
	lq      *liveQuery
	rule    query.Rule
	p       *bookPass // its pass, once placed
	i       int       // its number in the pass
	out     bytes.Buffer
	w       output.Writer    // writing into out, which its pass puts into the order
	into    *derive.Producer // with INTO: its matches go to it (w), not to the book's lines
	limit   int64
	dirty   bool // in its pass's dirty
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
	} else if err := join(); err != nil {
		return err
	}
	defer b.mu.Unlock()
	if r.into == nil {
		sc := schemaOf(cq, view.Schema, view.Unit, l.Update)
		sc.Columns = append([]output.Column{{Name: "rule"}}, sc.Columns...)
		r.lq, r.w = s.addQuery(l, q), s.writer(&r.out, sc, 0)
	}
	r.rule = query.Rule{Name: q.Rule.Name, Query: cq}
	r.lq.cancel = func() { b.stop(r) }
	b.schema = view.Schema
	var p *bookPass
	if b.placed {
		p = b.leastLoaded()
		r.i = p.pass.Add(view.Schema, r.rule, b.sink(r))
		p.take(r)
	} else {
		b.pending = append(b.pending, r)
		p = b.passes[0] // none has read an item: any pass's place in the order is the book's
		p.mu.Lock()
	}
	defer p.mu.Unlock()
	if r.into == nil { // a producer writes no lines, and is noted as it starts
		// A header (CSV's) goes out now, before any event, in statement order.
		p.mark(r)
		p.m.Sync()
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
// none running, with one more rule counted.
func (s *Session) liveBook(l *source.Live) (*liveBook, error) {
	b := s.books[l]
	if b != nil {
		b.mu.Lock()
		if b.join() {
			return b, nil
		}
		b.mu.Unlock()
	}
	b, err := s.startBook(l)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.join()
	return b, nil
}

// startBook starts an empty rulebook on l, its passes' jobs waiting for
// items: as many as SET workers says, or as the CPUs for auto, which
// place decides among.
func (s *Session) startBook(l *source.Live) (*liveBook, error) {
	n := s.set.Workers
	if n == 0 {
		n = runtime.NumCPU()
	}
	ms, res, subs, err := s.ordered(l, false, "", n)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &liveBook{s: s, live: l, ctx: ctx, cancel: cancel, timing: s.set.Timing, workers: s.set.Workers}
	jobs := make([]*job.Job, n)
	for k, m := range ms {
		p := &bookPass{b: b, m: m, lq: &liveQuery{live: l, cancel: cancel}}
		m.w = bookWriter{p}
		b.passes = append(b.passes, p)
		jobs[k] = job.New(job.Config{Run: p.run, Source: &liveSource{sub: subs[k], live: l, q: p.lq}, Sink: lockedOut{p}, Live: true})
	}
	if s.books == nil {
		s.books = map[*source.Live]*liveBook{}
	}
	s.books[l] = b
	for _, j := range jobs {
		j.Start(ctx)
	}
	go func() {
		var err error
		for _, j := range jobs {
			if _, jerr := j.Wait(); err == nil {
				err = jerr
			}
		}
		if rerr := res.release(); err == nil {
			err = rerr
		}
		if err != nil {
			s.bgNote("%s rulebook on %s: %v", s.style.errorPrefix(), l.Name(), err)
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		var open []*liveRule
		for _, p := range b.passes {
			for _, r := range p.rules {
				if !r.closed {
					open = append(open, r)
				}
			}
		}
		slices.SortFunc(open, func(x, y *liveRule) int { return cmp.Compare(x.lq.id, y.lq.id) })
		for _, r := range open {
			b.summary(r)
		}
	}()
	return b, nil
}

// place shares the rules added so far among the passes, once, as the
// book reads its first item (or ends, or stops a rule, before): they are
// known then, in a script all of them, and each pass indexes its share
// once. Under workers = auto the passes the rules do not need end; under
// workers = N each pass stays, for the rules added later. Under b.mu.
func (b *liveBook) place() {
	if b.placed {
		return
	}
	b.placed = true
	schema := b.schema // a book starts with its first rule
	rules := make([]query.Rule, len(b.pending))
	for i, r := range b.pending {
		rules[i] = r.rule
	}
	book := b.s.c.Rulebook(schema, rules)
	workers := b.workers
	if workers == 0 {
		workers = book.AutoWorkers()
	}
	shares := book.Shares(min(workers, len(b.passes)))
	for k, p := range b.passes {
		p.mu.Lock()
		switch {
		case k < len(shares):
			sh := shares[k]
			sinks := make([]query.Sink, len(sh.Rules))
			for j, i := range sh.Rules {
				r := b.pending[i]
				r.i, sinks[j] = j, b.sink(r)
				p.take(r)
			}
			p.pass = sh.Book.Start(b.ctx, sinks)
		case b.workers == 0:
			p.idle = true
		default:
			p.pass = b.s.c.Rulebook(schema, nil).Start(b.ctx, nil)
		}
		p.mu.Unlock()
	}
	b.pending = nil
}

// take makes rule r, number r.i in the pass, the pass's.
func (p *bookPass) take(r *liveRule) {
	r.p = p
	p.rules = append(p.rules, r)
	if r.into != nil {
		p.into = append(p.into, r)
	}
	p.running++
}

// leastLoaded is the pass with the fewest rules running, locked: a rule
// added once the book runs joins it. Under b.mu.
func (b *liveBook) leastLoaded() *bookPass {
	var best *bookPass
	least := math.MaxInt
	for _, p := range b.passes {
		p.mu.Lock()
		if !p.idle && p.running < least {
			best, least = p, p.running
		}
		p.mu.Unlock()
	}
	best.mu.Lock()
	return best
}

// join counts a rule added to the book, unless the book has ended.
func (b *liveBook) join() bool {
	b.lmu.Lock()
	defer b.lmu.Unlock()
	if b.ended {
		return false
	}
	b.running++
	return true
}

// isEnded says whether the book's last rule has ended.
func (b *liveBook) isEnded() bool {
	b.lmu.Lock()
	defer b.lmu.Unlock()
	return b.ended
}

// sink is rule r's: its rows, led by its name, to its writer, until its
// limit or its stop. Its pass calls it, under its lock.
func (b *liveBook) sink(r *liveRule) query.Sink {
	row := []query.Cell{{Value: event.StringValue(r.rule.Name)}}
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
		p := r.p
		p.m.rows = true
		p.mark(r)
		n := r.lq.matches.Add(1)
		if r.atLimit = r.limit > 0 && n >= r.limit; r.atLimit {
			p.full = append(p.full, r)
		}
		return !r.atLimit
	}
}

// mark notes that rule r has lines for its pass to put into the order.
func (p *bookPass) mark(r *liveRule) {
	if !r.dirty {
		r.dirty = true
		p.dirty = append(p.dirty, r)
	}
}

// run is the pass's job's: each item to the rules it reaches, in order.
func (p *bookPass) run(ctx context.Context, events iter.Seq[*event.Event], _ func([]query.Cell) bool) (int64, error) {
	b := p.b
	var n int64
	for ev := range events {
		p.lockPlaced()
		if p.idle {
			p.mu.Unlock()
			break
		}
		p.m.step()
		for _, r := range p.into {
			if !r.ended {
				// As Follow does alone: every rule of the pass has read
				// every item before ev (Push and Flush below), so no
				// match to come is older than what ev's time releases.
				r.into.Advance(ev.TS)
			}
		}
		p.pass.Push(ev)
		p.pass.Flush()
		for _, r := range p.full {
			if !r.ended {
				p.end(r, EndedAtLimit)
			}
		}
		p.full = p.full[:0]
		ended := b.ctx.Err() != nil // its last rule has ended (end), or it stops; not lmu, which the passes would share at each item
		p.mu.Unlock()
		if !ev.IsTick() {
			n++
		}
		if ended {
			break
		}
	}
	p.lockPlaced()
	defer p.mu.Unlock()
	if p.idle {
		return n, nil
	}
	if ctx.Err() == nil {
		p.m.pos = math.MaxInt64 // the stream's end: what the run's end releases
	}
	results := p.pass.Finish()
	for _, r := range p.rules {
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
		p.finish(r, results[r.i], state)
	}
	return n, p.sync()
}

// lockPlaced locks the pass once the book's rules are placed.
func (p *bookPass) lockPlaced() {
	p.mu.Lock()
	if p.pass == nil && !p.idle {
		p.mu.Unlock()
		p.b.mu.Lock()
		p.b.place()
		p.b.mu.Unlock()
		p.mu.Lock()
	}
}

// end ends rule r alone, in state: its run, its writer, its lines put
// into the order and handed over; its summary follows at once unless it
// was the book's last rule, which ends the book. Under p.mu.
func (p *bookPass) end(r *liveRule, state State) {
	b := p.b
	r.ended = true // what its run's end releases is not written: a stop's is not complete
	p.finish(r, p.pass.End(r.i), state)
	p.m.Sync()
	p.running--
	b.lmu.Lock()
	b.running--
	last := b.running == 0
	b.ended = b.ended || last
	b.lmu.Unlock()
	if last {
		b.cancel() // every pass ends; its summary follows, once its lines are out
		return
	}
	b.summary(r)
}

// finish records the end of rule r's run and writes its writer's end.
func (p *bookPass) finish(r *liveRule, res query.RuleResult, state State) {
	r.ended, r.res = true, res
	if err := r.w.Finish(); r.err == nil {
		r.err = err
	}
	p.mark(r)
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
	defer b.mu.Unlock()
	b.place() // a rule stopped before the book's first item ends in its pass
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !r.ended && !b.isEnded() {
		p.end(r, Stopped)
	}
}

// sync puts the lines of the rules that have some into the order, in
// query order, each syncing its writer first unless its run has ended.
func (p *bookPass) sync() error {
	slices.SortFunc(p.dirty, func(x, y *liveRule) int { return cmp.Compare(x.lq.id, y.lq.id) })
	var errs []error
	for _, r := range p.dirty {
		if !r.ended {
			errs = append(errs, r.w.Sync())
		}
		if r.out.Len() > 0 {
			p.m.put(r.lq.id, r.out.Bytes())
			r.out.Reset()
		}
		r.dirty = false
	}
	clear(p.dirty)
	p.dirty = p.dirty[:0]
	for _, r := range p.into {
		if !r.ended {
			errs = append(errs, r.w.Sync()) // what its producer released goes out, as alone at each pause
		}
	}
	return errors.Join(errs...)
}

// bookWriter is a pass's writer in the order: its rules' writers.
type bookWriter struct{ p *bookPass }

func (w bookWriter) Row([]query.Cell) error { return errors.New("a rulebook writes its rules' rows") }

// Sync puts the rules' lines into the order (orderedOut's Sync and step
// call it).
func (w bookWriter) Sync() error { return w.p.sync() }

// Finish: the rules' writers have finished as their runs ended.
func (w bookWriter) Finish() error { return nil }

// lockedOut is a pass's sink for its job, which calls it at pauses and
// at the end.
type lockedOut struct{ p *bookPass }

func (o lockedOut) Row([]query.Cell) error { return errors.New("a rulebook writes its rules' rows") }

// Sync is the pass's pause: its lines are handed over, and its rules'
// event counts published (SHOW QUERIES).
func (o lockedOut) Sync() error {
	p := o.p
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.m.Sync()
	if p.pass != nil {
		for _, r := range p.rules {
			if !r.ended {
				r.lq.events.Store(p.pass.Events(r.i))
			}
		}
	}
	return err
}

// Finish waits until the pass's lines are out: not under the lock, which
// the order's release does not need.
func (o lockedOut) Finish() error { return o.p.m.Finish() }
