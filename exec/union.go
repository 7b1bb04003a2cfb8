package exec

import (
	"fmt"
	"slices"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// unionSource runs a Union: each flat plan in a runner of its own, fed
// every event, whose matches, as its rows, come here instead of to an
// output. A branch hands its rows to the consumer as rows of the run's
// (direct, when the run's output is the components' events and lists),
// or maps them to the union plan's binding (the variables a branch
// leaves unbound stay nil), checked against the conjuncts that read
// those, and handed on. The branches bind different sets of variables,
// so there is nothing to deduplicate; each runner's state is its
// engine's, and it writes its rows as a flat run does.
type unionSource struct {
	r    *runner
	next stage
	outs []*unionOut
	// byType are the branches each type can matter to (a type one of
	// its components names), in branch order: an event of another type
	// changes no branch's matches, and the run's time reaches them
	// through advance.
	byType [][]*unionOut
	outID  int // the output stage's operator
}

// unionOut is the end of one branch's runner.
type unionOut struct {
	s  *unionSource
	br *planner.Branch
	b  *planner.Binding
	// cols are the branch's row: each of its components' event or list
	// (its plan has no RETURN).
	cols []planner.Column
	// row is the branch's own row of the run's layout (nil: the run's
	// output computes a value), the other branches' columns always
	// empty: the branch's runner writes its cells into it where its
	// columns are a run of the row's in their order, else emit copies
	// them (cells). direct: the branch's matches go so (start).
	row    []Cell
	cells  []unionCell
	direct bool
	out    int64 // its matches that passed Rest, when not direct
	sub    *runner
	// takes: the branch's runner counts the matches it hands to the
	// run's settled emit, and taken of them are in the run's count.
	takes bool
	taken int64
}

// unionCell is a cell of the branch's row (from) and its cell in the
// run's layout (to): both rows stay where they were made.
type unionCell struct {
	from, to *Cell
	list     bool
}

func newUnion(r *runner, op *planner.Union, next stage) *unionSource {
	s := &unionSource{r: r, next: next, outID: len(r.stats.Operators) - 1}
	for _, br := range op.Branches {
		out := &unionOut{s: s, br: br, b: r.bind(), cols: br.Plan.Output.Columns}
		sub := newRunnerOf(br.Plan, out.emit, r.split)
		out.sub = sub
		out.layRow(sub)
		s.outs = append(s.outs, out)
		var types []int
		for _, c := range br.Plan.Components {
			types = append(types, c.Types...)
		}
		slices.Sort(types)
		for _, t := range slices.Compact(types) {
			for len(s.byType) <= t {
				s.byType = append(s.byType, nil)
			}
			s.byType[t] = append(s.byType[t], out)
		}
	}
	return s
}

// layRow makes the branch's row of the run's layout, unless the run's
// output has a column that is not a component's event or list, and
// points sub's row into it when it can.
func (o *unionOut) layRow(sub *runner) {
	var from, to []int
	for i, col := range o.s.r.plan.Output.Columns {
		if col.Kind != planner.ColEvent && col.Kind != planner.ColList {
			return
		}
		for j, bc := range o.cols {
			if o.br.Comps[bc.Comp] == col.Comp && bc.Kind == col.Kind {
				from, to = append(from, j), append(to, i)
			}
		}
	}
	o.row = make([]Cell, len(o.s.r.plan.Output.Columns))
	run := len(from) == len(o.cols)
	for k := range from {
		run = run && from[k] == k && to[k] == to[0]+k
	}
	if run && len(to) > 0 {
		sub.row = o.row[to[0] : to[0]+len(to) : to[0]+len(to)]
		sub.out = sub.row
		return
	}
	for k := range from {
		o.cells = append(o.cells, unionCell{&sub.row[from[k]], &o.row[to[k]], o.cols[from[k]].Kind == planner.ColList})
	}
}

// handOn has the branch's matches go straight to the consumer as rows
// of the run's layout. A settled run's emit the branch's runner calls
// itself, on the whole row when it writes into it, and take adds its
// count to the run's after each item: no call a match more than a flat
// run's. Else a closure counts each match into the run's count, which
// the run's emit reads (a limit's, a worker's), and calls it: a closure,
// not a method value, whose wrapper would cost a call a match.
func (o *unionOut) handOn() {
	r, sub, row, cells := o.s.r, o.sub, o.row, o.cells
	if o.takes = r.settled; o.takes {
		sub.counts = r.counts
		if len(cells) == 0 { // the branch's runner writes into row
			sub.emit, sub.out = r.emit, row
			return
		}
		sub.emit = func([]Cell) bool {
			copyCells(cells)
			return r.emit(row)
		}
		return
	}
	sub.emit = func([]Cell) bool {
		copyCells(cells)
		r.stats.Matches++ // the branch's runner looks at ctx
		return r.emit(row)
	}
}

// copyCells copies the branch's cells into the run's row.
func copyCells(cells []unionCell) {
	for _, c := range cells {
		if c.list {
			c.to.List = c.from.List
		} else {
			c.to.Event = c.from.Event
		}
	}
}

// take adds the matches the branch's runner counted since the last take
// to the run's.
func (o *unionOut) take() {
	if o.takes {
		n := o.sub.stats.Matches
		o.s.r.stats.Matches += n - o.taken
		o.taken = n
	}
}

// emit takes a match of the branch, its row, as the union's binding.
func (o *unionOut) emit(row []Cell) bool {
	b := o.b
	clear(b.Events)
	clear(b.Lists)
	for from, col := range o.cols {
		if c := o.br.Comps[col.Comp]; col.Kind == planner.ColList {
			b.Lists[c] = row[from].List
		} else {
			b.Events[c] = row[from].Event
		}
	}
	for _, l := range o.br.Longest {
		if len(b.Lists[l.Comp]) > l.Max {
			return true
		}
	}
	for _, pr := range o.br.Rest {
		if !pr.Eval(b) {
			return true
		}
	}
	o.out++
	o.s.r.stats.Operators[0].Out++
	o.s.next.push(b)
	return true
}

// start sets up each branch's runner when the run's options are set: a
// branch hands its matches over as rows of the run's layout unless the
// run times its operators, or is a worker that decides at the binding
// which matches are its own, or the branch has conjuncts or lengths to
// check on the union's binding.
func (s *unionSource) start() {
	direct := s.r.own == nil && !s.r.clock.on
	for _, o := range s.outs {
		sub := o.sub
		if o.direct = direct && o.row != nil && len(o.br.Rest) == 0 && len(o.br.Longest) == 0; o.direct {
			o.handOn()
		}
		sub.ctx = s.r.ctx
		sub.begin(s.r.clock.last)
	}
}

func (s *unionSource) process(ev *event.Event) {
	if ev.Type >= len(s.byType) {
		return
	}
	for _, o := range s.byType[ev.Type] {
		if err := o.sub.feed(ev); err != nil {
			panic(cancelled{err})
		}
		o.take()
	}
}

// untimed: no branch follows time, so the run's need not reach them
// between their events.
func (s *unionSource) untimed() bool {
	for _, o := range s.outs {
		if o.sub.timed != nil {
			return false
		}
	}
	return true
}

func (s *unionSource) advance(ts int64) {
	for _, o := range s.outs {
		o.sub.pass(ts)
		o.take()
	}
}

func (s *unionSource) finish() {
	for _, o := range s.outs {
		o.sub.finish()
		o.take()
	}
}

// report counts each branch's matches and its engine's instances.
func (s *unionSource) report(st *Stats) {
	for i, o := range s.outs {
		sub := o.sub
		o.take() // a branch that stopped the run took none at its last item
		n := o.out
		if o.direct {
			// Its matches went through the source and the output, once each.
			n = sub.stats.Matches
			st.Operators[0].Out += n
			st.Operators[s.outID].In += n
			st.Operators[s.outID].Out += n
		}
		sub.src.report(&sub.stats)
		st.Instances += sub.stats.Instances
		st.Operators[0].Counters = append(st.Operators[0].Counters, Counter{fmt.Sprintf("branch %d", i+1), n})
	}
	if st.Instances > 0 {
		st.Operators[0].Counters = append(st.Operators[0].Counters, Counter{"instances", st.Instances})
	}
}
