package exec

import (
	"math"
	"slices"

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
	// its buffer, or (with Pre[j]) the part of its window passing them,
	// kept in lists[j].
	src   []*rbuf
	lists []rbuf
	// checks[j] and pre[j] are Checks[j] and Pre[j] compiled (recep_num.go);
	// cols[comp] are the attributes comp's buffers keep as columns.
	checks, pre []levelChecks
	cols        [][]int
	// verify checks each candidate found; direct: it would hand every
	// candidate on unchanged (nothing to verify, no timing), so emit
	// skips it.
	verify *verifyStage
	direct bool
}

func (r *runner) newQueryFilter(base opBase, op *planner.QueryFilter) *queryFilter {
	p := r.plan
	n := len(op.Positives)
	q := &queryFilter{opBase: base, op: op, b: r.bind(), pos: op.Positives,
		before: make([][]int, n), hi: make([]int64, n), src: make([]*rbuf, n), lists: make([]rbuf, n),
		checks: make([]levelChecks, n), pre: make([]levelChecks, n), cols: make([][]int, len(p.Components))}
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
	level := func(j int, preds [][]*planner.Pred) levelChecks {
		var l levelChecks
		if j < len(preds) {
			l.checks = compileChecks(p, q.pos[j], preds[j], &q.cols[q.pos[j]])
			l.bound = make([]float64, len(l.checks))
		}
		return l
	}
	for j := range n {
		q.checks[j], q.pre[j] = level(j, op.Checks), level(j, op.Pre)
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
		q.src[j] = &q.set.bufs[q.pos[j]]
		if len(q.pre[j].checks) > 0 {
			q.src[j] = q.filterLevel(j, lo)
		}
	}
	q.hi[n-1] = t.TS
	for j := n - 2; j >= 0; j-- {
		src := q.src[j]
		k := src.from(q.hi[j+1]) - 1
		if k < src.head {
			return
		}
		q.hi[j] = src.ts[k]
	}
	q.direct = enforced && q.verify.direct()
	if lo, hi, ok := q.cut(0, lo, q.hi[0], lo); ok {
		q.choose(0, lo, hi)
	}
}

// filterLevel returns the events of positive j's buffer in the window
// before the trigger that pass Pre[j].
func (q *queryFilter) filterLevel(j int, lo int64) *rbuf {
	comp := q.pos[j]
	buf := &q.set.bufs[comp]
	l, pre := &q.lists[j], &q.pre[j]
	l.reset()
	pre.bind(q.b)
	for i := buf.from(lo); i < len(buf.ts) && buf.ts[i] < q.trig; i++ {
		q.r.tick()
		q.b.Events[comp] = buf.evs[i]
		if pre.pass(q.b, buf, i) {
			l.pushFrom(buf, i)
		}
	}
	q.b.Events[comp] = nil
	return l
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
	comp := q.pos[j]
	src, checks := q.src[j], &q.checks[j]
	checks.bind(q.b)
	last := j == len(q.pos)-2 && len(q.before[j+1]) == 0
	for i := src.from(lo); i < len(src.ts) && src.ts[i] <= hi; i++ {
		q.r.tick()
		q.b.Events[comp] = src.evs[i]
		if !checks.pass(q.b, src, i) {
			continue
		}
		if last {
			q.emit()
			continue
		}
		from := src.ts[i] + 1
		if lo2, hi2, ok := q.cut(j+1, from, q.hi[j+1], from); ok {
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

// emit hands the candidate in q.b to AttributeVerify, or past it when it
// is direct.
func (q *queryFilter) emit() {
	ops := q.r.stats.Operators
	ops[q.id].Out++
	if q.direct {
		ops[q.verify.id].In++
		q.verify.out(q.b)
		return
	}
	q.verify.push(q.b, q.set, q.enforced)
}
