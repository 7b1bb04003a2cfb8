package exec

import (
	"math"
	"slices"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// queryFilter is ReCEP's query filtering (the paper's CandCEP and
// MatchSubEvents): for a trigger bound to the last positive Pn, it chooses
// P1, P2, ... in pattern order from their buffers, each by binary search
// over its range [tx, ty]. P1's range starts at ts(Pn) - W (the window);
// Pj's starts after ts(Pj-1). Every range ends at the latest timestamp
// from which the rest of the pattern can still be completed (hi, computed
// backwards from the trigger), so the recursion meets no dead end from
// the positives. The components between two positives cut the range of
// the second: a closure needs K buffered events first (the range starts
// after the K-th), a narrowed negation's first blocking event ends it.
// Correlation predicates moved into the search are checked as soon as
// their variables are bound (QueryFilter.Checks), or filter a positive's
// buffer once per trigger when they read it and the trigger only (Pre).
type queryFilter struct {
	opBase
	op     *planner.QueryFilter
	cache  *eventCache
	b      *planner.Binding
	pos    []int // positive singles; the last is the trigger
	levels []level
	trig   int64 // the trigger's timestamp
	narrow bool  // negations may narrow for this trigger (eventCache.narrows)
	// set is the trigger's buffer set, enforced whether the equivalence
	// tests hold by construction there.
	set      *rset
	enforced bool
	// cols[comp] are the attributes comp's buffers keep as columns.
	cols [][]int
	// verify checks each candidate found; direct: it would hand every
	// candidate on unchanged (nothing to verify, no timing), so emit
	// skips it.
	verify *verifyStage
	direct bool
	// found and verified are the filter's and verify's counts.
	found, verified *OpStats
	// rowCol[comp] is comp's column of the run's row when the
	// transformation after verify returns events only, each positive at
	// most once (-1: comp is not returned); nil otherwise. Then a direct
	// search that runs alone (r.own nil) writes each event it binds
	// into the row and hands the row to the consumer itself (rowDirect);
	// report adds those matches to the counts of the operators skipped.
	rowCol    []int
	rowDirect bool
	celled    bool // the levels' cells are set for rowDirect
	spare     Cell // the cell of a component not returned
	// pp lists partners, for a plan of their shape (recep_partners.go).
	pp *partners
}

// level is the search's state for positive j: what the plan fixes, then
// what each trigger sets.
type level struct {
	comp int
	// before are the closures and narrowed negations between the
	// previous positive and this one (before P1 for the first).
	before []int
	// checks and pre are Checks[j] and Pre[j] compiled (recep_num.go).
	checks, pre levelChecks
	// cuts: the next level has components before it; last: the next is
	// the trigger and nothing cuts its range.
	cuts, last bool
	list       rbuf  // with pre, the part of the window passing them
	sel        []int // the candidates of the loop (levelChecks.candidates)
	// src is what the positive is chosen from for the current trigger:
	// its buffer, or list. end is the index in src after its last event
	// at or before hi, the latest time from which the rest of the
	// pattern can be completed; cell is where its event goes in the row.
	src  *rbuf
	hi   int64
	end  int
	cell *Cell
	at   int // the index in src of the event the level has bound
}

func (r *runner) newQueryFilter(base opBase, op *planner.QueryFilter) *queryFilter {
	p := r.plan
	n := len(op.Positives)
	q := &queryFilter{opBase: base, op: op, b: r.bind(), pos: op.Positives,
		levels: ofRun[level](r, n), cols: make([][]int, len(p.Components))}
	j := 0
	for _, c := range p.Components {
		switch {
		case c.Kind == planner.Single:
			j++
		case c.Next < 0: // trailing: AttributeVerify, once time passes
		case c.Kind == planner.Closure || slices.Contains(op.Narrowed, c.Index):
			q.levels[j].before = append(q.levels[j].before, c.Index)
		}
	}
	compiled := func(j int, preds [][]*planner.Pred) levelChecks {
		if j >= len(preds) {
			return levelChecks{}
		}
		return newLevelChecks(r, compileChecks(p, q.pos[j], preds[j], &q.cols[q.pos[j]]))
	}
	for j, comp := range q.pos {
		l := &q.levels[j]
		l.comp, l.checks, l.pre = comp, compiled(j, op.Checks), compiled(j, op.Pre)
		if j+1 < n {
			l.cuts = len(q.levels[j+1].before) > 0
			l.last = j+1 == n-1 && !l.cuts
		}
	}
	// A check's bound side read by a level before the trigger is read
	// from that level's columns (fastCheck.from); Pre reads the trigger.
	for j := range q.levels {
		for k := range q.levels[j].checks.cur {
			f := &q.levels[j].checks.cur[k]
			if b := slices.Index(q.pos, f.comp); f.fast && b >= 0 && b < n-1 {
				f.from, f.bcol = &q.levels[b], colOf(&q.cols[f.comp], f.slot)
			}
		}
	}
	for j := range q.levels {
		q.levels[j].list.cols = make([][]float64, len(q.cols[q.pos[j]]))
	}
	q.found = &r.stats.Operators[q.id]
	return q
}

// search finds the candidates of the trigger bound in b in the buffer set
// the cache has chosen.
func (q *queryFilter) search(b *planner.Binding, set *rset, enforced bool) {
	prev := q.in()
	q.set, q.enforced = set, enforced
	n := len(q.pos)
	t := b.Events[q.pos[n-1]]
	q.trig = t.TS
	lo := int64(math.MinInt64)
	if q.op.HasWindow {
		lo = satSub(t.TS, q.op.Window)
	}
	q.route(enforced)
	*q.levels[n-1].cell = Cell{Event: t}
	q.narrow = q.cache.narrows(t)
	for j := range n - 1 {
		l := &q.levels[j]
		l.src = &q.set.bufs[l.comp]
		if len(l.pre.checks) > 0 {
			l.src = q.filterLevel(l, lo)
		}
		l.checks.over(l.src)
	}
	q.levels[n-1].hi = t.TS
	for j := n - 2; j >= 0; j-- {
		l := &q.levels[j]
		k := l.src.from(q.levels[j+1].hi)
		if k == l.src.head {
			q.done(prev)
			return
		}
		l.hi, l.end = l.src.ts[k-1], k
	}
	if lo, hi, ok := q.cut(0, lo, q.levels[0].hi, lo); ok {
		q.choose(0, lo, hi)
	}
	q.done(prev) // not deferred: a panic ends the run, whose end stops the clock
}

// route sets whether the search hands its candidates past verify
// (direct) and whether it writes the row itself (rowDirect), with the
// levels' cells.
func (q *queryFilter) route(enforced bool) {
	direct := enforced && q.verify.direct()
	if rowDirect := direct && q.rowCol != nil && q.r.own == nil; !q.celled || rowDirect != q.rowDirect {
		q.rowDirect, q.celled = rowDirect, true
		for j := range q.levels {
			q.levels[j].cell = q.cell(j)
		}
	}
	q.direct = direct
}

// filterLevel returns the events of level l's buffer in the window
// before the trigger that pass its Pre.
func (q *queryFilter) filterLevel(l *level, lo int64) *rbuf {
	buf, pre := &q.set.bufs[l.comp], &l.pre
	i0, i1 := buf.from(lo), buf.from(q.trig)
	q.r.steps.tickN(q.r, uint(i1-i0)) // the ticker's, which inlines (runner.tickN does not)
	pre.over(buf)
	pre.bind(q.b)
	if len(pre.cur) == 1 && pre.cur[0].ok && pre.cur[0].finite && len(buf.cols) == 1 && !buf.nan {
		l.list.keep(buf, i0, i1, &pre.cur[0])
		return &l.list
	}
	sel := pre.candidates(l.sel, i0, i1)
	l.sel = sel
	n := 0
	for _, i := range sel {
		if i < 0 {
			if i = ^i; !q.passBound(pre, l.comp, buf.evs[i], i) {
				continue
			}
		}
		sel[n] = i
		n++
	}
	l.list.gather(buf, sel[:n])
	return &l.list
}

// passBound binds ev, event i of the loop's buffer, to comp and checks it
// by every check of the loop (levelChecks.passAll).
func (q *queryFilter) passBound(checks *levelChecks, comp int, ev *event.Event, i int) bool {
	q.b.Events[comp] = ev
	ok := checks.passAll(q.b, i)
	q.b.Events[comp] = nil
	return ok
}

// choose binds positive j to each buffered event in [lo, hi]. Below the
// trigger every event chosen is a candidate (its range is (ts, ts(Pn)],
// with nothing before Pn to cut it), so that level emits without
// recursing.
func (q *queryFilter) choose(j int, lo, hi int64) {
	if j == len(q.pos)-1 {
		if lo <= q.trig && q.trig <= hi {
			q.emit()
		}
		return
	}
	l := &q.levels[j]
	src, checks := l.src, &l.checks
	i0, i1 := src.from(lo), l.end
	if hi != l.hi {
		i1 = src.from(satAdd(hi, 1))
	}
	if i0 >= i1 {
		return
	}
	q.r.steps.tickN(q.r, uint(i1-i0))
	if l.last && q.rowDirect { // the row is the match: no binding to fill
		q.deliverRange(l, i0, i1)
		return
	}
	next := &q.levels[j+1]
	pairs := !l.cuts && next.last && q.rowDirect
	if pairs && len(checks.cur) == 0 { // every event in range is a candidate
		q.pairs(l, next, nil, i0, i1)
		return
	}
	checks.bind(q.b)
	sel := checks.candidates(l.sel, i0, i1)
	l.sel = sel
	if pairs {
		q.pairs(l, next, sel, 0, len(sel))
		return
	}
	comp, bound, evs, ts, cell := l.comp, q.b.Events, src.evs, src.ts, l.cell
	for _, i := range sel {
		if i < 0 {
			if i = ^i; !q.passBound(checks, comp, evs[i], i) {
				continue
			}
		}
		cell.Event = evs[i]
		bound[comp], l.at = evs[i], i
		if l.last {
			q.emit()
			continue
		}
		from := ts[i] + 1
		if !l.cuts {
			q.choose(j+1, from, next.hi)
		} else if lo2, hi2, ok := q.cut(j+1, from, next.hi, from); ok {
			q.choose(j+1, lo2, hi2)
		}
	}
	bound[comp] = nil
}

// pairs binds level l to each of its candidates sel[x0:x1] (nil sel: the
// events of its source in [x0, x1)) and delivers, without a call to
// choose, the matches with the events of next, the last level before the
// trigger, with nothing to cut its range: those after the candidate that
// pass next's checks. That range starts after the
// candidate's time, which grows along sel: a cursor (k) finds the start,
// moving over events that the previous range's loop read anyway.
//
// When next's one check is fast, compares with l's column and its
// product is never NaN (plain), a candidate that needs no passBound and
// whose value there is a number is delivered here, by one loop over the
// range that tests each event and delivers it: no binding, no list of
// candidates (the count sink adds the number that pass). Every other
// candidate goes to pairOne.
func (q *queryFilter) pairs(l, next *level, sel []int, x0, x1 int) {
	r, cell, src := q.r, l.cell, l.src
	evs, ts, end := src.evs, src.ts, next.end
	nts := next.src.ts[:end]
	var pair *fastCheck
	var pcol, ncol []float64
	var nevs []*event.Event
	if c := next.checks.cur; len(c) == 1 && c[0].from == l && c[0].finite && !next.src.nan {
		pair, pcol = &c[0], src.cols[c[0].bcol]
		ncol, nevs = pair.col[:end], next.src.evs[:end]
	}
	var fk float64
	var op numCmp
	if pair != nil {
		fk, op = pair.k, pair.op
	}
	k := -1
	for x := x0; x < x1; x++ {
		i := x
		if sel != nil {
			i = sel[x]
		}
		at := i
		if at < 0 {
			at = ^i
		}
		from := ts[at] + 1
		if k < 0 {
			k = next.src.from(from)
		}
		for k < end && nts[k] < from {
			k++
		}
		if k == end {
			break // so are the later candidates' ranges
		}
		if pair == nil || i < 0 {
			q.pairOne(l, next, i, k)
			continue
		}
		b := pair.kb * pcol[i]
		if b != b {
			q.pairOne(l, next, i, k)
			continue
		}
		cell.Event = evs[i]
		r.steps.tickN(r, uint(end-k))
		if r.counts {
			r.stats.Matches += int64(op.count(ncol[k:], fk, b))
			continue
		}
		ncell := next.cell
		for n := k; n < len(ncol); n++ {
			if op.holds(fk*ncol[n], b) {
				ncell.Event = nevs[n]
				r.emitRow()
			}
		}
	}
}

// pairOne is pairs for candidate i of l (^i: passBound decides), whose
// range in next's source starts at k.
func (q *queryFilter) pairOne(l, next *level, i, k int) {
	comp, bound, evs, end := l.comp, q.b.Events, l.src.evs, next.end
	if i < 0 {
		if i = ^i; !q.passBound(&l.checks, comp, evs[i], i) {
			return
		}
	}
	l.cell.Event = evs[i]
	q.r.steps.tickN(q.r, uint(end-k))
	bound[comp], l.at = evs[i], i
	if c := next.checks.cur; len(c) == 1 && c[0].from == l {
		pair := &c[0]
		if pair.bindTo(l.src.cols[pair.bcol][i]); pair.ok {
			q.deliverAll(next, pair.selectIn(resize(next.sel, end-k), k, end))
			bound[comp] = nil
			return
		}
	}
	q.deliverRange(next, k, end)
	bound[comp] = nil
}

// deliverRange hands the consumer, as a match, the row with each event of
// level l's source in [i0, i1) that passes its checks: the level before
// the trigger, when the search writes the row. A loop over the column
// chooses them without a branch that follows the data, then a loop
// delivers them.
func (q *queryFilter) deliverRange(l *level, i0, i1 int) {
	l.checks.bind(q.b)
	q.deliverAll(l, l.checks.candidates(l.sel, i0, i1))
}

// deliverAll hands the consumer, as a match, the row with each
// candidate of level l that passes its checks: the level before the
// trigger, when the search writes the row.
//
// The ticker has counted every event of the range (its caller's tickN),
// so the loop need not look at ctx per match (emitRow).
//
// When the consumer only counts (runner.counts), the matches are added
// up, with no row written.
func (q *queryFilter) deliverAll(l *level, sel []int) {
	l.sel = sel // for reuse
	evs, cell, r := l.src.evs, l.cell, q.r
	if r.counts {
		n := len(sel)
		for _, i := range sel {
			if i < 0 && !q.passBound(&l.checks, l.comp, evs[^i], ^i) {
				n--
			}
		}
		r.stats.Matches += int64(n)
		return
	}
	for _, i := range sel {
		if i < 0 {
			if i = ^i; !q.passBound(&l.checks, l.comp, evs[i], i) {
				continue
			}
		}
		cell.Event = evs[i]
		r.emitRow()
	}
}

// cut narrows positive j's range [lo, hi] by the components before it,
// whose events lie at or after from.
func (q *queryFilter) cut(j int, lo, hi, from int64) (int64, int64, bool) {
	for _, ci := range q.levels[j].before {
		c := q.r.plan.Components[ci]
		buf := &q.set.bufs[ci]
		i := buf.from(from)
		if c.Kind == planner.Closure {
			// Only buffered events can be elements: Pj comes after the K-th.
			if i+c.K > len(buf.ts) {
				return lo, hi, false
			}
			lo = max(lo, satAdd(buf.ts[i+c.K-1], 1))
			continue
		}
		if !q.narrow {
			continue // AttributeVerify checks it with the equivalence tests
		}
		res := q.cache.op.Buffers[ci].Residual
		t := q.b.Events[q.pos[len(q.pos)-1]]
		for ; i < len(buf.ts) && buf.ts[i] < hi; i++ {
			q.r.tick()
			e := buf.evs[i]
			if !q.enforced && !q.cache.agrees(e, t) {
				continue
			}
			if len(res) == 0 || q.r.blocks(c, e, q.b, res, false) {
				hi = buf.ts[i] // Pj may not come after a blocking event
				break
			}
		}
	}
	return lo, hi, lo <= hi
}

// cell is where positive j's event goes in the row: its column when the
// search writes the row, else spare.
func (q *queryFilter) cell(j int) *Cell {
	if c := q.rowCol; q.rowDirect && c[q.pos[j]] >= 0 {
		return &q.r.row[c[q.pos[j]]]
	}
	return &q.spare
}

// planRow sets rowCol when the stage after verify is the transformation
// and it returns positives' events only, each at most once.
func (q *queryFilter) planRow() {
	t, ok := q.verify.next.(*transformStage)
	if !ok {
		return
	}
	col := make([]int, len(q.r.plan.Components))
	for i := range col {
		col[i] = -1
	}
	for i, c := range t.op.Columns {
		if c.Kind != planner.ColEvent || !slices.Contains(q.pos, c.Comp) || col[c.Comp] >= 0 {
			return
		}
		col[c.Comp] = i
	}
	q.rowCol = col
}

// emit hands the candidate in q.b to AttributeVerify, or past it when it
// is direct, or, when the search writes the row, the row to the consumer.
func (q *queryFilter) emit() {
	if q.rowDirect {
		q.r.deliver()
		return
	}
	q.found.Out++
	if q.direct {
		q.verified.In++
		q.verified.Out++
		q.verify.next.push(q.b)
		return
	}
	q.verify.push(q.b, q.set, q.enforced)
}
