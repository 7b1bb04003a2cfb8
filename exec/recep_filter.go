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
	op    *planner.QueryFilter
	cache *eventCache
	b     *planner.Binding
	pos   []int // positive singles; the last is the trigger
	// before[j] are the closures and narrowed negations between pos[j-1]
	// and pos[j] (before P1 for j = 0).
	before [][]int
	hi     []int64
	trig   int64 // the trigger's timestamp
	narrow bool  // negations may narrow for this trigger (eventCache.narrows)
	// set is the trigger's buffer set, enforced whether the equivalence
	// tests hold by construction there.
	set      *rset
	enforced bool
	// src[j] is what positive j is chosen from for the current trigger:
	// its live buffer, or (with Pre[j]) the part of its window passing
	// them, kept in lists[j].
	src, lists [][]*event.Event
	// verify checks each candidate found.
	verify *verifyStage
}

func (r *runner) newQueryFilter(base opBase, op *planner.QueryFilter) *queryFilter {
	p := r.plan
	q := &queryFilter{opBase: base, op: op, b: r.bind(), pos: op.Positives,
		before: make([][]int, len(op.Positives)),
		hi:     make([]int64, len(op.Positives)), src: make([][]*event.Event, len(op.Positives)),
		lists: make([][]*event.Event, len(op.Positives))}
	j := 0
	for _, c := range p.Components {
		switch {
		case c.Kind == planner.Single:
			j++
		case c.Next < 0: // trailing: AttributeVerify, once time passes
		case c.Kind == planner.Closure || slices.Contains(op.Narrowed, c.Index):
			q.before[j] = append(q.before[j], c.Index)
		}
	}
	return q
}

// search finds the candidates of the trigger bound in b in the buffer set
// the cache has chosen.
func (q *queryFilter) search(b *planner.Binding, set *rset, enforced bool) {
	prev := q.in()
	defer q.done(prev)
	q.set, q.enforced = set, enforced
	n := len(q.pos)
	t := b.Events[q.pos[n-1]]
	q.trig, q.narrow = t.TS, q.cache.narrows(t)
	lo := int64(math.MinInt64)
	if q.op.HasWindow {
		lo = satSub(t.TS, q.op.Window)
	}
	for j := range n - 1 {
		q.src[j] = q.set.bufs[q.pos[j]].live()
		if j < len(q.op.Pre) && len(q.op.Pre[j]) > 0 {
			q.src[j] = q.filterLevel(j, lo)
		}
	}
	q.hi[n-1] = t.TS
	for j := n - 2; j >= 0; j-- {
		evs := q.src[j]
		k := atOrAfter(evs, q.hi[j+1]) - 1
		if k < 0 {
			return
		}
		q.hi[j] = evs[k].TS
	}
	if lo, hi, ok := q.cut(0, lo, q.hi[0], lo); ok {
		q.choose(0, lo, hi)
	}
}

// filterLevel returns the events of positive j's buffer in the window
// before the trigger that pass Pre[j].
func (q *queryFilter) filterLevel(j int, lo int64) []*event.Event {
	comp := q.pos[j]
	evs := q.set.bufs[comp].live()
	l := q.lists[j][:0]
next:
	for i := atOrAfter(evs, lo); i < len(evs) && evs[i].TS < q.trig; i++ {
		q.r.tick()
		q.b.Events[comp] = evs[i]
		for _, pr := range q.op.Pre[j] {
			if !pr.Eval(q.b) {
				continue next
			}
		}
		l = append(l, evs[i])
	}
	q.b.Events[comp] = nil
	q.lists[j] = l
	return l
}

// choose binds positive j to each buffered event in [lo, hi].
func (q *queryFilter) choose(j int, lo, hi int64) {
	if j == len(q.pos)-1 {
		if lo <= q.trig && q.trig <= hi {
			q.emit()
		}
		return
	}
	comp := q.pos[j]
	evs := q.src[j]
	var checks []*planner.Pred
	if j < len(q.op.Checks) {
		checks = q.op.Checks[j]
	}
next:
	for i := atOrAfter(evs, lo); i < len(evs) && evs[i].TS <= hi; i++ {
		q.r.tick()
		e := evs[i]
		q.b.Events[comp] = e
		for _, pr := range checks {
			if !pr.Eval(q.b) {
				continue next
			}
		}
		if lo2, hi2, ok := q.cut(j+1, e.TS+1, q.hi[j+1], e.TS+1); ok {
			q.choose(j+1, lo2, hi2)
		}
	}
	q.b.Events[comp] = nil
}

// cut narrows positive j's range [lo, hi] by the components before it,
// whose events lie at or after from.
func (q *queryFilter) cut(j int, lo, hi, from int64) (int64, int64, bool) {
	for _, ci := range q.before[j] {
		c := q.r.plan.Components[ci]
		evs := q.set.bufs[ci].live()
		i := atOrAfter(evs, from)
		if c.Kind == planner.Closure {
			// Only buffered events can be elements: Pj comes after the K-th.
			if i+c.K > len(evs) {
				return lo, hi, false
			}
			lo = max(lo, satAdd(evs[i+c.K-1].TS, 1))
			continue
		}
		if !q.narrow {
			continue // AttributeVerify checks it with the equivalence tests
		}
		res := q.cache.op.Buffers[ci].Residual
		t := q.b.Events[q.pos[len(q.pos)-1]]
		for ; i < len(evs) && evs[i].TS < hi; i++ {
			q.r.tick()
			if !q.enforced && !q.cache.agrees(evs[i], t) {
				continue
			}
			if len(res) == 0 || q.r.blocks(c, evs[i], q.b, res, false) {
				hi = evs[i].TS // Pj may not come after a blocking event
				break
			}
		}
	}
	return lo, hi, lo <= hi
}

// emit hands the candidate in q.b to AttributeVerify.
func (q *queryFilter) emit() {
	q.r.stats.Operators[q.id].Out++
	q.verify.push(q.b, q.set, q.enforced)
}
