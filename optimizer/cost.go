package optimizer

import (
	"fmt"
	"math"
	"slices"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// The auto engine chooses between its two plan families by an estimate of
// the search steps (partial sequences visited) of each per trigger (an event of
// the last positive). Both pay alike per event and per match; they differ
// in the dead ends:
//
//   - AIS searches backward from the trigger through RIP ranges and visits
//     every suffix whose events lie in the window and pass the checks bound
//     so far. Up to three components it does not ask whether a prefix
//     still fits before it; from aisCutFrom on it stops each level at the
//     earliest instance that can still head a full chain, so, like ReCEP,
//     it visits at most as many suffixes per level as there are sequences
//     in time (without that cut, 30 components at λ = 20 events each per
//     window visit about e^λ ≈ 10^8 suffixes per trigger).
//   - ReCEP first bounds each positive by the latest timestamp that leaves
//     room for the rest, then searches forward: a prefix it visits passes
//     the checks bound so far and has a completion in time, so each level
//     visits at most as many prefixes as there are such sequences.
//
// The estimate reads the stream's statistics when the stream is loaded
// (events per window from the count and time span, each positive's share
// from its types' counts, its filters' and the correlation predicates'
// selectivities and the equivalence tests' distinct values from a sample);
// on a live stream, which has none, it assumes a density per component.

// recepMargin is how much cheaper ReCEP's estimate must be for auto to
// leave AIS: equal searches cost AIS a little less (docs/RECEP.md), and the
// estimate is rough.
const recepMargin = 1.5

// evaluatedStep is what an AIS search step costs, in steps, when a
// predicate between events is not a comparison of two plain attributes:
// AIS tests those on typed keys in its stacks and the others through the
// evaluator, while ReCEP compares float columns for both (`a.price > 1.1
// * b.price`). Measured on the ReCEP paper's experiments (1M events, `sase
// bench recep`): with such predicates ReCEP took 0.42-0.75 of AIS's time
// from length 3 on, with equal estimates; without them (W1, W2) 2.2-2.9
// times AIS's.
const evaluatedStep = 3

// assumedPerWindow is the events per window of each component assumed on
// a live stream, before any filter.
const assumedPerWindow = 10

// Unknown selectivities: a predicate between events, and an equivalence
// test's per component on a live stream.
const (
	defaultSelectivity      = 0.5
	defaultEquivSelectivity = 0.1
)

// statsSample bounds the events per positive that selectivities are
// measured on.
const statsSample = 1024

// estimate is the cost model's view of a plan.
type estimate struct {
	n         int       // positive singles
	lambda    []float64 // by positive: events per window that bind it
	perWindow float64   // events per window (+Inf on a live stream)
	// preds are the predicates between positives with their selectivity;
	// equivs the equivalence tests' per-component selectivity, the first
	// one ReCEP's partition.
	preds  []estPred
	equivs []float64
	known  bool // from the stream's statistics
	// evaluated: some predicate between events is not a comparison of
	// two plain attributes (evaluatedStep).
	evaluated bool
}

type estPred struct {
	vars []int // positions in Positives
	sel  float64
}

// chooseByCost returns the rules of the plan family that auto runs and a
// note saying why.
func chooseByCost(p *planner.Plan, e *estimate) ([]Rule, string) {
	if _, ok := recepShape(p); !ok {
		return Rules, "" // ReCEP cannot run it: a strategy or a stage it does not know
	}
	if e == nil {
		e = newEstimate(p)
	}
	ais, recep := e.ais(), e.recep()
	aisCost, weight := ais, ""
	if e.evaluated {
		aisCost *= evaluatedStep
		weight = fmt.Sprintf(", weighing %d each (checks by the evaluator)", evaluatedStep)
	}
	chosen, rules := "ais", Rules
	if recep*recepMargin < aisCost {
		chosen, rules = "recep", recepRules()
	}
	basis := "stream statistics: " + num(e.perWindow) + " events per window"
	if !e.known {
		basis = fmt.Sprintf("pattern only: %d events per component per window assumed", assumedPerWindow)
	}
	return rules, fmt.Sprintf("auto chose %s: estimated search steps per trigger ais %s%s, recep %s (%s)", chosen, num(ais), weight, num(recep), basis)
}

// num prints an estimate with three significant digits, in full up to a
// million.
func num(x float64) string {
	if x >= 100 && x < 1e6 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

func newEstimate(p *planner.Plan) *estimate {
	e := &estimate{n: len(p.Positives), lambda: make([]float64, len(p.Positives))}
	pos := map[int]int{}
	for j, c := range p.Positives {
		pos[c] = j
	}
	s := p.Stream
	e.known = !s.Live && len(s.Events) > 0
	var samples [][]*event.Event
	if e.known {
		span := float64(s.Events[len(s.Events)-1].TS-s.Events[0].TS) + 1
		e.perWindow = float64(len(s.Events))
		if p.HasWindow {
			e.perWindow = min(e.perWindow, float64(len(s.Events))*float64(p.Window)/span)
		}
		samples = samplePositives(p)
	} else {
		e.perWindow = math.Inf(1)
	}
	var sel *planner.Selection
	if st, ok := planner.StageOf[*planner.Selection](p); ok {
		sel = st
	}
	b := p.NewBinding()
	var cross []*planner.Pred
	filters := make([][]*planner.Pred, e.n)
	if sel != nil {
		for _, pr := range sel.Preds {
			vars, ok := positions(pr, pos)
			switch {
			case !ok || len(vars) == 0:
			case len(vars) == 1:
				filters[vars[0]] = append(filters[vars[0]], pr)
			default:
				cross = append(cross, pr)
			}
		}
	}
	for j, c := range p.Positives {
		if !e.known {
			e.lambda[j] = assumedPerWindow * math.Pow(defaultSelectivity, float64(len(filters[j])))
			continue
		}
		var count int64
		for _, t := range p.Components[c].Types {
			count += s.Schema.Types[t].Count
		}
		passing := samples[j][:0:0]
		for _, ev := range samples[j] {
			b.Events[c] = ev
			if allTrue(filters[j], b) {
				passing = append(passing, ev)
			}
		}
		b.Events[c] = nil
		share := float64(count) / float64(len(s.Events))
		if len(samples[j]) > 0 {
			share *= float64(len(passing)) / float64(len(samples[j]))
		}
		e.lambda[j], samples[j] = e.perWindow*share, passing
	}
	for _, pr := range cross {
		e.evaluated = e.evaluated || !plainComparison(pr)
		vars, _ := positions(pr, pos)
		e.preds = append(e.preds, estPred{vars: vars, sel: e.selectivity(p, pr, vars, samples, b)})
	}
	if sel != nil {
		for _, q := range sel.Equivs {
			if q.Const != nil {
				continue
			}
			s := defaultEquivSelectivity
			if e.known {
				s = 1 / float64(max(distinct(p, q), 1))
			}
			e.equivs = append(e.equivs, s)
		}
	}
	return e
}

// positions maps a predicate's variables to positions in Positives; ok is
// false when it reads a closure or a negated component.
func positions(pr *planner.Pred, pos map[int]int) (vars []int, ok bool) {
	for _, v := range pr.Vars {
		j, ok := pos[v]
		if !ok {
			return nil, false
		}
		vars = append(vars, j)
	}
	return vars, true
}

func allTrue(preds []*planner.Pred, b *planner.Binding) bool {
	for _, pr := range preds {
		if !holds(pr, b) {
			return false
		}
	}
	return true
}

// holds evaluates pr on a sample binding; one the query's run would stop
// at (a division by zero) counts as failing, since the sample's bindings
// are not the run's and the run reports its own.
func holds(pr *planner.Pred, b *planner.Binding) (ok bool) {
	defer func() {
		if rec := recover(); rec != nil {
			if _, runtime := rec.(*planner.RuntimeError); !runtime {
				panic(rec)
			}
			ok = false
		}
	}()
	return pr.Eval(b)
}

// samplePositives returns, by positive, up to statsSample of the first
// events of its types, reading at most distinctSample events.
// A table from type id to the positives that take it keeps the scan to
// a lookup an event: a rulebook compiles thousands of queries.
func samplePositives(p *planner.Plan) [][]*event.Event {
	out := make([][]*event.Event, len(p.Positives))
	var takers [][]int // by type id
	for j, c := range p.Positives {
		for _, t := range p.Components[c].Types {
			for len(takers) <= t {
				takers = append(takers, nil)
			}
			if n := len(takers[t]); n == 0 || takers[t][n-1] != j { // a type named twice
				takers[t] = append(takers[t], j)
			}
		}
	}
	full := 0
	for i, ev := range p.Stream.Events {
		if i == distinctSample || full == len(out) {
			break
		}
		if ev.Type >= len(takers) {
			continue
		}
		for _, j := range takers[ev.Type] {
			if len(out[j]) == statsSample {
				continue
			}
			if out[j] == nil {
				out[j] = make([]*event.Event, 0, statsSample)
			}
			if out[j] = append(out[j], ev); len(out[j]) == statsSample {
				full++
			}
		}
	}
	return out
}

// selectivity measures a predicate between positives on their samples:
// the k-th binding takes each variable's sample at a different offset, so
// that two variables of one type never bind the same event.
func (e *estimate) selectivity(p *planner.Plan, pr *planner.Pred, vars []int, samples [][]*event.Event, b *planner.Binding) float64 {
	if !e.known {
		return defaultSelectivity
	}
	n := statsSample
	for _, j := range vars {
		n = min(n, len(samples[j]))
	}
	if n == 0 {
		return defaultSelectivity
	}
	pass := 0
	for k := range n {
		for r, j := range vars {
			evs := samples[j]
			b.Events[p.Positives[j]] = evs[(k+r*len(evs)/len(vars))%len(evs)]
		}
		if holds(pr, b) {
			pass++
		}
	}
	for _, j := range vars {
		b.Events[p.Positives[j]] = nil
	}
	return max(float64(pass), 0.5) / float64(n) // a measured 0 is still a chance
}

// before estimates the sequences of the positives in set (ascending
// positions before the trigger's) in the window before a trigger: the
// ordered tuples of its perWindow events, λ_1 λ_2 ... λ_d / d! less the
// events already taken, cut by the predicates that checked says are
// checked by then and by the equivalence tests in equivs.
func (e *estimate) before(set []int, checked func(vars []int) bool, equivs []float64) float64 {
	x := 1.0
	for k, j := range set {
		x *= e.lambda[j] * max(1-float64(k+1)/e.perWindow, 0) / float64(k+1)
	}
	for _, pr := range e.preds {
		if checked(pr.vars) {
			x *= pr.sel
		}
	}
	for _, s := range equivs {
		x *= math.Pow(s, float64(len(set)))
	}
	return x
}

// within returns whether vars are all in [from, to) or the trigger.
func (e *estimate) within(from, to int) func(vars []int) bool {
	return func(vars []int) bool {
		for _, v := range vars {
			if v != e.n-1 && (v < from || v >= to) {
				return false
			}
		}
		return true
	}
}

// aisCutFrom is the shortest pattern whose AIS search exec bounds by the
// earliest full chain (exec's cutFrom).
const aisCutFrom = 4

// ais is the instances AIS visits per trigger: at depth d, each suffix of
// the one before extended by the instances in the window before it, and
// from aisCutFrom on at most the sequences of all positives (plus the
// bound's binary searches); the equivalence tests (PAIS, dynamic
// filtering) hold of every instance, a predicate is checked once its
// earliest positive is bound.
func (e *estimate) ais() float64 {
	cost, cut := 0.0, e.n >= aisCutFrom
	if cut {
		cost = float64(e.n-1) * math.Log2(2+slices.Max(e.lambda))
	}
	for d := 1; d < e.n; d++ {
		from := e.n - 1 - d
		checked := e.within(from+1, e.n)
		x := e.before(span(from, e.n-1), checked, e.equivs)
		if cut {
			x = min(x, e.before(span(0, e.n-1), checked, e.equivs))
		}
		cost += x
	}
	return cost
}

// recep is the events ReCEP visits per trigger: at level j, each prefix
// of the one before extended by the events in its range, which leave room
// for the rest (so at most the complete sequences), plus the bounds'
// binary searches. A predicate that reads Pj and the trigger filters Pj's
// buffer before the search, another is checked once its latest positive
// is bound. Its partition is the first equivalence test; the others are
// verified after the search.
func (e *estimate) recep() float64 {
	var part []float64
	if len(e.equivs) > 0 {
		part = e.equivs[:1]
	}
	last := e.n - 1
	cost := float64(last) * math.Log2(2+slices.Max(e.lambda))
	for j := range last {
		checked := func(vars []int) bool { return e.within(0, j)(vars) || e.within(j, j+1)(vars) }
		cost += min(e.before(span(0, j+1), checked, part), e.before(span(0, last), checked, part))
	}
	return cost
}

// span is the positions [from, to).
func span(from, to int) []int {
	out := make([]int, 0, to-from)
	for j := from; j < to; j++ {
		out = append(out, j)
	}
	return out
}

// plainComparison is whether pr compares two plain attributes, each
// alone or plus or minus an int constant (`b.price < a.price - 5`), which
// AIS tests on its stacks' typed keys: an offset costs it no more than a
// plain comparison (2M stock events, `SEQ(stock1 a, stock2 b) WHERE
// b.price < a.price [- 5] WITHIN 50`, 5 runs each alternated: 64-84 ms
// with it, 63-71 ms without).
func plainComparison(pr *planner.Pred) bool {
	b, ok := pr.Expr.(*planner.Binary)
	return ok && b.Op.IsComparison() && offsetAttr(b.X) && offsetAttr(b.Y)
}

// offsetAttr is whether e is a plain attribute, alone or plus or minus an
// int constant.
func offsetAttr(e planner.Expr) bool {
	if x, c, _, ok := planner.AddedConst(e); ok {
		if !c.IsInt() {
			return false
		}
		e = x
	}
	_, ok := e.(*planner.Attr)
	return ok
}
