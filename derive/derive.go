// Package derive turns a query's matches into the events of a derived
// stream (`RETURN ... INTO name`, docs/LANGUAGE.md "Derived streams").
// Each match becomes an event of type name: its attributes are the RETURN
// columns, its ts is the ts of the match's last positive event, or of its
// last closure element if later.
//
// Matches complete out of ts order (a negated end or a trailing closure
// waits for the window to pass), but a stream must be ordered by ts. So
// each producer holds its events in a small heap and releases them once
// its input's time has passed them by its delay: W for a query that may
// complete late, else 0. Several producers may write into one stream; it
// releases an event once every producer has passed it. Equal ts keep the
// producers' order, then the order in which each emitted its matches.
package derive

import (
	"cmp"
	"errors"
	"iter"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/minheap"
	"github.com/sase-cep/sase/query"
)

// Hidden column names: a producer's query returns, after its own columns,
// the events that fix a match's ts. NUL cannot be typed in a name, so they
// never clash with a column of the query.
const (
	hiddenLast    = "\x00last"
	hiddenClosure = "\x00closure"
)

// Query returns q as a producer runs it: its RETURN columns, then the last
// positive variable's event and, for a pattern that ends with a closure,
// that closure's list; for a v3 pattern (LANGUAGE.md §9), whose last bound
// event may be any variable's, every positive variable's event or list
// (an unbound one is null). q must have a RETURN list; it is not changed.
func Query(q *ast.Query) *ast.Query {
	comps := q.Pattern.Components
	items := slices.Clip(q.Return.Items)
	hide := func(name, alias string) {
		items = append(items, &ast.ReturnItem{Expr: &ast.VarRef{Var: &ast.Ident{Name: name}}, Alias: &ast.Ident{Name: alias}})
	}
	p := *q
	ret := *q.Return
	p.Return = &ret
	if q.Pattern.Root != nil {
		seen := map[string]bool{} // OR branches may share a variable
		for i, c := range comps {
			if !c.Negated && !seen[c.VarName()] {
				seen[c.VarName()] = true
				hide(c.VarName(), hiddenLast+strconv.Itoa(i))
			}
		}
		ret.Items = items
		return &p
	}
	for i := len(comps) - 1; i >= 0; i-- {
		if c := comps[i]; !c.Negated && c.Closure == nil {
			hide(c.VarName(), hiddenLast)
			break
		}
	}
	if last := comps[len(comps)-1]; last.Closure != nil && !last.Negated {
		hide(last.VarName(), hiddenClosure)
	}
	ret.Items = items
	return &p
}

// Output receives a derived stream's events in ts order. Its methods are
// called one at a time, under the stream's lock.
type Output interface {
	// Event is a released event of producer p; it stays valid.
	Event(p *Producer, e *event.Event)
	// Flush is called when a producer waits for input (a live one).
	Flush()
	// Close is called once every producer has finished.
	Close()
}

// ErrStarted is Add's error once the stream has released an event (a later
// producer's events could be older) or every producer has finished.
var ErrStarted = errors.New("the derived stream has started")

// Stream merges the derived events of its producers into one sequence in
// ts order.
type Stream struct {
	mu       sync.Mutex
	out      Output
	heap     minheap.Heap[item]
	prods    []*Producer
	open     int
	released bool
}

// New returns a stream that releases its events to out.
func New(out Output) *Stream { return &Stream{out: out} }

// Add adds a producer whose matches have columns cols (the first
// len(cols) cells of a row, as Query returns it). A late producer (see
// Late) with a window of w ticks may complete a match W after its first
// event; without a window, w is math.MaxInt64 and its events are held
// until it finishes.
func (s *Stream) Add(cols []string, late bool, w int64) (*Producer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released || (len(s.prods) > 0 && s.open == 0) {
		return nil, ErrStarted
	}
	p := &Producer{s: s, index: len(s.prods), cols: cols, late: late, window: w, mark: math.MinInt64}
	s.prods = append(s.prods, p)
	s.open++
	return p, nil
}

// item is a held event: released in (ts, producer, emission) order.
type item struct {
	p *Producer
	n int64 // the producer's emission index
	e *event.Event
}

func (a item) Less(b item) bool {
	if a.e.TS != b.e.TS {
		return a.e.TS < b.e.TS
	}
	if a.p.index != b.p.index {
		return a.p.index < b.p.index
	}
	return a.n < b.n
}

// release hands out the held events no producer can precede any more:
// those below every open producer's mark, or all once none is open.
func (s *Stream) release() {
	low := int64(math.MaxInt64)
	for _, p := range s.prods {
		if !p.done {
			low = min(low, p.mark)
		}
	}
	for s.heap.Len() > 0 && (s.open == 0 || s.heap.Min().e.TS < low) {
		it := s.heap.Pop()
		s.released = true
		s.out.Event(it.p, it.e)
	}
}

// Producer is one query writing into a stream. Its methods are called by
// the goroutine that runs the query. It has the methods of an
// output.Writer, so a live query writes into it as it writes its rows.
type Producer struct {
	s      *Stream
	index  int
	cols   []string
	late   bool
	window int64

	started bool
	last    int64 // the ts its input has reached
	mark    int64 // it adds no event with ts below mark; written under s.mu
	done    bool  // finished; under s.mu
	n       int64
	max     int64 // the events it may make; 0: no bound

	events []event.Event // blocks the events are carved from
	values []event.Value
}

// ErrFull is Row's error once a producer has made the events Bound allows.
var ErrFull = errors.New("the derived stream has all the events it may hold")

// Bound makes Row fail with ErrFull past max events (0: no bound): a
// loaded derived stream keeps every event in memory.
func (p *Producer) Bound(max int64) { p.max = max }

// EventBytes is about what one event of cols attributes takes in a loaded
// derived stream: the producer's event and its pointer in its part, which
// the stream keeps to rebuild itself when another query writes into it,
// Build's copy with its pointer, and its item in the stream's heap, which
// may hold them all, twice while it grows.
func EventBytes(cols int) int64 {
	e := unsafe.Sizeof(event.Event{}) + uintptr(cols)*unsafe.Sizeof(event.Value{}) + unsafe.Sizeof(&event.Event{})
	return int64(2*e + 2*unsafe.Sizeof(item{}))
}

// Cols names the producer's attributes.
func (p *Producer) Cols() []string { return p.cols }

// Follow passes the producer's input through, noting its time (Advance)
// before each event reaches the query.
func (p *Producer) Follow(events iter.Seq[*event.Event]) iter.Seq[*event.Event] {
	return func(yield func(*event.Event) bool) {
		for e := range events {
			p.Advance(e.TS)
			if !yield(e) {
				return
			}
		}
	}
}

// Advance notes that the producer's query is about to read an item of
// time ts, having read every item before it (a rulebook's rule, whose
// items the book hands it, calls it so): once ts is later than the last
// item's, the events that no match can precede any more are released.
func (p *Producer) Advance(ts int64) {
	if !p.started || ts > p.last {
		p.advance(ts)
	}
}

// advance notes that every input event before ts has been processed. A
// match that completes on its last event has that event's ts, so the
// events to come are at ts or later; a late one is still held only while
// its input has not passed ts(P1) + W, so its ts (at least ts(P1)) is at
// least the previous time minus W.
func (p *Producer) advance(ts int64) {
	bound := ts
	if p.late {
		bound = math.MinInt64
		if p.started {
			bound = satSub(p.last, p.window)
		}
	}
	p.started, p.last = true, ts
	if bound <= p.mark {
		return
	}
	p.s.mu.Lock()
	p.mark = bound
	p.s.release()
	p.s.mu.Unlock()
}

// Row turns a match (a row of the producer's query) into an event and
// holds it until its time has passed.
func (p *Producer) Row(row []query.Cell) error {
	if p.max > 0 && p.n >= p.max {
		return ErrFull
	}
	n := len(p.cols)
	ts := int64(math.MinInt64)
	for _, c := range row[n:] {
		if c.Event != nil {
			ts = max(ts, c.Event.TS)
		}
		if len(c.List) > 0 {
			ts = max(ts, c.List[len(c.List)-1].TS)
		}
	}
	e := p.event(n)
	e.TS = ts
	for i, c := range row[:n] {
		e.Attrs[i] = c.Value
	}
	p.s.mu.Lock()
	p.s.heap.Push(item{p: p, n: p.n, e: e})
	p.n++
	p.s.mu.Unlock()
	return nil
}

// event returns a new event with n attribute slots, from blocks: one
// allocation per block, not two per match.
func (p *Producer) event(n int) *event.Event {
	const block = 256
	if len(p.events) == 0 {
		p.events = make([]event.Event, block)
	}
	e := &p.events[0]
	p.events = p.events[1:]
	if len(p.values) < n {
		p.values = make([]event.Value, max(n, block*n))
	}
	e.Attrs = p.values[:n:n]
	p.values = p.values[n:]
	return e
}

// Sync tells the output that the producer waits for input (a live query
// calls it then), so that what was released reaches the consumers.
func (p *Producer) Sync() error {
	p.s.mu.Lock()
	p.s.out.Flush()
	p.s.mu.Unlock()
	return nil
}

// Finish ends the producer: its held events are released as far as the
// other producers allow; after the last producer, all of them, and the
// output is closed.
func (p *Producer) Finish() error {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.done {
		return nil
	}
	p.done = true
	s.open--
	s.release()
	if s.open == 0 {
		s.out.Close()
	} else {
		s.out.Flush()
	}
	return nil
}

// satSub is a - b, saturating at the smallest int64 (b >= 0).
func satSub(a, b int64) int64 {
	if a < math.MinInt64+b {
		return math.MinInt64
	}
	return a - b
}

// Part is one producer's derived events, in ts order, with its columns.
type Part struct {
	Cols   []string
	Events []*event.Event
}

// Build makes the loaded derived stream name from its producers' parts,
// given in statement order: their events stably sorted by ts (equal ts:
// the earlier producer's first, each in its own order), numbered 0, 1,
// 2, ..., of the one type name, with the union of the parts' columns as
// attributes. The parts are not changed.
func Build(name string, unit time.Duration, parts []Part) *event.Stream {
	schema := event.NewSchema()
	typ := schema.AddType(name)
	slots := make([][]int, len(parts))
	total, values := 0, 0
	for i, part := range parts {
		width := 0
		for _, c := range part.Cols {
			slot := schema.AddAttr(c)
			schema.Declare(typ, slot)
			slots[i] = append(slots[i], slot)
			width = max(width, slot+1)
		}
		total += len(part.Events)
		values += width * len(part.Events)
	}
	block := make([]event.Event, total)
	vals := make([]event.Value, values)
	events := make([]*event.Event, 0, total)
	for i, part := range parts {
		width := 0
		if s := slots[i]; len(s) > 0 {
			width = slices.Max(s) + 1
		}
		for _, src := range part.Events {
			e := &block[len(events)]
			e.Type, e.TS = typ, src.TS
			e.Attrs, vals = vals[:width:width], vals[width:]
			for k, slot := range slots[i] {
				e.Attrs[slot] = src.Attrs[k]
			}
			events = append(events, e)
		}
	}
	slices.SortStableFunc(events, func(a, b *event.Event) int { return cmp.Compare(a.TS, b.TS) })
	for i, e := range events {
		e.Seq = int64(i)
		schema.Observe(e)
	}
	return &event.Stream{Name: name, Schema: schema, Events: events, Unit: unit}
}
