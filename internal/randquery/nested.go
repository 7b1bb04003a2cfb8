package randquery

import (
	"fmt"
	"slices"
	"strings"
)

// nested builds a random v3 pattern (LANGUAGE.md §9): groups three deep
// (SEQ, AND, OR, each maybe optional), optional singles, OR branches that
// share a variable, negations and closures (+, *, {n,m}, {n}, ^k, {n,})
// between positives and at the top-level edges. It keeps to the rules of
// §9.2 and §9.5 so that every pattern compiles: a nested SEQ's negation or
// closure has a non-nullable positive on each side, a closure is never
// next to a closure or a negation with only nullable items between them,
// at most one top-level edge holds a closure, and the pattern is not
// nullable. At most five positive singles keep basic's enumeration small.
type nested struct {
	r                          Source
	vars                       int
	singles, negs, closures    []string
	positives                  int
	edgeClosure, firstC, lastC bool
}

var types = []string{"A", "B", "C", "D"}

func (g *nested) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *nested) newVar() string {
	g.vars++
	return fmt.Sprintf("v%d", g.vars-1)
}

func (g *nested) typ() string {
	if g.r.IntN(5) == 0 {
		return "ANY(" + g.pick(types) + ", " + g.pick(types) + ")"
	}
	return g.pick(types)
}

// item is a positive item's text and whether it is nullable.
type item struct {
	text     string
	nullable bool
}

// single is a positive single; optional in one case in four unless solid.
func (g *nested) single(solid bool) item {
	v := g.newVar()
	g.singles = append(g.singles, v)
	g.positives++
	if !solid && g.r.IntN(4) == 0 {
		return item{g.typ() + "? " + v, true}
	}
	return item{g.typ() + " " + v, false}
}

// item is a positive item at depth d (1: inside the top-level group);
// groups open down to depth 3, where only singles remain.
func (g *nested) item(d int) item {
	if d >= 3 || g.positives >= 4 || g.r.IntN(3) == 0 {
		return g.single(false)
	}
	var it item
	switch g.r.IntN(3) {
	case 0:
		it = g.seq(d+1, false)
	case 1:
		it = g.and(d + 1)
	default:
		it = g.or(d + 1)
	}
	if g.r.IntN(4) == 0 {
		it = item{it.text + "?", true}
	}
	return it
}

// solid makes a nullable item non-nullable by a single after it.
func (g *nested) solid(it item) item {
	if !it.nullable {
		return it
	}
	return item{"SEQ(" + it.text + ", " + g.single(true).text + ")", false}
}

func texts(its []item) string {
	var out []string
	for _, it := range its {
		out = append(out, it.text)
	}
	return strings.Join(out, ", ")
}

func (g *nested) and(d int) item {
	its := []item{g.item(d), g.item(d)}
	if g.r.IntN(3) == 0 {
		its = append(its, g.item(d))
	}
	nullable := !slices.ContainsFunc(its, func(it item) bool { return !it.nullable })
	return item{"AND(" + texts(its) + ")", nullable}
}

// or has two or three branches; one OR in four binds one variable in two
// of them (a set union: a binding both make is one match).
func (g *nested) or(d int) item {
	var its []item
	if g.r.IntN(4) == 0 {
		v := g.newVar()
		g.singles = append(g.singles, v)
		g.positives++
		its = append(its, item{g.typ() + " " + v, false}, item{g.typ() + " " + v, false})
	} else {
		its = append(its, g.item(d))
	}
	its = append(its, g.item(d))
	nullable := slices.ContainsFunc(its, func(it item) bool { return it.nullable })
	return item{"OR(" + texts(its) + ")", nullable}
}

// seq puts negations and closures into the gaps between its positives
// where §9.2 allows them.
func (g *nested) seq(d int, top bool) item {
	k := 2 + g.r.IntN(2)
	if top {
		k = 1 + g.r.IntN(3)
	}
	var pos []item
	for range k {
		pos = append(pos, g.item(d))
	}
	solidIn := func(its []item) bool { return slices.ContainsFunc(its, func(it item) bool { return !it.nullable }) }
	if !solidIn(pos) {
		if !top {
			return item{"SEQ(" + texts(pos) + ")", true}
		}
		pos = append(pos, g.single(true))
	}
	gaps := make([]string, len(pos)+1)
	last, lastKind := -1, byte(0)
	for gap := range gaps {
		if g.r.IntN(3) != 0 {
			continue
		}
		left, right := solidIn(pos[:gap]), solidIn(pos[gap:])
		if !top && (!left || !right) {
			continue
		}
		kind := byte('n')
		if g.r.IntN(3) == 0 {
			kind = 'c'
		}
		if last >= 0 && (kind == 'c' || lastKind == 'c') && !solidIn(pos[last:gap]) {
			continue
		}
		if kind == 'c' && (!left && g.lastC || !right && g.firstC) {
			continue
		}
		v := g.newVar()
		if kind == 'n' {
			g.negs = append(g.negs, v)
			if g.r.IntN(2) == 0 {
				gaps[gap] = "!(" + g.typ() + " " + v + ")"
			} else {
				gaps[gap] = "!" + g.typ() + " " + v
			}
		} else {
			g.closures = append(g.closures, v)
			gaps[gap] = g.typ() + g.pick([]string{"+", "*", "{2,3}", "{1,2}", "{2}", "^2", "{0,2}", "{2,}"}) + " " + v + "[]"
			g.firstC, g.lastC = g.firstC || !left, g.lastC || !right
			g.edgeClosure = g.edgeClosure || !left || !right
		}
		last, lastKind = gap, kind
	}
	var parts []string
	for i, gap := range gaps {
		if gap != "" {
			parts = append(parts, gap)
		}
		if i < len(pos) {
			parts = append(parts, pos[i].text)
		}
	}
	return item{"SEQ(" + strings.Join(parts, ", ") + ")", false}
}

// nestedQuery is a v3 query: the pattern, conditions as the flat
// generator's plus has() on a maybe unbound variable, a window (always
// when a closure can be at a top-level edge, or with more than three
// positives, whose matches over the whole stream are too many).
func nestedQuery(r Source, cfg config) string {
	g := &nested{r: r}
	var top item
	switch r.IntN(6) {
	case 5: // an AND of single events, which engines run as a join
		its := []item{g.single(true), g.single(true)}
		for range r.IntN(3) {
			its = append(its, g.single(true))
		}
		top = item{"AND(" + texts(its) + ")", false}
	case 0:
		top = g.and(1)
		if top.nullable {
			top = item{strings.TrimSuffix(top.text, ")") + ", " + g.single(true).text + ")", false}
		}
	case 1:
		a, b := g.solid(g.item(1)), g.solid(g.item(1))
		top = item{"OR(" + a.text + ", " + b.text + ")", false}
	default:
		top = g.seq(1, true)
	}
	conds := conditions(r, cfg, g.singles, g.negs, g.closures)
	if r.IntN(4) == 0 {
		conds = append(conds, fmt.Sprintf("(has(%s.price) OR %s.vol > 3)", g.pick(g.singles), g.pick(g.singles)))
	}
	q := "PATTERN " + top.text
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	if g.edgeClosure || g.positives > 3 || r.IntN(6) > 0 {
		w := fmt.Sprint(r.IntN(12))
		if cfg.extremes && r.IntN(3) == 0 && g.positives <= 3 { // a huge window holds the whole stream
			w = g.pick(hugeWindows)
		}
		q += " WITHIN " + w
	}
	if cfg.overflows && r.IntN(2) == 0 {
		q += " RETURN " + overflowing(r, g.singles, g.closures, true) + " AS r"
	}
	return q
}
