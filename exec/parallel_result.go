package exec

import (
	"unsafe"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// match is a run of n rows a worker emitted one after the other: the
// position of the item it was working on, the rows' partition value, where
// the first row's cells start in the result's rows (its events in evs,
// when a row is only events). One item tends to complete many matches of
// one partition, so the merge orders runs, not rows.
type match struct {
	pos      int64
	key      event.Value
	n        int
	cell, ev int
	// Encoded (Chunks): the rows' bytes in the result's buf, and where
	// the first row's end is noted in its ends.
	b, end, row int
}

// result is what a worker made of one batch.
type result struct {
	matches []match
	// The rows' cells, one row after the other, and their lists'
	// elements: the merge hands the sink the rows as they are here. A
	// row of events only is its events in evs, seven times smaller (a
	// segment holds its rows until the merge reaches it).
	rows []Cell
	evs  []*event.Event
	// Encoded rows (Chunks): their bytes and, for a limit, each one's end.
	buf  []byte
	ends []int
	// A tally's counts by item (a count's result, never full, goes to
	// chunker.sum), and their sum.
	counts  []posCount
	counted int64
	err     error // the worker stopped at errPos with err
	errPos  int64
	// A time segment's worker: the rows it emitted itself; stopped, the
	// sink stopped the run at errPos; handover, it emits the next rows
	// itself (segments.go).
	direct            int64
	stopped, handover bool
	stats             *Stats // the worker's, with its last result
	idle              bool   // the batch's
	// more: a partitioned run's worker sends more results of the batch
	// (resultBytes).
	more bool
	// Of the worker that made it, of the batch or segment it is of
	// (WithAnyOrder reads every worker's results from one channel).
	worker int
	batch  *batch // nil: the stream's end
	seg    *segment
}

// freshResult returns an empty result: one from free if there is, else
// one sized like last.
func freshResult(free chan *result, last *result) *result {
	select {
	case r := <-free:
		*r = result{matches: r.matches[:0], rows: r.rows[:0], evs: r.evs[:0], buf: r.buf[:0], ends: r.ends[:0], counts: r.counts[:0]}
		return r
	default:
		// Sized like the last: a batch's arenas grown by doubling cost
		// more than the matching.
		if last == nil {
			return &result{}
		}
		// A result cut at resultBytes gets room for the item that passes
		// it.
		grow := func(n int) int {
			if last.full() {
				return n + n/4
			}
			return n
		}
		return &result{
			matches: make([]match, 0, grow(len(last.matches))),
			rows:    make([]Cell, 0, grow(len(last.rows))),
			evs:     make([]*event.Event, 0, grow(len(last.evs))),
			buf:     make([]byte, 0, grow(len(last.buf))),
			ends:    make([]int, 0, grow(len(last.ends))),
			counts:  make([]posCount, 0, len(last.counts)),
		}
	}
}

// layout is the shape of a plan's rows: how many cells, which are lists,
// whether every one is an event.
type layout struct {
	width  int
	lists  []int // the columns of ColList
	events bool
}

func layoutOf(plan *planner.Plan) *layout {
	l := &layout{width: len(plan.Columns), events: true}
	for i, c := range plan.Columns {
		if c.Kind == planner.ColList {
			l.lists = append(l.lists, i)
		}
		l.events = l.events && c.Kind == planner.ColEvent
	}
	return l
}

// add appends a row, emitted at position pos in partition key, to the
// result.
func (r *result) add(pos int64, key event.Value, l *layout, row []Cell) {
	r.open(pos, key)
	r.cells(l, row)
}

// cells appends a row, of the last run, to the rows. A list is the
// engine's until the call returns: its elements are copied to evs, which
// the row's list then reads (an earlier array of evs, once append has
// grown it, still holds them: nothing writes to it before the result is
// reused).
func (r *result) cells(l *layout, row []Cell) {
	if l.events {
		r.evs = appendEvents(r.evs, row)
		return
	}
	k := len(r.rows)
	r.rows = append(r.rows, row...)
	for _, i := range l.lists {
		if len(row[i].List) == 0 {
			// An empty list stays apart from an unbound one (nil, the
			// algebra's): the outputs write [] for the one and nothing
			// for the other.
			if row[i].List != nil {
				r.rows[k+i].List = emptyList
			}
			continue
		}
		e := len(r.evs)
		r.evs = append(r.evs, row[i].List...)
		r.rows[k+i].List = r.evs[e:len(r.evs):len(r.evs)]
	}
}

// emptyList is a bound closure's list with no element.
var emptyList = []*event.Event{}

// appendEvents appends the events of a row of events only to evs, which
// a register holds, not read and written back in memory a cell at a time.
func appendEvents(evs []*event.Event, row []Cell) []*event.Event {
	for i := range row {
		evs = append(evs, row[i].Event)
	}
	return evs
}

// open counts a row emitted at position pos in partition key: one more
// of the last run, or the first of a new one.
func (r *result) open(pos int64, key event.Value) {
	if n := len(r.matches) - 1; n >= 0 && r.matches[n].pos == pos && r.matches[n].key.Identical(key) {
		r.matches[n].n++
		return
	}
	r.matches = append(r.matches, match{pos: pos, key: key, n: 1, cell: len(r.rows), ev: len(r.evs), b: len(r.buf), row: len(r.ends)})
}

// emitRun emits the rows of run m, laid out as l says, and counts them;
// it returns false when emit does. A row of events only is put together
// in row.
func (r *result) emitRun(m match, l *layout, row []Cell, emit Emit, stats *Stats) bool {
	width := l.width
	if l.events {
		row = row[:width]
		evs := r.evs[m.ev : m.ev+m.n*width]
		for e := 0; e < len(evs); e += width {
			for i, ev := range evs[e : e+width] {
				row[i].Event = ev
			}
			stats.Matches++
			if !emit(row) {
				return false
			}
		}
		return true
	}
	for c := m.cell; c < m.cell+m.n*width; c += width {
		stats.Matches++
		if !emit(r.rows[c : c+width : c+width]) {
			return false
		}
	}
	return true
}

// resultBytes is about the most bytes of rows a result holds, encoded
// (Chunks) or in its arenas: a worker hands a batch's rows on in results
// of that size, cut between two items, so that a batch with many matches
// neither grows its arrays by copying them again and again nor holds them
// all at once. Arenas so bounded stay in a core's cache and are reused
// (free), not allocated: pointer arrays the garbage collector scans, and
// whose every store pays a write barrier while it runs. Not smaller: a
// result handed over costs the merge a channel receive and often a
// wake-up of its worker, and W2 on 10 symbols into jsonl took 2.2-2.5 s on
// 2 workers with results of 512 KiB, 2.8-3.0 s with 128 KiB (3.1-3.8 s
// with 32 KiB).
const resultBytes = 512 << 10

// full says the result holds resultBytes of rows.
func (r *result) full() bool {
	const cell, ev = int(unsafe.Sizeof(Cell{})), int(unsafe.Sizeof((*event.Event)(nil)))
	return len(r.buf)+cell*len(r.rows)+ev*len(r.evs) >= resultBytes
}
