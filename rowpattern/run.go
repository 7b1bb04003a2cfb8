package rowpattern

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
)

// Emit receives an output row, valid only during the call, and the row of
// the partition it is at (ONE ROW PER MATCH: the match's last); false
// stops the run.
type Emit func(row []event.Value, at *event.Event) bool

// Stats counts a run's work.
type Stats struct {
	Rows       int64 // input rows
	Partitions int64
	Matches    int64 // including empty matches
	Output     int64 // rows emitted
}

// Run matches the query over events (a loaded stream), partitioned and
// sorted stably by PARTITION BY and ORDER BY, and emits the output rows in
// partition order. Partitions are independent: workers > 1 match that
// many at once, each into a buffer, and the buffers are emitted in
// order, so that the output is the same on any number of workers.
func (q *Query) Run(ctx context.Context, events []*event.Event, workers int, emit Emit) (Stats, error) {
	st := Stats{Rows: int64(len(events))}
	parts := q.partitions(events)
	st.Partitions = int64(len(parts))
	if workers <= 1 || len(parts) < 2 {
		r := q.loadedRunner(ctx, emit)
		for i := range parts {
			if err := r.partition(&parts[i], &st); err != nil || r.stopped {
				return st, err
			}
		}
		return st, nil
	}
	return st, q.parallel(ctx, parts, workers, emit, &st)
}

// maxBuffered bounds the bytes of the rows a batch of partitions holds
// (a variable, for tests). A partition whose rows would pass it is given
// up by its worker and matched again where the batch is emitted, its rows
// emitted as they come: ALL ROWS PER MATCH with AFTER MATCH SKIP TO NEXT
// ROW outputs rows quadratic in a partition's, and a batch of such
// partitions took all the memory.
var maxBuffered int64 = 64 << 20

// parallel matches partitions on workers, a batch of them at a time (so
// that the buffered rows stay bounded), and emits each batch in order.
func (q *Query) parallel(ctx context.Context, parts []partition, workers int, emit Emit, st *Stats) error {
	type result struct {
		rows  [][]event.Value
		at    []*event.Event
		stats Stats
		err   error
		redo  bool // given up: its rows passed maxBuffered
	}
	rowBytes := int64(len(q.cols))*int64(unsafe.Sizeof(event.Value{})) + int64(unsafe.Sizeof([]event.Value{})+unsafe.Sizeof(&event.Event{}))
	batch := workers * 16
	for lo := 0; lo < len(parts); lo += batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+batch, len(parts))
		results := make([]result, hi-lo)
		var buffered atomic.Int64
		var wg sync.WaitGroup
		next := make(chan int)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					res := &results[i-lo]
					r := q.loadedRunner(ctx, func(row []event.Value, at *event.Event) bool {
						if buffered.Add(rowBytes) > maxBuffered {
							buffered.Add(-rowBytes * int64(len(res.rows)+1))
							res.rows, res.at, res.redo = nil, nil, true
							return false
						}
						res.rows = append(res.rows, slices.Clone(row))
						res.at = append(res.at, at)
						return true
					})
					p := parts[i] // a copy: one given up is matched again from its start
					res.err = r.partition(&p, &res.stats)
				}
			}()
		}
		for i := lo; i < hi; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
		for k, res := range results {
			if res.err != nil {
				return res.err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if res.redo {
				r := q.loadedRunner(ctx, emit)
				if err := r.partition(&parts[lo+k], st); err != nil || r.stopped {
					return err
				}
				continue
			}
			st.Matches += res.stats.Matches
			for k, row := range res.rows {
				st.Output++
				if !emit(row, res.at[k]) {
					return nil
				}
			}
		}
	}
	return nil
}

// maxGroupKeys is the most PARTITION BY columns that partitions are
// grouped by in a map; more are sorted as ORDER BY columns are.
const maxGroupKeys = 4

// partitions groups the events by the PARTITION BY columns (with a map)
// and sorts each group stably by ORDER BY, unless it already is (a stream
// is mostly in ts order); the partitions are in the order of their
// PARTITION BY values.
func (q *Query) partitions(events []*event.Event) []partition {
	if len(q.partition) > maxGroupKeys {
		rows := slices.Clone(events)
		slices.SortStableFunc(rows, q.compareRows)
		var parts []partition
		for i := 0; i < len(rows); {
			j := i + 1
			for j < len(rows) && q.samePartition(rows[i], rows[j]) {
				j++
			}
			parts = append(parts, partition{rows: rows[i:j]})
			i = j
		}
		for i := range parts {
			q.fillColumns(&parts[i])
			q.setKey(&parts[i], parts[i].rows[0])
		}
		return parts
	}
	// Two passes: each event's partition and the partitions' sizes, then
	// the rows into one array, so that no partition grows by copying.
	var which []int32
	var sizes []int
	if len(q.partition) == 1 {
		slot := q.partition[0]
		which, sizes = groupBy(events, func(e *event.Event) event.Value { return event.PartitionKey(q.col(e, slot)) },
			event.Value.Key, smallInt)
	} else {
		which, sizes = groupBy(events, func(e *event.Event) (k [maxGroupKeys]event.Key) {
			for i, slot := range q.partition {
				k[i] = event.PartitionKey(q.col(e, slot)).Key()
			}
			return k
		}, func(k [maxGroupKeys]event.Key) [maxGroupKeys]event.Key { return k }, nil)
	}
	all := make([]*event.Event, len(events))
	cols := make([][]event.Value, len(q.cached))
	for k := range cols {
		cols[k] = make([]event.Value, len(events))
	}
	parts := make([]partition, len(sizes))
	at := 0
	for i, n := range sizes {
		p := &parts[i]
		p.rows = all[at : at : at+n]
		p.cols = make([][]event.Value, len(cols))
		for k := range cols {
			p.cols[k] = cols[k][at : at : at+n]
		}
		at += n
	}
	// The cached columns are read here, in the stream's order (its
	// events' order in memory), rather than by the matcher in a
	// partition's order, a cache miss a row.
	unsorted := make([]bool, len(parts))
	for n, e := range events {
		i := which[n]
		p := &parts[i]
		if len(p.rows) > 0 && !unsorted[i] && q.compareOrder(p.rows[len(p.rows)-1], e) > 0 {
			unsorted[i] = true
		}
		p.rows = append(p.rows, e)
		for k, slot := range q.cached {
			p.cols[k] = append(p.cols[k], q.col(e, slot))
		}
	}
	for i := range parts {
		if p := &parts[i]; unsorted[i] {
			slices.SortStableFunc(p.rows, q.compareOrder)
			q.fillColumns(p)
		}
	}
	slices.SortFunc(parts, func(a, b partition) int { return q.compareRows(a.rows[0], b.rows[0]) })
	for i := range parts {
		q.setKey(&parts[i], parts[i].rows[0])
	}
	return parts
}

// setKey sets p's PARTITION BY values, those of its row e.
func (q *Query) setKey(p *partition, e *event.Event) {
	p.key = make([]event.Value, len(q.partition))
	for i, slot := range q.partition {
		p.key[i] = q.col(e, slot)
	}
}

// fillColumns sets p's cached columns from its rows.
func (q *Query) fillColumns(p *partition) {
	p.cols = make([][]event.Value, len(q.cached))
	for k, slot := range q.cached {
		p.cols[k] = make([]event.Value, len(p.rows))
		for i, e := range p.rows {
			p.cols[k][i] = q.col(e, slot)
		}
	}
}

// groupBy numbers the events' keys in order of first appearance: which
// is each event's number, sizes each number's events. A key that small
// maps to a small int is looked up in a slice (a symbol's number), the
// others in a map by their hash key.
func groupBy[V any, K comparable](events []*event.Event, key func(*event.Event) V, hash func(V) K, small func(V) (int, bool)) (which []int32, sizes []int) {
	index := map[K]int32{}
	var byInt []int32 // number+1 by small int, 0: not seen
	which = make([]int32, len(events))
	for n, e := range events {
		v := key(e)
		k, isSmall := 0, false
		if small != nil {
			k, isSmall = small(v)
		}
		var i int32
		if isSmall {
			if k >= len(byInt) {
				byInt = append(byInt, make([]int32, k+1-len(byInt))...)
			}
			if byInt[k] == 0 {
				byInt[k] = int32(len(sizes)) + 1
				sizes = append(sizes, 0)
			}
			i = byInt[k] - 1
		} else {
			h := hash(v)
			var ok bool
			if i, ok = index[h]; !ok {
				i = int32(len(sizes))
				index[h] = i
				sizes = append(sizes, 0)
			}
		}
		which[n] = i
		sizes[i]++
	}
	return which, sizes
}

// smallInt is v as a slice index when it is an int below 1<<16.
func smallInt(v event.Value) (int, bool) {
	if v.IsInt() && v.Int() >= 0 && v.Int() < 1<<16 {
		return int(v.Int()), true
	}
	return 0, false
}

// compareValues orders values for sorting: nulls last, then by Compare,
// and values that do not compare by kind.
func compareValues(a, b event.Value) int {
	switch {
	case a.IsAbsent() && b.IsAbsent():
		return 0
	case a.IsAbsent():
		return 1
	case b.IsAbsent():
		return -1
	}
	if c, ok := a.Compare(b); ok {
		return c
	}
	return int(a.Kind()) - int(b.Kind())
}

func (q *Query) compareRows(a, b *event.Event) int {
	for _, slot := range q.partition {
		if c := compareValues(q.col(a, slot), q.col(b, slot)); c != 0 {
			return c
		}
	}
	return q.compareOrder(a, b)
}

func (q *Query) compareOrder(a, b *event.Event) int {
	if len(q.order) == 1 && q.order[0].slot == colTS && !q.order[0].desc {
		return cmp.Compare(a.TS, b.TS) // the usual ORDER BY, without boxing
	}
	for _, o := range q.order {
		c := compareValues(q.col(a, o.slot), q.col(b, o.slot))
		if o.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func (q *Query) samePartition(a, b *event.Event) bool {
	for _, slot := range q.partition {
		if compareValues(q.col(a, slot), q.col(b, slot)) != 0 {
			return false
		}
	}
	return true
}

// runner runs a query over partitions, one after the other.
type runner struct {
	q       *Query
	m       *matcher
	emit    Emit
	ctx     context.Context // a loaded run's (cancelled); nil live
	out     []event.Value
	sel     evalCtx // a SELECT expression's, which reads only its refs
	match   evalCtx // the current match's
	stopped bool
}

func (q *Query) newRunner(emit Emit) *runner {
	r := &runner{q: q, emit: emit, out: make([]event.Value, len(q.cols))}
	defines := q.defines
	r.m = newMatcher(q.prog, func(e *evalCtx) bool {
		d := defines[e.labels[e.cur].v()]
		if d == nil {
			return true // a variable without DEFINE matches every row
		}
		b, ok := truth(d(e, e.cur))
		return ok && b
	}, q.tests, q.fromStart, q.names, q.within, q.history)
	return r
}

// loadedRunner is a runner over loaded partitions that ends when ctx is
// cancelled: a partition may run long (one start row's match is quick,
// but there may be millions of start rows).
func (q *Query) loadedRunner(ctx context.Context, emit Emit) *runner {
	r := q.newRunner(emit)
	r.ctx = ctx
	return r
}

// partition matches one (loaded) partition from each start row.
func (r *runner) partition(p *partition, st *Stats) error {
	return r.advance(p, st, false, 0)
}

// advance matches partition p from its next start row, resuming after a
// match per AFTER MATCH SKIP, until its rows end or (an open, live
// partition) the outcome at a start row waits for rows yet to come.
func (r *runner) advance(p *partition, st *Stats, open bool, now int64) error {
	q := r.q
	for n := 0; p.start < p.len() && !r.stopped; n++ {
		if n%cancelEvery == 0 && r.cancelled() {
			return r.ctx.Err()
		}
		start := p.start
		labels, out := r.m.match(p, start, open, now)
		switch out {
		case pending:
			return nil
		case tooMany:
			return &ast.Error{Src: q.src, Offset: q.st.Pattern.NodeSpan().Start, Msg: fmt.Sprintf(
				"more than %d ways to match from one start row (a DEFINE reads the match's rows, so no two ways merge): "+
					"make the alternatives exclusive, a quantifier reluctant or bounded, or add WITHIN", maxThreads)}
		case noMatch:
			if q.rows == ast.AllRowsWithUnmatched && start >= p.covered {
				r.unmatched(p, start, st)
			}
			p.start++
			continue
		}
		p.matchNo++
		st.Matches++
		e := &r.match // reused: a match's context would escape, an allocation per match
		*e = evalCtx{rows: p, start: start, origin: start, labels: labels, cur: len(labels) - 1, matchNo: p.matchNo, names: q.names}
		r.output(e, st)
		if r.cancelled() { // a match may emit many rows
			return r.ctx.Err()
		}
		if len(labels) == 0 {
			p.start++
			continue
		}
		end := start + len(labels)
		p.covered = max(p.covered, end)
		next, err := r.resume(e, end)
		if err != nil {
			return err
		}
		p.start = next
	}
	return nil
}

// cancelEvery is how many start rows a loaded run matches between looks
// at its context, besides one after each match: a look at every start row
// cost 4% of BenchmarkMR.
const cancelEvery = 64

// cancelled says whether a loaded run's context is done (never for a live
// run's runner, which its job stops).
func (r *runner) cancelled() bool {
	if r.ctx == nil {
		return false
	}
	select {
	case <-r.ctx.Done():
		return true
	default:
		return false
	}
}

// resume is the row matching goes on at after a match of rows start..end-1.
func (r *runner) resume(e *evalCtx, end int) (int, error) {
	q := r.q
	var pos int
	switch q.skip {
	case ast.SkipPastLastRow:
		return end, nil
	case ast.SkipToNextRow:
		return e.start + 1, nil
	case ast.SkipToFirst:
		pos = e.first(q.skipVars, 0, len(e.labels)-1)
	default:
		pos = e.last(q.skipVars, 0, len(e.labels)-1)
	}
	if pos < 0 {
		return 0, fmt.Errorf("AFTER MATCH SKIP TO %s: match %d has no row of %s", q.skipName, e.matchNo, q.skipName)
	}
	if pos == 0 {
		return 0, fmt.Errorf("AFTER MATCH SKIP TO %s: match %d would resume at its own first row", q.skipName, e.matchNo)
	}
	return e.start + pos, nil
}

// output emits a match's rows: one for ONE ROW PER MATCH (its measures at
// its last row), else one per matched row that is not excluded (an empty
// match: one row of nulls but MATCH_NUMBER's, at its start row, unless
// OMIT EMPTY MATCHES).
func (r *runner) output(e *evalCtx, st *Stats) {
	q := r.q
	switch {
	case q.rows == ast.OneRowPerMatch:
		r.row(e, e.start+max(e.cur, 0), st)
	case len(e.labels) == 0:
		if q.rows != ast.AllRowsOmitEmpty {
			r.row(e, e.start, st)
		}
	default:
		for i, l := range e.labels {
			if l&excluded != 0 {
				continue
			}
			e.cur = i
			r.row(e, e.start+i, st)
			if r.stopped {
				return
			}
		}
	}
}

// row emits the output row of match e at partition row i.
func (r *runner) row(e *evalCtx, i int, st *Stats) {
	for k := range r.q.cols {
		r.out[k] = r.value(&r.q.cols[k], e.rows, e, i)
	}
	st.Output++
	if !r.emit(r.out, e.rows.row(i)) {
		r.stopped = true
	}
}

// unmatched emits row i, in no match: its measures are null.
func (r *runner) unmatched(p *partition, i int, st *Stats) {
	for k := range r.q.cols {
		r.out[k] = r.value(&r.q.cols[k], p, nil, i)
	}
	st.Output++
	if !r.emit(r.out, p.row(i)) {
		r.stopped = true
	}
}

// value is output column c at row i of p, in match e (nil: in none, where
// a measure is null).
func (r *runner) value(c *outCol, p *partition, e *evalCtx, i int) event.Value {
	switch {
	case c.expr != nil:
		refs := r.sel.refs[:0]
		for k := range c.refs {
			refs = append(refs, r.value(&c.refs[k], p, e, i))
		}
		r.sel.refs = refs
		return c.expr(&r.sel, 0)
	case c.measure >= 0 && e == nil:
		return event.Value{}
	case c.measure >= 0:
		return r.q.measures[c.measure](e, e.cur)
	case c.part >= 0:
		return p.key[c.part]
	}
	return p.cols[c.col][i]
}
