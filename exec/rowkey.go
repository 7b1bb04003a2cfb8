package exec

import (
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// A worker of a split run emits only some of the matches its runner finds:
// a partitioned run's worker those of its partitions (and the wild worker
// those made of events lacking the attribute), a segment's those at its
// own items. Deciding that on the binding (runner.own) costs the engines
// their direct paths to the output (AIS's leaf loop writes the row and
// calls emit itself), several times the match's cost. When the row holds
// what the decision reads, the worker decides at emit instead, with the
// runner's own nil.

// rowKey reads a match's partition value from its row, as equivRef reads
// it from its binding: the row has a column for each positive component's
// event and each closure's list (a query without RETURN).
type rowKey struct {
	by    *planner.Equiv
	evs   []int // the event column of each positive component, in order
	lists []int // the list column of each closure, in order
}

// rowKeyOf is plan's rowKey for the partition by, nil when the row misses
// a column it needs.
func rowKeyOf(plan *planner.Plan, by *planner.Equiv) *rowKey {
	col := func(comp int, kind planner.ColumnKind) int {
		for i, c := range plan.Columns {
			if c.Kind == kind && c.Comp == comp {
				return i
			}
		}
		return -1
	}
	k := &rowKey{by: by}
	for _, p := range plan.Positives {
		i := col(p, planner.ColEvent)
		if i < 0 {
			return nil
		}
		k.evs = append(k.evs, i)
	}
	for _, c := range plan.Components {
		if c.Kind != planner.Closure {
			continue
		}
		i := col(c.Index, planner.ColList)
		if i < 0 {
			return nil
		}
		k.lists = append(k.lists, i)
	}
	return k
}

// key is the row's partition key: the value of its first positive event
// that has the attribute, else of its first closure element that has it;
// wild says no positive event has it. A match's events that have the
// attribute all have one value (the equivalence test holds), so any of
// them gives its key.
func (k *rowKey) key(row []Cell) (key event.Value, wild bool) {
	for _, i := range k.evs {
		if v := k.by.Value(row[i].Event); !v.IsAbsent() {
			return event.PartitionKey(v), false
		}
	}
	for _, i := range k.lists {
		for _, e := range row[i].List {
			if v := k.by.Value(e); !v.IsAbsent() {
				return event.PartitionKey(v), true
			}
		}
	}
	return event.Value{}, true
}

// partitionOfRow sets the worker's key to the partition of row, whose
// last positive event lacks the attribute (keyOfLast).
func (w *worker) partitionOfRow(row []Cell) {
	key, wild := w.rk.key(row)
	if wild && !w.closureKeys {
		key = event.Value{}
	}
	w.setKey(key)
}
