package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
)

// Notices on absent and mixed values. A comparison that reads an attribute
// an event lacks holds (SASE's rule), and one that reads a string where it
// compares numbers does not: both are right by the language and silently
// wrong for a user who did not know the data had such events. The checking
// pass records what each comparison reads (read); OddValues counts the
// events concerned from the schema's per-kind counts, so that a query pays
// nothing for it while it runs.

// read is an attribute a comparison reads.
type read struct {
	comp  int
	slot  int
	attr  string
	text  string // the attribute as written, b.temp or b[i].temp: has(text) guards it
	cmp   string // the comparison as written
	op    ast.Op
	arith bool          // read inside arithmetic or abs: a value that is no number makes its result absent
	other event.KindSet // the kinds of the comparison's other side (0: unknown)
}

// guard is has(v.attr): the query knows the attribute may be absent.
type guard struct{ comp, slot int }

// noteReads records the attributes comparison e reads; kx and ky are the
// kinds of its sides.
func (c *compiler) noteReads(e *ast.BinaryExpr, kx, ky event.KindSet) {
	side := func(s ast.Expr, other event.KindSet) {
		ast.Inspect(s, func(n ast.Expr) bool {
			ref, ok := n.(*ast.AttrRef)
			if !ok {
				return true
			}
			comp, known := c.vars[ref.Var.Name]
			slot, found := c.plan.Stream.Schema.AttrSlot(ref.Attr.Name)
			if known && found && builtinOf(ref.Attr.Name) == NotBuiltin {
				c.plan.reads = append(c.plan.reads, read{comp: comp, slot: slot, attr: ref.Attr.Name, text: ref.String(),
					cmp: c.text(e), op: e.Op, arith: n != s, other: other})
			}
			return false
		})
	}
	side(e.X, ky)
	side(e.Y, kx)
}

// noteGuard records has(ref).
func (c *compiler) noteGuard(ref *ast.AttrRef) {
	comp, known := c.vars[ref.Var.Name]
	slot, found := c.plan.Stream.Schema.AttrSlot(ref.Attr.Name)
	if known && found {
		c.plan.guards = append(c.plan.guards, guard{comp, slot})
	}
}

// Odd is a notice: events of the types an attribute is read on that lack
// it (Absent) or hold a value of another kind than its comparisons take,
// and what the comparisons did with them.
type Odd struct {
	Attr   string
	Absent bool
	// Events of Of events of Types are concerned.
	Events, Of int64
	Types      []string
	// Kind is what those events hold and Want what the comparisons take,
	// for another kind: "a string", "a number".
	Kind, Want string
	// Effects say what the comparisons did with such an event.
	Effects []Effect
	// Guards are the has() tests that leave absent values out.
	Guards []string
}

// Effect is what a comparison did with an odd event: it held or not
// (Holds); Arith when it read the value in arithmetic, which is then absent.
type Effect struct {
	Cmp          string
	Holds, Arith bool
}

// OddValues lists the notices for the events of schema sc, less those of
// base (nil for none: a live stream's schema when the query started).
// An attribute that no event of the types has is left out: that is
// another warning's (every comparison with it holds).
func (p *Plan) OddValues(sc, base *event.Schema) []Odd {
	var out []Odd
	find := func(o Odd) *Odd {
		for i := range out {
			if out[i].Attr == o.Attr && out[i].Absent == o.Absent && out[i].Want == o.Want {
				return &out[i]
			}
		}
		out = append(out, o)
		return &out[len(out)-1]
	}
	for _, r := range p.reads {
		types := p.Components[r.comp].Types
		var present int64
		for _, t := range types {
			if t < len(sc.Types) && r.slot < len(sc.Types[t].Present) {
				present += sc.Types[t].Present[r.slot]
			}
		}
		if present == 0 {
			continue
		}
		if !slices.Contains(p.guards, guard{r.comp, r.slot}) {
			if o := find(Odd{Attr: r.attr, Absent: true}); o.add(sc, base, types, r.slot, 0) {
				addOnce(&o.Effects, Effect{Cmp: r.cmp, Holds: true})
				addOnce(&o.Guards, "has("+r.text+")")
			}
		}
		if want := r.want(sc, types); want != 0 {
			if o := find(Odd{Attr: r.attr, Want: noun(want)}); o.add(sc, base, types, r.slot, want) {
				addOnce(&o.Effects, Effect{Cmp: r.cmp, Holds: r.arith || r.op == ast.OpNe, Arith: r.arith})
			}
		}
	}
	return slices.DeleteFunc(out, func(o Odd) bool { return o.Events == 0 })
}

// want is the family of kinds r's comparison takes: numbers in
// arithmetic; else its other side's family if that has one, else the one
// most events of types hold in r's slot. 0 when the attribute holds one
// family only, so that no value of it is of another kind.
func (r read) want(sc *event.Schema, types []int) event.KindSet {
	var seen event.KindSet
	counts := map[event.KindSet]int64{}
	for _, t := range types {
		if t >= len(sc.Types) {
			continue
		}
		ti := sc.Types[t]
		for _, f := range families {
			if n := ti.WithKind(r.slot, f); n > 0 {
				seen |= f
				counts[f] += n
			}
		}
	}
	var want event.KindSet
	switch {
	case r.arith:
		want = numberKinds
	case slices.Contains(families, familyOf(r.other)):
		want = familyOf(r.other)
	default:
		for _, f := range families {
			if counts[f] > counts[want] {
				want = f
			}
		}
	}
	if seen&^want == 0 {
		return 0
	}
	return want
}

// families are the kinds whose values compare with each other.
var families = []event.KindSet{numberKinds, event.KindSet(0).With(event.String), boolKinds}

// familyOf returns the family ks lies in, or 0 if none or several.
func familyOf(ks event.KindSet) event.KindSet {
	for _, f := range families {
		if ks != 0 && ks&^f == 0 {
			return f
		}
	}
	return 0
}

// add counts the events of types concerned: lacking slot (want 0), or
// holding a value of another kind than want. It reports whether there are
// any; only the types that have some are named and counted.
func (o *Odd) add(sc, base *event.Schema, types []int, slot int, want event.KindSet) bool {
	count := func(sc *event.Schema, t int) (events, of int64) {
		if sc == nil || t >= len(sc.Types) {
			return 0, 0
		}
		ti := sc.Types[t]
		var present int64
		if slot < len(ti.Present) {
			present = ti.Present[slot]
		}
		if want == 0 {
			return ti.Count - present, ti.Count
		}
		return present - ti.WithKind(slot, want), ti.Count
	}
	found := false
	for _, t := range types {
		n, of := count(sc, t)
		bn, bof := count(base, t)
		if n == bn {
			continue
		}
		found = true
		if name := sc.Types[t].Name; !slices.Contains(o.Types, name) { // read on two components of one type: its events count once
			o.Types = append(o.Types, name)
			o.Events += n - bn
			o.Of += of - bof
			if want != 0 {
				o.Kind = noun(sc.Types[t].Kinds[slot] &^ want)
			}
		}
	}
	return found
}

// noun names a family, or families: "a number", "a string or bool".
func noun(ks event.KindSet) string {
	var names []string
	for _, f := range families {
		if ks&f == 0 {
			continue
		}
		switch f {
		case numberKinds:
			names = append(names, "number")
		default:
			names = append(names, f.String())
		}
	}
	return "a " + strings.Join(names, " or ")
}

func addOnce[T comparable](list *[]T, s T) {
	if !slices.Contains(*list, s) {
		*list = append(*list, s)
	}
}

// String says what happened and the fix, in one line.
func (o Odd) String() string {
	verb, them := "have", "them"
	if o.Events == 1 {
		verb, them = "has", "it"
	}
	effects := make([]string, len(o.Effects))
	for i, e := range o.Effects {
		outcome := "false"
		if e.Holds {
			outcome = "true"
		}
		effects[i] = fmt.Sprintf("%s is %s on %s", e.Cmp, outcome, them)
		if e.Arith {
			effects[i] = "arithmetic on " + them + " is absent, so " + effects[i]
		}
	}
	what := fmt.Sprintf("%d of %d %s events %s", o.Events, o.Of, strings.Join(o.Types, ", "), verb)
	if o.Absent {
		return fmt.Sprintf("%s no %s: %s (a comparison that reads an absent attribute holds); %s leaves %s out",
			what, ast.QuoteAttr(o.Attr), strings.Join(effects, ", "), strings.Join(o.Guards, " AND "), them)
	}
	return fmt.Sprintf("%s %s as %s where it is compared with %s: %s (%s and %s are never equal or ordered); has() holds on %s, so write %s as %s in the data",
		what, ast.QuoteAttr(o.Attr), o.Kind, o.Want, strings.Join(effects, ", "), o.Kind, o.Want, them, ast.QuoteAttr(o.Attr), o.Want)
}
