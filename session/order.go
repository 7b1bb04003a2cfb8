package session

import (
	"bytes"
	"context"
	"io"
	"iter"
	"math"
	"sync"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/source"
)

// The queries on one live stream that write to the session's results
// write their lines in one order: by the position in the stream (its
// items, events and ticks, numbered from 0) at which each match was
// released (the item whose arrival completed it or let it out; the
// stream's end for what the end releases), then by query number. So a
// piped stream gives the same bytes from run to run, however the
// queries' goroutines are scheduled (docs/LANGUAGE.md, Live streams). A
// member of the order may write for several queries (a live rulebook's
// pass, for its rules): each of its tags says whose lines it holds, in
// ascending query order at a position.
//
// Each query's writer writes into the query's own buffer (orderedOut).
// As the query reads on, what it wrote is tagged with the position it
// has read to, and handed over every handOver items and whenever it
// waits for input; lines go out once every query on the stream has read
// past their position. A query whose run splits over workers reads ahead
// of its matches: its lines go out as it hands them over, outside the
// order.

// handOver is how many items a query reads between two hand-overs of its
// lines: a lock per handOver items, and the others' lines wait at most
// that far behind. It hands over sooner once it holds handOverBytes of
// lines, which bounds its buffers (a query writing 1 KB per event would
// hold a MB).
const (
	handOver      = 1024
	handOverBytes = 64 << 10
)

// lineOrder is the order of one live stream's queries' lines.
type lineOrder struct {
	mu      sync.Mutex
	members []*orderedOut // in the order they joined; ended ones leave once their lines are out
	out     []byte        // release's
}

// order is the line order of the queries on the live stream l.
func (s *Session) order(l *source.Live) *lineOrder {
	if s.orders == nil {
		s.orders = map[*source.Live]*lineOrder{}
	}
	o := s.orders[l]
	if o == nil {
		o = &lineOrder{}
		s.orders[l] = o
	}
	return o
}

// join subscribes the members ms of a query to the stream l, from one
// position, and adds them to the order: together, so that no line of a
// position the query will read goes out before it joins.
func (o *lineOrder) join(l *source.Live, ms []*orderedOut) ([]*source.Subscription, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	subs, err := l.SubscribeN(len(ms))
	if err != nil {
		return nil, err
	}
	for i, m := range ms {
		start := subs[i].Start()
		m.o, m.pos, m.done, m.drained = o, start-1, start-1, make(chan struct{})
	}
	o.members = append(o.members, ms...)
	return subs, nil
}

// orderedOut is a live query's sink into the order: the writer of its
// format writes into it (Write), the query's job writes its rows through
// it (Row, Sync, Finish), and it follows the query's position in the
// stream (track).
type orderedOut struct {
	w      output.Writer // the query's format, writing into this
	dst    io.Writer     // where its lines go: the results it started with
	prefix []byte        // each of its lines' (the shell's "[n] ")
	q      int           // the query whose lines it writes (tag; put says whose)
	// lines: w's Sync writes its rows without changing them (CSV, JSON
	// Lines, count; not a table, whose Sync ends a page), so it is synced
	// at each position that has rows, and each line gets its position.
	lines bool
	// split: the run splits over workers, whose rows the query writes
	// after it has read on (and on another goroutine than it reads on):
	// its lines go out as it hands them over.
	split bool

	// The query's goroutine's: what w wrote since the last hand-over,
	// tagged by position.
	buf    []byte
	tags   []tag
	tagged int   // buf's bytes that are tagged
	rows   bool  // w has rows it has not synced
	pos    int64 // the position the query has read (math.MaxInt64: the stream's end)
	n      int   // items read since the last hand-over
	werr   error // err as of the last hand-over

	// Under o.mu.
	o       *lineOrder
	queue   []block // handed over, not yet out
	done    int64   // its lines through this position are in queue
	ended   bool
	tail    []byte // its unfinished last line
	err     error
	free    [][]byte // buffers of blocks that are out, for buf
	drained chan struct{}
}

// tag is where the bytes of one position and one query end in a block's
// buffer.
type tag struct {
	pos int64
	q   int
	end int
}

// block is one hand-over's bytes and tags; start is where the next
// position's bytes start, once some are out.
type block struct {
	buf   []byte
	tags  []tag
	start int
}

func (m *orderedOut) Write(p []byte) (int, error) {
	m.buf = append(m.buf, p...)
	return len(p), nil
}

func (m *orderedOut) Row(cells []query.Cell) error {
	if m.werr != nil {
		return m.werr // the results are gone
	}
	m.rows = true
	return m.w.Row(cells)
}

// Sync is the query's pause: it has read all there is.
func (m *orderedOut) Sync() error {
	err := m.w.Sync()
	m.rows = false
	m.tag()
	m.handOver(m.pos, false)
	if err == nil {
		err = m.werr
	}
	return err
}

// Finish ends the query's lines and waits until they are out (the
// results they go to may be closed then).
func (m *orderedOut) Finish() error {
	err := m.w.Finish()
	m.tag()
	m.handOver(m.pos, true)
	<-m.drained
	if err == nil {
		m.o.mu.Lock()
		err = m.err
		m.o.mu.Unlock()
	}
	return err
}

// tag gives what w wrote since the last tag the query's position.
func (m *orderedOut) tag() {
	if len(m.buf) > m.tagged {
		m.tags = append(m.tags, tag{m.pos, m.q, len(m.buf)})
		m.tagged = len(m.buf)
	}
}

// put adds query q's lines b at the position m has read to: a member
// writing for several queries puts each one's lines of a position in
// query order. What w wrote since the last tag is tagged first.
func (m *orderedOut) put(q int, b []byte) {
	m.tag()
	m.buf = append(m.buf, b...)
	m.tags = append(m.tags, tag{m.pos, q, len(m.buf)})
	m.tagged = len(m.buf)
}

// track follows the query's position as its run reads the events: the
// lines written before it reads an item are its predecessor's.
func (m *orderedOut) track(ctx context.Context, events iter.Seq[*event.Event]) iter.Seq[*event.Event] {
	if m.split {
		return events
	}
	return func(yield func(*event.Event) bool) {
		for e := range events {
			m.step()
			if !yield(e) {
				return
			}
		}
		if ctx.Err() == nil {
			m.pos = math.MaxInt64 // the stream's end: what the run's end releases
		}
	}
}

// step moves the query to the next item: the lines written so far are
// its predecessor's.
func (m *orderedOut) step() {
	if m.rows && m.lines {
		m.w.Sync()
		m.rows = false
	}
	m.tag()
	if m.n++; m.n == handOver || len(m.buf) >= handOverBytes {
		m.handOver(m.pos, false)
	}
	m.pos++
}

// handOver hands the lines tagged so far to the order, says that the
// query has written all its lines through position done, and lets out
// what every query has read past; end says the query writes no more.
func (m *orderedOut) handOver(done int64, end bool) {
	m.n = 0
	o := m.o
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(m.tags) > 0 { // all of buf: a hand-over follows a tag
		m.queue = append(m.queue, block{buf: m.buf, tags: m.tags})
		m.buf, m.tags, m.tagged = nil, nil, 0
		if k := len(m.free); k > 0 {
			m.buf, m.free = m.free[k-1], m.free[:k-1]
		}
	}
	m.done, m.ended = done, end
	m.werr = m.err
	o.release()
}

// release writes the lines every query has read past, by position, then
// query; a split query's as they come. Under o.mu.
func (o *lineOrder) release() {
	limit := int64(math.MaxInt64)
	for _, m := range o.members {
		if !m.ended && !m.split {
			limit = min(limit, m.done)
		}
	}
	var dst io.Writer // of o.out
	for {
		var best *orderedOut
		var bestPos int64
		var bestQ int
		for _, m := range o.members {
			if len(m.queue) == 0 {
				continue
			}
			t := m.queue[0].tags[0]
			pos := t.pos
			if m.split {
				pos = math.MinInt64
			} else if pos > limit {
				continue
			}
			if best == nil || pos < bestPos || pos == bestPos && t.q < bestQ {
				best, bestPos, bestQ = m, pos, t.q
			}
		}
		if best == nil {
			break
		}
		if dst != best.dst {
			o.write(dst)
			dst = best.dst
		}
		b := &best.queue[0]
		t := b.tags[0]
		o.out = best.appendLines(o.out, b.buf[b.start:t.end])
		if len(o.out) >= handOverBytes {
			o.write(dst)
		}
		b.start, b.tags = t.end, b.tags[1:]
		if len(b.tags) == 0 {
			if len(best.free) < 2 {
				best.free = append(best.free, b.buf[:0])
			}
			best.queue = best.queue[1:]
		}
	}
	kept := o.members[:0]
	for _, m := range o.members {
		if !m.ended || len(m.queue) > 0 {
			kept = append(kept, m)
			continue
		}
		if len(m.tail) > 0 { // a last line without its line break gets one
			if dst != m.dst {
				o.write(dst)
				dst = m.dst
			}
			o.out = m.appendLines(o.out, []byte{'\n'})
		}
		o.write(dst)
		dst = nil
		close(m.drained)
	}
	clear(o.members[len(kept):])
	o.members = kept
	o.write(dst)
}

// write writes o.out to dst; an error is that of every query writing
// there.
func (o *lineOrder) write(dst io.Writer) {
	if len(o.out) == 0 {
		return
	}
	_, err := dst.Write(o.out)
	o.out = o.out[:0]
	if err != nil {
		for _, m := range o.members {
			if m.dst == dst && m.err == nil {
				m.err = err
			}
		}
	}
}

// appendLines appends b's lines to out, each after m.prefix; an
// unfinished last line waits in m.tail for its end, so that two queries'
// lines never mix.
func (m *orderedOut) appendLines(out, b []byte) []byte {
	end := bytes.LastIndexByte(b, '\n') + 1
	if end == 0 {
		m.tail = append(m.tail, b...)
		return out
	}
	if len(m.tail) > 0 {
		m.tail = append(m.tail, b[:end]...)
		out = appendPrefixed(out, m.tail, m.prefix)
		m.tail = m.tail[:0]
	} else {
		out = appendPrefixed(out, b[:end], m.prefix)
	}
	m.tail = append(m.tail, b[end:]...)
	return out
}

// appendPrefixed appends the whole lines b to out, each after prefix.
func appendPrefixed(out, b, prefix []byte) []byte {
	if len(prefix) == 0 {
		return append(out, b...)
	}
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n') + 1
		out = append(append(out, prefix...), b[:nl]...)
		b = b[nl:]
	}
	return out
}
