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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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
// the items it has ready (up to bookBatch, never waiting for more) to
// its rules that they reach (query.RulePass) as a batch, each rule
// reading its share in one go, as a loaded book's do; the passes do not
// wait for each other. Each rule writes its rows, led by a rule column,
// with its own writer, each row tagged with the item that released it
// (RulePass.Item); at the batch's end its pass puts the rows into the
// order of the stream's lines item by item, each item's rule after rule,
// tagged with its rule's query number, so that the lines go out by
// position, then query number, as separate live queries' do, however the
// rules are shared and the items batched. Each rule is a query of its
// own for SHOW QUERIES and STOP QUERY. The rules added before the book
// reads its first item are shared among the passes then, as a loaded
// book's are (query.Rulebook.Shares); a rule added later joins the pass
// with the fewest rules running and reads from that pass's next item on
// (the items the pass has taken are read by its rules first).
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
	// ctx is its rules' runs': cancelled at its end when the book stops,
	// after the rules have read every item it pushed, so that a stop
	// neither loses the matches of a batch read nor has the end release
	// incomplete ones.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	pass    query.RulePass // nil until placed
	idle    bool           // placed without rules under workers = auto: it ends
	rules   []*liveRule    // in pass order, which is query order
	apart   []*liveRule    // the rules whose rows go elsewhere (INTO, SET output), synced at each pause; INTO producers follow the items' time
	running int            // its rules not ended
	dirty   []*liveRule    // rules with rows not put into m
	// full are the rules that reached their limit in this batch: the
	// pass ends them after it (settle), without a walk of every rule.
	full []*liveRule
	// The items pushed to pass (its Item numbers) and the first one whose
	// lines are not in the order yet (merge): the item numbered base is
	// at the order's position m.pos+1.
	pushed, base int64
	// The last two times of the items pushed, which the INTO rules'
	// producers are told once their rules have read them (merge).
	prevTS, lastTS int64
	atEnd          bool        // the pass is finishing: what its rules release is the stream's end's
	retired        []*liveRule // ended, their summaries to note once their lines are handed over
	last           bool        // retired holds the book's last rule
	slots          []int32     // merge's: by item, where its rows start in rows
	rows           []ruleRows  // merge's: the rules' rows, by item, each item's in query order
}

// liveRule is one rule of a live rulebook.
type liveRule struct {
	lq    *liveQuery
	rule  query.Rule
	p     *bookPass // its pass, once placed
	i     int       // its number in the pass
	out   bytes.Buffer
	w     output.Writer    // writing into out, which its pass puts into the order
	into  *derive.Producer // with INTO: its matches go to it (w), not to the book's lines
	own   bool             // under SET output: its rows go to a sink of its own (w), as alone, not to the book's lines
	limit int64
	// Its rows in out, by the item (RulePass.Item) that released them:
	// segs says where each item's rows end; open, that rows of item x
	// follow the last seg's end (tagged), in out or still in w.
	segs    []rowSeg
	tagged  int
	x       int64
	open    bool
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
// one), as intoLive's do, with no limit; under SET output a rule writes
// its rows to a sink of its own, as the query alone does.
func (s *Session) liveRule(src *ast.Source, q *ast.Query, e, into *entry, cq query.Query, view *event.Stream, unseen []string) error {
	l := e.live
	var b *liveBook
	join := func() (err error) {
		b, err = s.liveBook(l)
		return err
	}
	r := &liveRule{limit: s.set.Limit}
	switch {
	case q.Into != nil:
		pq, cols, late, w, err := s.producerQuery(src, q, view, cq)
		if err != nil {
			return err
		}
		if r.lq, r.into, err = s.liveProducer(src, q.Into, q, e, into, cols, late, w, join); err != nil {
			return err
		}
		cq, r.w, r.limit = pq, r.into, 0
	case s.set.Output != "":
		// A sink of its own, opened as the query alone opens it (liveWriter).
		sc := schemaOf(cq, view.Schema, view.Unit, l.Update)
		w, err := output.Open(context.Background(), s.set.Output, output.SinkConfig{Query: "q" + strconv.Itoa(len(s.queries)+1), Schema: sc, Errors: s.bgErrw})
		if err != nil {
			return errAt(src, q.Span.Start, "%v", err)
		}
		if err := join(); err != nil {
			w.Finish()
			return err
		}
		r.w, r.own = w, true
	default:
		if err := join(); err != nil {
			return err
		}
	}
	defer b.mu.Unlock()
	switch {
	case r.own:
		r.lq = s.addQuery(l, q)
	case r.into == nil:
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
	if r.into == nil { // a producer is noted as it starts
		if !r.own { // a rule whose rows go to its sink has no lines
			// A header (CSV's) goes out now, before any event, in statement order.
			p.mark(r)
			p.m.Sync()
		}
		text := fmt.Sprintf("query %d (rule %s) started on %s", r.lq.id, q.Rule.Name, l.Name())
		if len(unseen) > 0 {
			text += " (not seen yet: " + strings.Join(unseen, ", ") + ")"
		}
		s.note("%s", text)
	}
	p.announce() // the rules that its pass's sync ended at their limits
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
		p := &bookPass{b: b, m: m, lq: &liveQuery{live: l, cancel: cancel}, prevTS: math.MinInt64, lastTS: math.MinInt64}
		p.ctx, p.cancel = context.WithCancel(context.Background())
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
			p.pass = sh.Book.Start(p.ctx, sinks)
		case b.workers == 0:
			p.idle = true
		default:
			p.pass = b.s.c.Rulebook(schema, nil).Start(p.ctx, nil)
		}
		p.mu.Unlock()
	}
	b.pending = nil
}

// take makes rule r, number r.i in the pass, the pass's.
func (p *bookPass) take(r *liveRule) {
	r.p = p
	p.rules = append(p.rules, r)
	if r.into != nil || r.own {
		p.apart = append(p.apart, r)
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

// sink is rule r's: its rows, led by its name, to its writer, each
// tagged with the item that released it, until its limit or its stop.
// Its pass calls it, under its lock.
func (b *liveBook) sink(r *liveRule) query.Sink {
	row := []query.Cell{{Value: event.StringValue(r.rule.Name)}}
	return func(cells []query.Cell) bool {
		p := r.p
		if r.ended || p.ctx.Err() != nil {
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
		if r.own {
			if r.err = r.w.Row(cells); r.err != nil {
				return false
			}
		} else {
			if p.m.lines && !p.atEnd { // a table's rows go out at a pause, as a page
				if x := p.pass.Item(); x != r.x || !r.open {
					if r.err = r.close(); r.err != nil {
						return false
					}
					r.x, r.open = x, true
				}
			}
			row = append(row[:1], cells...)
			if r.err = r.w.Row(row); r.err != nil {
				return false
			}
			p.mark(r)
		}
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

// bookBatch is how many items a pass pushes to its rules before they
// read them (0: defaultBookBatch): each rule reads its share of a batch
// in one go, its state hot in the cache, where an item at a time missed
// the cache at each rule an item reached (1,000 pair rules: about twice
// the CPU an event, 2.5 µs where a batch takes 1.2). A batch is what the
// stream has ready: a pass never waits for more, its rules reading what
// it pushed at each pause. Tests set it, to compare batches of every
// size.
var bookBatch atomic.Int64

const defaultBookBatch = 4096

// run is the pass's job's: the items to the rules they reach, in order,
// a batch at a time.
func (p *bookPass) run(ctx context.Context, events iter.Seq[*event.Event], _ func([]query.Cell) bool) (int64, error) {
	b := p.b
	defer p.cancel()
	batch := bookBatch.Load()
	if batch <= 0 {
		batch = defaultBookBatch
	}
	var n int64
	for ev := range events {
		p.lockPlaced()
		if p.idle {
			p.mu.Unlock()
			break
		}
		if ev.TS > p.lastTS {
			p.prevTS, p.lastTS = p.lastTS, ev.TS
		}
		p.pass.Push(ev)
		if p.pushed++; p.pushed-p.base >= batch {
			p.settle()
			p.announce()
		}
		ended := b.ctx.Err() != nil // its last rule has ended (announce), or it stops; not lmu, which the passes would share at each item
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
	p.settle() // what was pushed is read whole, even when the book stops
	p.announce()
	if ctx.Err() == nil {
		p.m.pos = math.MaxInt64 // the stream's end: what the run's end releases
	} else {
		p.cancel() // stopped: the end releases no incomplete match
	}
	p.atEnd = true
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
		p.finish(r, results[r.i], state, -1)
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

// settle has the rules read the items pushed, ends those that reached
// their limits (their ends at the items that brought them there), and
// puts the rows into the order (merge). Under p.mu.
func (p *bookPass) settle() {
	if p.pass == nil {
		return
	}
	p.pass.Flush()
	for _, r := range p.full {
		if !r.ended {
			x := int64(-1)
			if p.m.lines {
				x = r.x
			}
			p.retire(r, EndedAtLimit, x)
		}
	}
	clear(p.full)
	p.full = p.full[:0]
	p.merge()
}

// rowSeg is where a rule's rows of item x end in its out.
type rowSeg struct {
	x   int64
	end int
}

// ruleRows are a rule's rows of one item: out's bytes from to to.
type ruleRows struct {
	r        *liveRule
	from, to int
}

// merge puts the rows the rules wrote for the items pushed since the last
// merge into the order: item by item (the order's step), each item's rule
// after rule in query order (put), bucketed by item (a counting sort,
// each rule's rows keeping their order). The INTO rules, which have read
// the items, then tell their producers the items' time, as each item's
// would have before it (derive.Producer.Advance): the last two times
// leave each producer as the items one by one would have.
func (p *bookPass) merge() {
	n := int(p.pushed - p.base)
	if n == 0 {
		return
	}
	slices.SortFunc(p.dirty, func(x, y *liveRule) int { return cmp.Compare(x.lq.id, y.lq.id) })
	slots := slices.Grow(p.slots[:0], n+1)[:n+1]
	clear(slots)
	for _, r := range p.dirty {
		if err := r.close(); err != nil && r.err == nil {
			r.err = err
		}
		for _, sg := range r.segs {
			slots[sg.x-p.base+1]++
		}
	}
	for k := 1; k <= n; k++ {
		slots[k] += slots[k-1]
	}
	rows := slices.Grow(p.rows[:0], int(slots[n]))[:slots[n]]
	for _, r := range p.dirty {
		from := 0
		for _, sg := range r.segs {
			k := sg.x - p.base
			rows[slots[k]] = ruleRows{r, from, sg.end}
			slots[k]++
			from = sg.end
		}
	}
	from := int32(0) // slots[k] is now where item k's rows end
	for k := range n {
		p.m.step()
		for _, rr := range rows[from:slots[k]] {
			p.m.put(rr.r.lq.id, rr.r.out.Bytes()[rr.from:rr.to])
		}
		from = slots[k]
	}
	clear(rows)
	p.rows, p.slots, p.base = rows[:0], slots[:0], p.pushed
	kept := p.dirty[:0]
	for _, r := range p.dirty {
		if len(r.segs) > 0 {
			r.out.Next(r.tagged)
			r.segs, r.tagged = r.segs[:0], 0
		}
		if r.out.Len() > 0 || !p.m.lines { // a table's rows wait in its writer for a pause
			kept = append(kept, r)
		} else {
			r.dirty = false
		}
	}
	clear(p.dirty[len(kept):])
	p.dirty = kept
	for _, r := range p.apart {
		if r.into != nil && !r.ended {
			if p.prevTS != math.MinInt64 {
				r.into.Advance(p.prevTS)
			}
			r.into.Advance(p.lastTS)
		}
	}
}

// close tags the rows rule r wrote for item x, synced from its writer
// into out.
func (r *liveRule) close() error {
	if !r.open {
		return nil
	}
	r.open = false
	err := r.w.Sync()
	if n := r.out.Len(); n > r.tagged {
		r.segs = append(r.segs, rowSeg{r.x, n})
		r.tagged = n
	}
	return err
}

// retire ends rule r alone, in state: its run, and its writer, whose end
// is tagged with item x (-1: it goes out at the order's position at the
// next sync). Its summary follows at announce. Under p.mu.
func (p *bookPass) retire(r *liveRule, state State, x int64) {
	b := p.b
	r.ended = true // what its run's end releases is not written: a stop's is not complete
	p.finish(r, p.pass.End(r.i), state, x)
	p.running--
	b.lmu.Lock()
	b.running--
	last := b.running == 0
	b.ended = b.ended || last
	b.lmu.Unlock()
	p.last = p.last || last
	p.retired = append(p.retired, r)
}

// announce hands over the lines of the rules retired, then notes their
// summaries; after the book's last rule, every pass ends instead, and the
// summaries follow once the lines are out. Under p.mu.
func (p *bookPass) announce() {
	if len(p.retired) == 0 {
		return
	}
	p.m.Sync()
	if p.last {
		p.b.cancel()
	} else {
		for _, r := range p.retired {
			p.b.summary(r)
		}
	}
	clear(p.retired)
	p.retired = p.retired[:0]
}

// finish records the end of rule r's run and writes its writer's end,
// tagged with item x (-1: untagged).
func (p *bookPass) finish(r *liveRule, res query.RuleResult, state State, x int64) {
	r.ended, r.res = true, res
	err := r.close() // its rows are tagged with their items before its writer's end
	if ferr := r.w.Finish(); err == nil {
		err = ferr
	}
	if r.err == nil {
		r.err = err
	}
	if n := r.out.Len(); x >= 0 && n > r.tagged {
		r.segs = append(r.segs, rowSeg{x, n})
		r.tagged = n
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

// stop is STOP QUERY on rule r: it ends alone, after the items its pass
// has pushed, the others go on; the last one stops the book.
func (b *liveBook) stop(r *liveRule) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.place() // a rule stopped before the book's first item ends in its pass
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.ended || b.isEnded() {
		return
	}
	p.settle()
	if !r.ended {
		p.retire(r, Stopped, -1)
	}
	p.announce()
}

// sync has the rules read the items pushed and puts their lines into the
// order (settle), then the lines of the rules that have some left (a
// header, a writer's end, a table's page), in query order, each syncing
// its writer first unless its run has ended.
func (p *bookPass) sync() error {
	p.settle()
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
	for _, r := range p.apart {
		if !r.ended {
			errs = append(errs, r.w.Sync()) // what its producer released or its sink holds goes out, as alone at each pause
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
	p.announce()
	return err
}

// Finish waits until the pass's lines are out: not under the lock, which
// the order's release does not need.
func (o lockedOut) Finish() error { return o.p.m.Finish() }
