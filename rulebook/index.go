package rulebook

import (
	"cmp"
	"fmt"
	"math"
	mbits "math/bits"
	"slices"
	"strings"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// index says which rules an event reaches. A rule reads the events of
// the types its pattern names (positive, negated, in a closure); a rule
// with a contiguity strategy reads every event, since any event breaks
// its runs. When a WHERE conjunct compares the first component's
// attribute with a constant, an event of its types that fails the
// comparison can never be bound there: the rule is filed under that
// attribute's bounds instead, and such an event does not reach it as a
// start (it may still reach a gated rule as a later component's, where
// one names its type too: startFilter).
type index struct {
	all    []int32   // rules that read every event
	byType [][]int32 // by type id: the rules that read all its events
	// gated, by type id, are the rules that read its events only within
	// their window after a start they read (open, in Pass): gates.
	gated [][]int32
	gates []gate // by rule
	// bounded, by type id: the gated rules whose reachBound is on it.
	bounded []bitset
	attrs   [][]*attrIndex // by type id: the filtered rules, by attribute
	schema  *event.Schema  // the stream's, for Explain's type names
	comps   int            // the most components of a rule
	nrules  int
}

// attrIndex files the rules filtered on one attribute of one type by
// their constant: Esper's filter index. A lookup returns every rule whose
// comparison may hold (SASE's comparison holds on an absent attribute).
type attrIndex struct {
	slot  int
	name  string
	rules []int32 // all of them: an event without the attribute reaches each
	eq    map[event.Key][]int32
	ord   [4]bounds // ast.OpLt, OpLe, OpGt, OpGe
	other []int32   // a constant no bound orders (NaN, a bool): always
}

// bounds are the constants of one comparison, numbers and strings apart
// (a number never compares with a string), each sorted ascending; keys
// are num's constants as floats, where each is small (an exact float,
// as a small event value is: their floats order them as Compare does),
// else nil.
type bounds struct {
	num, str []bound
	keys     []float64
}

type bound struct {
	c    event.Value
	rule int32
}

// ordOps are the comparisons bounds hold, in attrIndex.ord's order.
var ordOps = [4]ast.Op{ast.OpLt, ast.OpLe, ast.OpGt, ast.OpGe}

// gate is what the index knows of a rule's starts: a rule whose pattern
// is a flat SEQ that begins with its filtered first component, with a
// window, can match an event of a later positive component only within
// the window after a start it has read. Every event that reaches such a
// rule through attrs is a start; one of a type a later component names
// too reaches it also as that component's, through the gate.
type gate struct {
	types  []int // the types gated: those read only within the window
	window int64
	bound  *reachBound // or nil
	// filtered: the rule is filed under its first component's filter,
	// so that an event reaches it as a start only through attrs.
	filtered bool
	filter   filter
}

// filter is a rule's indexable conjunct: attribute slot op constant.
type filter struct {
	slot int
	name string
	op   ast.Op
	c    event.Value
}

func newIndex(rules []*sase.Query, schema *event.Schema) *index {
	ix := &index{nrules: len(rules), schema: schema}
	grow := func(t int) {
		for len(ix.byType) <= t {
			ix.byType = append(ix.byType, nil)
			ix.gated = append(ix.gated, nil)
			ix.attrs = append(ix.attrs, nil)
			ix.bounded = append(ix.bounded, newBitset(len(rules)))
		}
	}
	for id, q := range rules {
		p := q.Plan()
		rule := int32(id)
		if p.Strategy == planner.StrictContiguity || p.Strategy == planner.PartitionContiguity {
			ix.all = append(ix.all, rule)
			ix.gates = append(ix.gates, gate{})
			continue
		}
		f, filtered := startFilter(p)
		var first []int
		if filtered {
			first = p.Components[p.First()].Types
		}
		g := gate{window: p.Window, filtered: filtered, filter: f}
		gateable := filtered && p.HasWindow && p.First() == 0
		var seen []int
		for _, c := range p.Components {
			if filtered && c.Index == p.First() {
				continue // its types are filed under their filter; another component's are gated too
			}
			for _, t := range c.Types {
				if slices.Contains(seen, t) {
					continue
				}
				seen = append(seen, t)
				grow(t)
				if gateable && !negated(p, t) {
					g.types = append(g.types, t)
					ix.gated[t] = append(ix.gated[t], rule)
				} else {
					ix.byType[t] = append(ix.byType[t], rule)
				}
			}
		}
		if len(g.types) > 0 {
			if g.bound = findBound(p, g.types); g.bound != nil {
				for _, t := range g.bound.types {
					ix.bounded[t].set(rule)
				}
			}
		}
		ix.gates = append(ix.gates, g)
		ix.comps = max(ix.comps, len(p.Components))
		for _, t := range first {
			grow(t)
			ix.file(t, rule, f)
		}
	}
	for _, byAttr := range ix.attrs {
		for _, a := range byAttr {
			for k := range a.ord {
				b := &a.ord[k]
				slices.SortStableFunc(b.num, compareBounds)
				slices.SortStableFunc(b.str, compareBounds)
				b.keys = floatKeys(b.num)
			}
		}
	}
	return ix
}

// floatKeys is bs's constants as floats, or nil where one is not small.
func floatKeys(bs []bound) []float64 {
	keys := make([]float64, len(bs))
	for i, b := range bs {
		if !small(b.c) {
			return nil
		}
		keys[i] = b.c.AsFloat()
	}
	return keys
}

// negated says whether a negated component of p names type t: its
// events matter before any start, for the starts to come.
func negated(p *planner.Plan, t int) bool {
	return slices.ContainsFunc(p.Components, func(c *planner.Component) bool {
		return c.Kind == planner.Negated && slices.Contains(c.Types, t)
	})
}

func compareBounds(x, y bound) int {
	c, _ := x.c.Compare(y.c)
	return cmp.Or(c, cmp.Compare(x.rule, y.rule))
}

// startFilter finds the first component's indexable conjunct: the rule's
// first component is a single, and a conjunct on it alone compares a
// plain attribute with a constant. Another component may name its types
// only where the rule is gated (index.gates) and that component is a
// positive single: then an event that fails the filter still reaches the
// rule within the window after a start, as that component's.
func startFilter(p *planner.Plan) (filter, bool) {
	if len(p.Positives) == 0 || p.Query.Pattern.Root != nil {
		return filter{}, false // the algebra's patterns (OR, optional items) are not indexed
	}
	first := p.Components[p.First()]
	if first.Kind != planner.Single || len(first.Types) == 0 {
		return filter{}, false
	}
	gateable := p.HasWindow && p.First() == 0
	for _, c := range p.Components {
		if c != first && (!gateable || c.Kind != planner.Single) && slices.ContainsFunc(c.Types, func(t int) bool { return slices.Contains(first.Types, t) }) {
			return filter{}, false
		}
	}
	for _, pred := range p.Where {
		if len(pred.Vars) != 1 || pred.Vars[0] != first.Index {
			continue
		}
		if f, ok := constComparison(pred.Expr, first.Index); ok {
			return f, true
		}
	}
	return filter{}, false
}

// constComparison matches attr op const (or const op attr, turned round)
// on component comp's plain attribute.
func constComparison(e planner.Expr, comp int) (filter, bool) {
	b, ok := e.(*planner.Binary)
	if !ok || !b.Op.IsComparison() || b.Op == ast.OpNe {
		return filter{}, false
	}
	op, x, y := b.Op, b.X, b.Y
	if _, ok := x.(*planner.Const); ok {
		x, y = y, x
		op = map[ast.Op]ast.Op{ast.OpEq: ast.OpEq, ast.OpLt: ast.OpGt, ast.OpLe: ast.OpGe, ast.OpGt: ast.OpLt, ast.OpGe: ast.OpLe}[op]
	}
	a, ok := x.(*planner.Attr)
	c, okc := y.(*planner.Const)
	if !ok || !okc || a.Comp != comp || a.Index != 0 || a.Builtin != planner.NotBuiltin || c.Value.IsAbsent() {
		return filter{}, false
	}
	return filter{slot: a.Slot, name: a.Name, op: op, c: c.Value}, true
}

// file puts rule, filtered by f, under type t.
func (ix *index) file(t int, rule int32, f filter) {
	var a *attrIndex
	for _, x := range ix.attrs[t] {
		if x.slot == f.slot {
			a = x
		}
	}
	if a == nil {
		a = &attrIndex{slot: f.slot, name: f.name, eq: map[event.Key][]int32{}}
		ix.attrs[t] = append(ix.attrs[t], a)
	}
	a.rules = append(a.rules, rule)
	c := f.c
	switch {
	case f.op == ast.OpEq && !(c.IsFloat() && c.Float() != c.Float()):
		k := event.PartitionKey(c).Key() // 2.0 is 2, as Equal has it
		a.eq[k] = append(a.eq[k], rule)
	case f.op != ast.OpEq && c.IsNumber() && c.Float() == c.Float() || c.IsInt():
		k := slices.Index(ordOps[:], f.op)
		a.ord[k].num = append(a.ord[k].num, bound{c, rule})
	case f.op != ast.OpEq && c.IsString():
		k := slices.Index(ordOps[:], f.op)
		a.ord[k].str = append(a.ord[k].str, bound{c, rule})
	default:
		a.other = append(a.other, rule)
	}
}

// match marks the rules of a that event e may start.
func (a *attrIndex) match(e *event.Event, set bitset) {
	var v event.Value
	if a.slot < len(e.Attrs) {
		v = e.Attrs[a.slot]
	}
	if v.IsAbsent() {
		set.add(a.rules)
		return
	}
	set.add(a.other)
	if len(a.eq) > 0 {
		set.add(a.eq[event.PartitionKey(v).Key()])
	}
	var family func(b *bounds) []bound
	switch {
	case v.IsNumber() && !(v.IsFloat() && v.Float() != v.Float()):
		family = func(b *bounds) []bound { return b.num }
	case v.IsString():
		family = func(b *bounds) []bound { return b.str }
	default:
		return // no bound orders it: the comparisons fail
	}
	for k, op := range ordOps {
		bs := family(&a.ord[k])
		if len(bs) == 0 {
			continue
		}
		var i int
		if keys := a.ord[k].keys; keys != nil && small(v) {
			i = searchFloat(keys, v.AsFloat(), op == ast.OpLe || op == ast.OpGt)
		} else {
			i = sortSearch(bs, v, op == ast.OpLe || op == ast.OpGt)
		}
		if op == ast.OpGt || op == ast.OpGe { // v > c, v >= c: the constants below
			bs = bs[:i]
		} else { // v < c, v <= c: the constants above
			bs = bs[i:]
		}
		for _, b := range bs {
			set.set(b.rule)
		}
	}
}

// sortSearch is the first bound with c >= v (atV) or c > v.
func sortSearch(bs []bound, v event.Value, atV bool) int {
	i, _ := slices.BinarySearchFunc(bs, v, func(b bound, v event.Value) int {
		c, _ := b.c.Compare(v)
		if c == 0 && !atV {
			return -1 // c = v counts as below: the search goes past it
		}
		return cmp.Or(c, 1)
	})
	return i
}

// searchFloat is sortSearch on the bounds' float keys: the first key
// >= x (atV) or > x.
func searchFloat(keys []float64, x float64, atV bool) int {
	lo, hi := 0, len(keys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if keys[m] < x || !atV && keys[m] == x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// reach marks in set the rules an event reaches but the gated ones, and
// in starts those it reaches as a start (a subset of attrs[e.Type]).
func (ix *index) reach(e *event.Event, set, starts bitset) {
	set.add(ix.all)
	if t := e.Type; t < len(ix.byType) {
		set.add(ix.byType[t])
		for _, a := range ix.attrs[t] {
			a.match(e, starts)
		}
	}
}

// satAdd is a+b for b >= 0, at most math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// bitset is a set of rules, one bit each: marked in any order, read in
// rule order.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (s bitset) set(i int32) { s[i>>6] |= 1 << (i & 63) }

func (s bitset) add(ids []int32) {
	for _, i := range ids {
		s.set(i)
	}
}

func (s bitset) has(i int32) bool { return s[i>>6]&(1<<(i&63)) != 0 }

func (s bitset) unset(i int32) { s[i>>6] &^= 1 << (i & 63) }

// drain calls f for each rule in the set, ascending, and empties it.
func (s bitset) drain(f func(int32)) {
	for w, bits := range s {
		if bits == 0 {
			continue
		}
		s[w] = 0
		for bits != 0 {
			f(int32(w<<6 + mbits.TrailingZeros64(bits)))
			bits &= bits - 1
		}
	}
}

// explain is EXPLAIN's text for the index: per type, how many rules
// read it and how; per indexed attribute, the bounds.
func (ix *index) explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Rulebook: %d rules\n", ix.nrules)
	if len(ix.all) > 0 {
		fmt.Fprintf(&b, "  every event: %d (a contiguity strategy)\n", len(ix.all))
	}
	for t := range ix.byType {
		reached := map[int32]bool{} // a rule may start on a type and read it gated too
		var filtered int
		for _, a := range ix.attrs[t] {
			filtered += len(a.rules)
			for _, i := range a.rules {
				reached[i] = true
			}
		}
		all, gated := len(ix.byType[t]), len(ix.gated[t])
		for _, i := range append(slices.Clone(ix.byType[t]), ix.gated[t]...) {
			reached[i] = true
		}
		if len(reached) == 0 {
			continue
		}
		var how []string
		for _, n := range []struct {
			n    int
			what string
		}{{all, "every event"}, {filtered, "by a filter on their start"}, {gated, "within their window after a start"}} {
			if n.n > 0 {
				how = append(how, fmt.Sprintf("%d %s", n.n, n.what))
			}
		}
		fmt.Fprintf(&b, "  %s: %d rules (%s)\n", ix.schema.Types[t].Name, len(reached), strings.Join(how, ", "))
		for _, a := range ix.attrs[t] {
			var parts []string
			if len(a.eq) > 0 {
				parts = append(parts, fmt.Sprintf("= %d constants (hash)", len(a.eq)))
			}
			for k, op := range ordOps {
				if bs := append(slices.Clone(a.ord[k].num), a.ord[k].str...); len(bs) > 0 {
					parts = append(parts, fmt.Sprintf("%s %s", op, boundsText(bs)))
				}
			}
			if len(a.other) > 0 {
				parts = append(parts, fmt.Sprintf("%d unordered", len(a.other)))
			}
			fmt.Fprintf(&b, "    %s: %s\n", a.name, strings.Join(parts, "; "))
		}
	}
	return b.String()
}

// boundsText lists a few sorted bounds, or their number and range.
func boundsText(bs []bound) string {
	if len(bs) > 4 {
		return fmt.Sprintf("%d bounds, %s to %s (sorted)", len(bs), bs[0].c, bs[len(bs)-1].c)
	}
	cs := make([]string, len(bs))
	for i, b := range bs {
		cs[i] = b.c.String()
	}
	return strings.Join(cs, ", ")
}
