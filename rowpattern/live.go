package rowpattern

import (
	"container/heap"
	"fmt"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
)

// A MATCH_RECOGNIZE on a live stream matches each partition's rows as
// they arrive and writes a match once it is decided: when no thread of its
// start row can still take a row. Its rows are the stream's in arrival
// order, so ORDER BY must be ts (or absent); a partition keeps only the
// rows from its next start row on (and the ones PREV reaches back to), so
// that its state is bounded, which needs the pattern bounded or a WITHIN
// (docs/MATCH_RECOGNIZE.md, Live streams).

// liveCheck notes why the query cannot run on a live stream, if it cannot.
func (c *compiler) liveCheck() {
	st := c.q.st
	fail := func(n ast.Node, format string, args ...any) {
		if c.q.liveErr == nil {
			c.q.liveErr = &ast.Error{Src: c.src, Offset: n.NodeSpan().Start, Msg: fmt.Sprintf(format, args...)}
		}
	}
	if len(c.q.order) > 1 || len(c.q.order) == 1 && (c.q.order[0].slot != colTS || c.q.order[0].desc) {
		fail(st.OrderBy[0].Col, "on a live stream, rows are matched as they arrive: ORDER BY must be ts (or left out)")
	}
	if end := findAnchorEnd(st.Pattern); end != nil {
		fail(end, "on a live stream a partition has no last row: $ cannot be used")
	}
	if c.nextAt != nil {
		fail(c.nextAt, "not supported yet: NEXT on a live stream (it reads rows that have not arrived)")
	}
	if q := unbounded(st.Pattern); q != nil && st.Within == nil {
		fail(q, "on a live stream an unbounded quantifier needs WITHIN d after PATTERN (...), so that a partition's state is bounded by the window")
	}
}

// Window is WITHIN in ticks; ok is false without one.
func (q *Query) Window() (w int64, ok bool) { return q.within, q.within >= 0 }

// LiveError is why the query cannot run on a live stream (nil: it can),
// with a caret.
func (q *Query) LiveError() error { return q.liveErr }

// unbounded is the pattern's first quantifier without an upper bound.
func unbounded(p ast.RowPattern) ast.Node {
	var found ast.Node
	walkPattern(p, func(p ast.RowPattern) {
		if n, ok := p.(*ast.PatQuant); ok && n.Max < 0 && found == nil {
			found = n
		}
	})
	return found
}

func findAnchorEnd(p ast.RowPattern) ast.Node {
	var found ast.Node
	walkPattern(p, func(p ast.RowPattern) {
		if n, ok := p.(*ast.PatAnchor); ok && n.End && found == nil {
			found = n
		}
	})
	return found
}

// walkPattern calls f on p and each node inside it.
func walkPattern(p ast.RowPattern, f func(ast.RowPattern)) {
	f(p)
	switch n := p.(type) {
	case *ast.PatConcat:
		for _, it := range n.Items {
			walkPattern(it, f)
		}
	case *ast.PatAlt:
		for _, it := range n.Alts {
			walkPattern(it, f)
		}
	case *ast.PatPermute:
		for _, it := range n.Items {
			walkPattern(it, f)
		}
	case *ast.PatQuant:
		walkPattern(n.Item, f)
	case *ast.PatExclude:
		walkPattern(n.Item, f)
	}
}

// Live runs the query over a live stream's events: Push each, then End.
// Rows go to emit as matches are decided, a partition's in order.
type Live struct {
	r     *runner
	index map[[maxGroupKeys]event.Key]*livePart
	parts []*livePart // in order of first row, for End
	// waiting are the partitions whose outcome waits for the stream's
	// time to pass their window (by deadline).
	waiting liveHeap
	st      Stats
}

type livePart struct {
	partition
	deadline int64 // its window's end, while in waiting
	queued   bool
}

// Live starts a live run.
func (q *Query) Live(emit Emit) *Live {
	return &Live{r: q.newRunner(emit), index: map[[maxGroupKeys]event.Key]*livePart{}}
}

// Stopped reports whether emit asked the run to stop.
func (l *Live) Stopped() bool { return l.r.stopped }

// Stats is what the run has done so far.
func (l *Live) Stats() Stats { return l.st }

// Push adds an event (a tick: the stream's time) and writes the matches
// it decides.
func (l *Live) Push(e *event.Event) error {
	if !e.IsTick() {
		if err := l.add(e); err != nil {
			return err
		}
	}
	return l.expire(e.TS)
}

func (l *Live) add(e *event.Event) error {
	q := l.r.q
	l.st.Rows++
	var k [maxGroupKeys]event.Key
	for i, slot := range q.partition {
		k[i] = event.PartitionKey(q.col(e, slot)).Key()
	}
	p := l.index[k]
	if p == nil {
		p = &livePart{}
		p.cols = make([][]event.Value, len(q.cached))
		q.setKey(&p.partition, e)
		l.index[k] = p
		l.parts = append(l.parts, p)
		l.st.Partitions++
	}
	p.rows = append(p.rows, e)
	for k, slot := range q.cached {
		p.cols[k] = append(p.cols[k], q.col(e, slot))
	}
	return l.step(p, e.TS)
}

// step matches p as far as its rows decide, drops the rows it no longer
// needs, and queues it to wait for its window's end.
func (l *Live) step(p *livePart, now int64) error {
	if err := l.r.advance(&p.partition, &l.st, true, now); err != nil {
		return err
	}
	p.trim(l.r.q.reach, len(l.r.q.names))
	if w := l.r.q.within; w >= 0 && p.start < p.len() && !p.queued {
		p.deadline, p.queued = p.ts(p.start)+w, true
		heap.Push(&l.waiting, p)
	}
	return nil
}

// expire decides the partitions whose window has closed at time now.
func (l *Live) expire(now int64) error {
	for len(l.waiting) > 0 && l.waiting[0].deadline < now && !l.r.stopped {
		p := heap.Pop(&l.waiting).(*livePart)
		p.queued = false
		if err := l.step(p, now); err != nil {
			return err
		}
	}
	return nil
}

// End decides every partition's remaining rows: the stream has ended.
func (l *Live) End() error {
	for _, p := range l.parts {
		if l.r.stopped {
			break
		}
		if err := l.r.advance(&p.partition, &l.st, false, 0); err != nil {
			return err
		}
	}
	return nil
}

// trim drops the rows before the next start row but the reach that PREV
// needs, once they are many, keeping positions relative to base.
func (p *livePart) trim(reach, vars int) {
	drop := p.start - reach
	if drop < 1024 || drop < p.len()/2 {
		return
	}
	n := copy(p.rows, p.rows[drop:])
	clear(p.rows[n:])
	p.rows = p.rows[:n]
	for k := range p.cols {
		p.cols[k] = p.cols[k][:copy(p.cols[k], p.cols[k][drop:])]
	}
	if len(p.memo) >= drop*vars {
		p.memo = p.memo[:copy(p.memo, p.memo[drop*vars:])]
	} else {
		p.memo = p.memo[:0]
	}
	p.base += drop
	p.start -= drop
	p.covered = max(p.covered-drop, 0)
}

// liveHeap orders waiting partitions by deadline.
type liveHeap []*livePart

func (h liveHeap) Len() int           { return len(h) }
func (h liveHeap) Less(i, j int) bool { return h[i].deadline < h[j].deadline }
func (h liveHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *liveHeap) Push(x any)        { *h = append(*h, x.(*livePart)) }
func (h *liveHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}
