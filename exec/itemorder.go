package exec

import (
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// A run of a query with an equivalence test emits the matches that several
// partitions complete or release at one item in the order of their
// partition values (CompareKeys), one partition's in the order the engine
// finds them: a split run's merge does that (sortRuns), and a run on one
// worker holds an item's matches and sorts them (itemOrder), so that the
// output is the same, byte for byte, for any number of workers
// (docs/LANGUAGE.md, workers). An engine's own order across partitions
// depends on the order in which it made them, which no split run keeps.

// itemOrder holds the matches a run on one worker emits at one item, in
// a result as a worker's, and hands them on in partition-value order at
// the item's end (flush).
type itemOrder struct {
	r  *runner
	by *planner.Equiv
	// lists: a match whose positive events lack the attribute takes the
	// value of its first closure element that has it, as the split run
	// does that the plan would make: a segmented one, or one of runs.
	lists bool
	rk    *rowKey // nil: the runner's own tells key from the binding
	key   event.Value
	res   result
	l     *layout
	row   []Cell // a row of events only, put together for emit
	emit  Emit
	out   Stats // counts the matches handed on
}

// holdItems has r, a run on one worker, emit each item's matches in
// partition-value order; it returns nil when the plan has no partition
// (no equivalence test), whose matches go straight to the consumer.
func (r *runner) holdItems() *itemOrder {
	by := r.plan.Split.By
	if by == nil {
		return nil
	}
	_, runScan := r.plan.Source.(*planner.RunScan)
	l := layoutOf(r.plan)
	o := &itemOrder{r: r, by: by, lists: runScan || r.plan.Split.ByKeyWhy != "", rk: rowKeyOf(r.plan, by), l: l, row: make([]Cell, l.width), emit: r.emit}
	if o.rk == nil {
		r.own = func(b *planner.Binding) bool {
			o.key = o.bindingKey(r, b)
			return true
		}
	}
	r.emit = o.hold()
	return o
}

// bindingKey is the partition key of a match's binding, by hold's rule.
func (o *itemOrder) bindingKey(r *runner, b *planner.Binding) event.Value {
	if o.lists {
		return event.PartitionKey(r.equivRef(o.by, b))
	}
	for _, i := range r.plan.Positives {
		if v := o.by.Value(b.Events[i]); !v.IsAbsent() {
			return event.PartitionKey(v)
		}
	}
	return event.Value{}
}

// hold is the runner's emit: it keeps the row until the item's end. A
// closure, not the method value o.hold, whose wrapper would cost a call
// a match.
func (o *itemOrder) hold() Emit {
	return func(row []Cell) bool {
		if o.r.onePartition {
			return o.emit(row) // the item's matches are in order as they come
		}
		key := o.key
		if o.rk != nil {
			var wild bool
			if key, wild = o.rk.key(row); wild && !o.lists {
				key = event.Value{}
			}
		}
		o.res.add(0, key, o.l, row)
		return true
	}
}

// held is how many matches it holds.
func (o *itemOrder) held() int64 {
	n := int64(0)
	for _, m := range o.res.matches {
		n += int64(m.n)
	}
	return n
}

// flush hands on the matches of the item, sorted; it returns false when
// the consumer stops, with the matches it did not take dropped from
// stats.
func (o *itemOrder) flush(stats *Stats) bool {
	if len(o.res.matches) == 0 {
		return true
	}
	sortRuns(o.res.matches)
	held, ok := o.held(), true
	o.out.Matches = 0
	for _, m := range o.res.matches {
		if ok = o.res.emitRun(m, o.l, o.row, o.emit, &o.out); !ok {
			break
		}
	}
	stats.Matches -= held - o.out.Matches
	o.res = result{matches: o.res.matches[:0], rows: o.res.rows[:0], evs: o.res.evs[:0]}
	return ok
}
