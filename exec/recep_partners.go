package exec

import (
	"math"
	"math/bits"

	"github.com/sase-cep/sase/event"
)

// partners is ReCEP's search for SEQ(A a, B b, C c) WITHIN W, three
// positives with nothing between them and c the trigger, when b's one
// check reads a (pair: k * b.x op kb * a.x, ReCEP's Exp. 1 `a.price > 1.1
// * b.price`) and b's one Pre reads c (pre: `b.price < 0.9 * c.price`), a
// has no check, and no equivalence test constrains the buffers. Whether
// the pair check holds does not depend on c: when b comes, the a's before
// it within the window that pass it (its partners) are listed once, in an
// arena. A trigger then reads the b's of its window, keeps those pre
// passes (one loop over a column, no branch that follows the data), and
// delivers each with its partners from ts(c) - W on, with no check per
// match. Its matches come b by b, which the spec allows: a trigger
// completes them all at once.
//
// Both checks are fast and finite (their products never NaN); a NaN
// value in either buffer's columns, or a NaN bound of the pair check,
// turns the lists off for the rest of the run (broken), and a trigger whose
// pre bound is NaN takes the general search.
type partners struct {
	a, b   *level
	pair   *fastCheck // at b, bound by a
	pre    *fastCheck // Pre at b, bound by the trigger
	bcol   int        // b's buffer column pair reads
	precol int        // b's buffer column pre reads
	broken bool
	// kbFinite: pair's kb is neither 0 nor infinite, so that its bound
	// is NaN only for a NaN value, which a's buffer does not hold.
	kbFinite bool
	// The arena: evs[k] and ts[k] are the event and timestamp of partner
	// base + k. Event i of b's buffer has its partners in spans[i].
	evs  []*event.Event
	ts   []int64
	base int
}

// span is an event's partners, [from, to) in the arena: from moves on
// past those a trigger found older than its window, which the later
// triggers' windows, starting later, do not hold either.
type span struct{ from, to int }

// planPartners sets q.pp when the plan has the shape partners searches.
func (q *queryFilter) planPartners() {
	c := q.cache
	if len(q.pos) != 3 || !q.op.HasWindow || c.op.Partition != nil || len(c.equivs) > 0 {
		return
	}
	a, b := &q.levels[0], &q.levels[1]
	if len(a.before) > 0 || a.cuts || !b.last || len(a.checks.checks) > 0 || len(a.pre.checks) > 0 ||
		len(b.checks.checks) != 1 || len(b.pre.checks) != 1 {
		return
	}
	pair, pre := &b.checks.cur[0], &b.pre.cur[0]
	if !pair.fast || !pair.finite || pair.from != a || !pre.fast || !pre.finite || pre.comp != q.pos[2] {
		return
	}
	q.pp = &partners{a: a, b: b, pair: pair, pre: pre, bcol: b.checks.checks[0].col, precol: b.pre.checks[0].col,
		kbFinite: pair.kb != 0 && !math.IsInf(pair.kb, 0)}
}

// add lists the partners of the event just pushed into bbuf, b's buffer,
// whose a's are in abuf, a's buffer, and drops the arena's part that only
// b's pruned events read.
func (p *partners) add(abuf, bbuf *rbuf, w int64) {
	i := len(bbuf.ts) - 1
	dead := len(p.evs) // no older b live: every partner is dead
	if h := bbuf.head; h < i {
		dead = bbuf.spans[h].from - p.base
	}
	if dead >= 32 && 2*dead >= len(p.evs) {
		n := copy(p.evs, p.evs[dead:])
		clear(p.evs[n:])
		p.evs, p.ts = p.evs[:n], p.ts[:copy(p.ts, p.ts[dead:])]
		p.base += dead
	}
	from := p.base + len(p.evs)
	p.list(abuf, bbuf, i, w)
	bbuf.spans = append(bbuf.spans, span{from, p.base + len(p.evs)})
}

// list appends to the arena the partners of event i of bbuf.
func (p *partners) list(abuf, bbuf *rbuf, i int, w int64) {
	if p.broken = p.broken || abuf.nan || bbuf.nan; p.broken {
		return
	}
	tb, pair := bbuf.ts[i], p.pair
	v, kb, op := pair.k*bbuf.cols[p.bcol][i], pair.kb, pair.op
	j0, j1 := abuf.from(satSub(tb, w)), abuf.from(tb)
	xs, evs, ts := abuf.cols[pair.bcol][:j1], abuf.evs[:j1], abuf.ts[:j1]
	for j := j0; j < j1; j++ {
		bound := kb * xs[j]
		if !p.kbFinite && bound != bound {
			p.broken = true
			return
		}
		if op.holds(v, bound) {
			p.evs = append(p.evs, evs[j])
			p.ts = append(p.ts, ts[j])
		}
	}
}

// partnered searches for trigger t, in set, by partners when the search
// writes the row and no NaN is in the way (partners.usable); false: the
// general search must.
func (q *queryFilter) partnered(t *event.Event, set *rset, enforced bool) bool {
	if q.route(enforced); !q.rowDirect {
		return false
	}
	bound, ok := q.pp.usable(set, t)
	if !ok {
		return false
	}
	prev := q.in()
	*q.levels[2].cell = Cell{Event: t}
	q.pp.search(q, set, t, satSub(t.TS, q.op.Window), bound)
	q.done(prev) // not deferred: a panic ends the run, whose end stops the clock
	return true
}

// usable returns the bound of pre for trigger t, and whether partners
// may search: no NaN in either buffer's columns, in a pair bound or in
// the pre bound.
func (p *partners) usable(set *rset, t *event.Event) (float64, bool) {
	bound := p.pre.kb * numOf(t, p.pre.slot)
	return bound, !p.broken && !set.bufs[p.a.comp].nan && !set.bufs[p.b.comp].nan && bound == bound
}

// search delivers the matches of trigger t, whose window starts at lo,
// from the b's of set that pass pre with its bound.
func (p *partners) search(q *queryFilter, set *rset, t *event.Event, lo int64, bound float64) {
	bbuf, pre, r := &set.bufs[p.b.comp], p.pre, q.r
	i0, i1 := bbuf.from(lo), bbuf.from(t.TS)
	r.steps.tickN(r, uint(i1-i0))
	// The loop reads its state through p and bbuf rather than locals:
	// fewer values live across the consumer's call, reloaded after it.
	col := bbuf.cols[p.precol][:i1]
	for c0 := i0; c0 < i1; c0 += 64 {
		for in := pre.op.mask(col[c0:min(c0+64, i1)], pre.k, bound); in != 0; in &= in - 1 {
			i := c0 + bits.TrailingZeros64(in)
			sp := &bbuf.spans[i]
			k, e := sp.from-p.base, sp.to-p.base
			for k < e && p.ts[k] < lo {
				k++
			}
			sp.from = p.base + k
			if k == e {
				continue
			}
			r.steps.tickN(r, uint(e-k))
			if r.counts {
				r.stats.Matches += int64(e - k)
				continue
			}
			p.b.cell.Event = bbuf.evs[i]
			for _, ev := range p.evs[k:e] {
				p.a.cell.Event = ev
				r.emitRow()
			}
		}
	}
}
