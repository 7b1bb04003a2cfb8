package exec

import (
	"math"
	"slices"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// andJoin runs a flat AND (planner.Algebra.Join) as a join, not as the
// products of algebraSource: an event that can be item i (its type, the
// conjuncts on i alone) joins the events buffered for the other items that
// are still in its window and share its value of the first equivalence
// test (or lack the attribute), then is buffered for i. Each match comes
// out once, at its last event in stream order, as that event's item: the
// others are earlier events, so an AND of k items costs its matches and
// their partial joins, never k! orders. §9.5's checks hold per match: no
// event twice, the window, every equivalence test, then the selection,
// each conjunct as soon as its variables are bound.
type andJoin struct {
	r     *runner
	op    *planner.Algebra
	next  stage
	b     *planner.Binding
	items []*joinItem
	// groups are the buffered events by equivalence key, wild those
	// without the attribute: one look-up per event, not one per item.
	groups map[event.Key]*group
	wild   group
	// byType lists the items each type can be.
	byType [][]int
	// bound is the event of each item in the join being built, refs the
	// equivalence values fixed by its first d items (row d).
	bound []*event.Event
	refs  [][]event.Value
	// cands are the buffers each depth of the join reads: its item's
	// wild events, and its group of the new event's key (nil: every
	// group, for a new event without the attribute).
	cands []*buffer
	// plans are the joins from each item's new event: plan is the one
	// running.
	plans []joinPlan
	plan  *joinPlan
	lo    int64 // the oldest ts the current join may bind
	// agreed: the current join's candidates agree on the equivalence
	// test by their group (one test, a new event with an exact key), or
	// there is no test.
	agreed bool
	swept  int64
	// cols is each item's column in the run's row when the output is
	// the items' events (a query without RETURN), else nil; direct: the
	// current join writes the row itself as it binds and hands it to the
	// consumer, the output stage's work without its call per match
	// (writesRows).
	cols   []int
	direct bool
	outID  int // the output stage's operator
}

// joinPlan is the join from a new event of one item: the order it binds
// the items in (that one first), and per depth the conjuncts whose last
// variable is bound there.
type joinPlan struct {
	order []int
	at    [][]*planner.Pred
}

// joinItem is one item of the AND: its component and the conjuncts on it
// alone.
type joinItem struct {
	comp    int
	filters []*planner.Pred
}

// group is the buffered events of one key, by item.
type group struct{ bufs []buffer }

// buffer is an item's events of one key in the window, oldest first.
// shared: some event it got could be other items too (sharedTS the
// newest such), so that a join must check that it binds each event once.
type buffer struct {
	evs      []*event.Event
	shared   bool
	sharedTS int64
}

// repeats says whether an event of buf, pruned to the join's window, may
// be bound already at a lower depth: only an event that fit several
// items is in several buffers (the new event is buffered after its
// joins).
func (buf *buffer) repeats(lo int64) bool { return buf.shared && buf.sharedTS >= lo }

func newAndJoin(r *runner, op *planner.Algebra, next stage) *andJoin {
	k := len(op.Root.Items)
	j := &andJoin{r: r, op: op, next: next, b: r.bind(), groups: map[event.Key]*group{}, wild: group{bufs: make([]buffer, k)}, bound: ofRun[*event.Event](r, k), refs: make([][]event.Value, k+1), cands: ofRun[*buffer](r, k)}
	for i := range j.refs {
		j.refs[i] = ofRun[event.Value](r, len(op.Equivs))
	}
	for i, n := range op.Root.Items {
		it := &joinItem{comp: n.Comp}
		j.items = append(j.items, it)
		for _, t := range n.Types {
			for len(j.byType) <= t {
				j.byType = append(j.byType, nil)
			}
			j.byType[t] = append(j.byType[t], i)
		}
	}
	for i := range j.items {
		j.plans = append(j.plans, j.planFrom(i))
	}
	j.cols, j.outID = j.rowCols(r.plan.Output), len(r.stats.Operators)-1
	for _, pr := range op.Preds {
		if len(pr.Vars) == 1 {
			for _, it := range j.items {
				if it.comp == pr.Vars[0] {
					it.filters = append(it.filters, pr)
				}
			}
		}
	}
	return j
}

// rowCols is each item's column of out when out is the items' events
// only, else nil.
func (j *andJoin) rowCols(out planner.Operator) []int {
	t, ok := out.(*planner.Transformation)
	if !ok {
		return nil
	}
	cols := make([]int, len(j.items))
	for x, it := range j.items {
		cols[x] = slices.IndexFunc(t.Columns, func(c planner.Column) bool { return c.Kind == planner.ColEvent && c.Comp == it.comp })
	}
	if len(t.Columns) != len(cols) || slices.Contains(cols, -1) {
		return nil
	}
	return cols
}

// key is e's group: its value of the first equivalence test, as a key
// (wild when absent or when there is no test).
func (j *andJoin) key(e *event.Event) (event.Key, bool) {
	if len(j.op.Equivs) == 0 {
		return event.Key{}, true
	}
	v := j.op.Equivs[0].Value(e)
	if v.IsAbsent() {
		return event.Key{}, true
	}
	return event.PartitionKey(v).Key(), false
}

func (j *andJoin) process(ev *event.Event) {
	if ev.Type >= len(j.byType) || len(j.byType[ev.Type]) == 0 {
		return
	}
	clear(j.b.Lists)
	key, wild := j.key(ev)
	g := &j.wild
	if !wild {
		g = j.groups[key] // nil: no event of ev's key is buffered
	}
	// Every match binds ev: with the partition's attribute, ev fixes the
	// partition of them all.
	by := j.r.plan.Split.By
	j.r.onePartition = by != nil && !by.Value(ev).IsAbsent()
	var fit []int // the items ev can be, buffered once every join is done
	for _, i := range j.byType[ev.Type] {
		it := j.items[i]
		clear(j.b.Events)
		j.b.Events[it.comp] = ev
		if !j.passes(it.filters) {
			continue
		}
		fit = append(fit, i)
		j.join(ev, i, g, wild)
	}
	if len(fit) > 0 && g == nil {
		g = &group{bufs: make([]buffer, len(j.items))}
		j.groups[key] = g
	}
	for _, i := range fit {
		buf := &g.bufs[i]
		buf.evs = append(buf.evs, ev)
		if len(fit) > 1 {
			buf.shared, buf.sharedTS = true, ev.TS
		}
	}
}

func (j *andJoin) passes(preds []*planner.Pred) bool {
	for _, pr := range preds {
		if !pr.Eval(j.b) {
			return false
		}
	}
	return true
}

// join emits the matches that bind ev as item i with earlier events.
func (j *andJoin) join(ev *event.Event, i int, g *group, wild bool) {
	j.lo = math.MinInt64
	if j.op.HasWindow {
		j.lo = satSub(ev.TS, j.op.Window)
	}
	j.plan = &j.plans[i]
	for d, x := range j.plan.order[1:] {
		w := &j.wild.bufs[x]
		w.evs = j.live(w.evs)
		j.cands[d+1] = nil
		if !wild && g != nil {
			buf := &g.bufs[x]
			buf.evs = j.live(buf.evs)
			j.cands[d+1] = buf
		}
	}
	j.agreed = len(j.op.Equivs) == 0 // nothing to agree on
	if !wild && len(j.op.Equivs) == 1 {
		v := j.op.Equivs[0].Value(ev) // NaN equals nothing, not even its group
		j.agreed = !v.IsFloat() || !math.IsNaN(v.Float())
	}
	clear(j.b.Events)
	j.b.Events[j.items[i].comp] = ev
	if j.direct = j.writesRows(); j.direct {
		j.r.row[j.cols[i]].Event = ev
	}
	clear(j.refs[0])
	switch {
	case !j.bind(0, ev, false):
	case len(j.plan.order) == 1: // an AND of one item
		j.emit()
	default:
		j.extend(1, wild)
	}
}

// planFrom is the join from a new event of item i: the others follow in
// their order, each multi-variable conjunct at the depth of its last
// variable.
func (j *andJoin) planFrom(i int) joinPlan {
	pl := joinPlan{order: []int{i}, at: make([][]*planner.Pred, len(j.items))}
	for x := range j.items {
		if x != i {
			pl.order = append(pl.order, x)
		}
	}
	depth := map[int]int{}
	for d, x := range pl.order {
		depth[j.items[x].comp] = d
	}
	for _, pr := range j.op.Preds {
		if len(pr.Vars) < 2 {
			continue
		}
		d := 0
		for _, v := range pr.Vars {
			d = max(d, depth[v])
		}
		pl.at[d] = append(pl.at[d], pr)
	}
	return pl
}

// bind puts e at depth d: it must agree with the equivalence values fixed
// so far (which it extends into refs[d+1]), unless agreed says it does,
// and pass the conjuncts filed at d.
func (j *andJoin) bind(d int, e *event.Event, agreed bool) bool {
	if !agreed {
		copy(j.refs[d+1], j.refs[d])
		for q, eq := range j.op.Equivs {
			if !eq.Agrees(&j.refs[d+1][q], e) {
				return false
			}
		}
	}
	j.bound[d] = e
	return j.passes(j.plan.at[d])
}

// emit hands on the match the join has bound; report counts the
// operators' matches of a direct join.
func (j *andJoin) emit() {
	if !j.direct {
		j.r.stats.Operators[0].Out++
		j.next.push(j.b)
		return
	}
	j.r.deliver()
}

// extend binds depth d and on from the buffers, emitting each match.
func (j *andJoin) extend(d int, wild bool) {
	x := j.plan.order[d]
	j.try(d, x, &j.wild.bufs[x], wild)
	if !wild {
		if buf := j.cands[d]; buf != nil {
			j.try(d, x, buf, wild)
		}
		return
	}
	for _, g := range j.groups {
		buf := &g.bufs[x]
		buf.evs = j.live(buf.evs)
		j.try(d, x, buf, wild)
	}
}

// try binds each event of buf, pruned to the join's window, as item x
// at depth d, and goes on.
func (j *andJoin) try(d, x int, buf *buffer, wild bool) {
	if len(buf.evs) == 0 {
		return
	}
	it, last, repeats := j.items[x], d == len(j.plan.order)-1, buf.repeats(j.lo)
	if last && j.direct && j.agreed && !repeats && len(j.plan.at[d]) == 0 {
		j.each(x, buf)
		return
	}
	for _, e := range buf.evs {
		j.r.tick()
		if repeats && slices.Contains(j.bound[:d], e) {
			continue
		}
		j.b.Events[it.comp] = e
		if j.direct {
			j.r.row[j.cols[x]].Event = e
		}
		switch {
		case !j.bind(d, e, j.agreed):
		case last:
			j.emit()
		default:
			j.extend(d+1, wild)
		}
	}
	j.b.Events[it.comp] = nil
}

// each emits a match for every event of buf as the last item x: the
// join that try runs when nothing is left to check (the equivalence
// test agreed by the group, no conjunct at the last depth, no event
// bound twice), so that a match costs its row and its hand-off.
func (j *andJoin) each(x int, buf *buffer) {
	r := j.r
	r.tickN(uint(len(buf.evs))) // each a match: emitRow leaves ctx to the ticker
	cell := &r.row[j.cols[x]]
	for _, e := range buf.evs {
		cell.Event = e
		r.emitRow()
	}
}

// live drops the events before j.lo from a buffer (ts order): copied down
// once half of it is dead, so that pruning is linear.
func (j *andJoin) live(evs []*event.Event) []*event.Event {
	k, _ := slices.BinarySearchFunc(evs, j.lo, func(e *event.Event, lo int64) int {
		if e.TS < lo {
			return -1
		}
		return 1
	})
	if k > 0 && 2*k >= len(evs) {
		n := copy(evs, evs[k:])
		clear(evs[n:])
		return evs[:n]
	}
	return evs[k:]
}

// advance sweeps the groups once a window: a key no event comes for
// would keep its buffer.
func (j *andJoin) advance(ts int64) {
	if !j.op.HasWindow || satSub(ts, j.swept) <= j.op.Window {
		return
	}
	j.swept, j.lo = ts, satSub(ts, j.op.Window)
	j.wild.sweep(j)
	for k, g := range j.groups {
		if g.sweep(j) == 0 {
			delete(j.groups, k)
		}
	}
}

// sweep prunes g's buffers to the join's window; it returns how many
// events they keep.
func (g *group) sweep(j *andJoin) int {
	n := 0
	for x := range g.bufs {
		g.bufs[x].evs = j.live(g.bufs[x].evs)
		n += len(g.bufs[x].evs)
	}
	return n
}

func (j *andJoin) untimed() bool { return !j.op.HasWindow }
func (j *andJoin) finish()       {}

// writesRows says whether the join writes each match's row itself (cols):
// not in a worker that decides at the binding which matches are its own,
// nor with the operators timed.
func (j *andJoin) writesRows() bool { return j.cols != nil && j.r.own == nil && !j.r.clock.on }

func (j *andJoin) report(st *Stats) {
	if j.writesRows() {
		// Every match went through the source and the output, once each.
		st.Operators[0].Out = st.Matches
		st.Operators[j.outID].In = st.Matches
		st.Operators[j.outID].Out = st.Matches
	}
}
