package exec

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// assignItems is a stream of three batches for the assignment's tests:
// ticks, events lacking the attribute, and values of every kind, more
// keys than balanceKeys (1 and 1.0 are one key; a string's text, not its
// address, is its key).
func assignItems() []*event.Event {
	rnd := rand.New(rand.NewPCG(1, 2))
	var items []*event.Event
	for i := range 3 * batchSize {
		if i%97 == 0 {
			items = append(items, event.Tick(int64(i)))
			continue
		}
		var v event.Value
		switch k := rnd.IntN(40); {
		case k < 20:
			v = event.IntValue(int64(rnd.IntN(300))) // more keys than balanceKeys
		case k < 24:
			v = event.FloatValue(float64(rnd.IntN(300))) // an int's key
		case k < 26:
			v = event.FloatValue(float64(rnd.IntN(50)) + 0.5)
		case k < 36:
			// A fresh copy of the text each time: one key at many addresses.
			v = event.StringValue(string([]byte("sym" + strconv.Itoa(rnd.IntN(40)))))
		case k < 38:
			v = event.BoolValue(k == 36)
		}
		attrs := []event.Value{event.IntValue(int64(i)), v}
		if v.IsAbsent() {
			attrs = attrs[:1] // no slot 1: the attribute is absent
		}
		items = append(items, &event.Event{TS: int64(i), Seq: int64(i), Attrs: attrs})
	}
	return items
}

var assignBy = &planner.Equiv{Attr: "k", Slot: 1}

// wantLists are the items each of n workers reads, batch after batch, by
// the assignment owners.assign makes of each event's partition key in
// stream order: every event is one worker's, or every worker's when it
// lacks the attribute; a worker in all has the others' too, marked so.
func wantLists(items []*event.Event, n int, all []int32) [][]int32 {
	ref := newOwners(n)
	lists := make([][]int32, n)
	for i, ev := range items {
		w := int32(-1) // every worker's
		if v := assignBy.Value(ev); !ev.IsTick() && !v.IsAbsent() {
			w = ref.assign(event.PartitionKey(v))
		}
		for id := range int32(n) {
			whose := int32(otherItem)
			switch {
			case w < 0:
				whose = sharedItem
			case w == id:
				whose = ownItem
			case !slices.Contains(all, id):
				continue
			}
			lists[id] = append(lists[id], int32(i%batchSize)<<itemBits|whose)
		}
	}
	return lists
}

func checkLists(t *testing.T, what string, got, want [][]int32) {
	t.Helper()
	for id := range want {
		if !slices.Equal(got[id], want[id]) {
			i := 0
			for i < min(len(got[id]), len(want[id])) && got[id][i] == want[id][i] {
				i++
			}
			t.Fatalf("%s: worker %d listed %d items, want %d (first difference at %d)", what, id, len(got[id]), len(want[id]), i)
		}
	}
}

// TestAssignAll checks the lists of items the workers read, made by one
// assignment of the stream's events through its caches, against the
// assignment of each event's key in stream order.
func TestAssignAll(t *testing.T) {
	items := assignItems()
	for _, n := range []int{1, 2, 3, 7} {
		for _, all := range [][]int32{nil, {0}, {int32(n - 1)}, {0, int32(n - 1)}} {
			o := newOwners(n)
			got := make([][]int32, n)
			lists := make([][]int32, n)
			for b := 0; b < len(items); b += batchSize {
				o.assignAll(assignBy, items[b:min(b+batchSize, len(items))], all, lists)
				for id := range got {
					got[id] = append(got[id], lists[id]...)
				}
			}
			checkLists(t, "workers="+strconv.Itoa(n)+" all="+strconv.Itoa(len(all)), got, wantLists(items, n, all))
		}
	}
}

// TestAssignerShared has n workers read the batches at once, each in
// order, as a parallel run's do: whichever lists a batch, each gets its
// own items of it, as one assignment in stream order makes them, and
// finds each of its items' keys its own, and the absent key where it was
// (owners.of, as a worker asks of a match's key) while the others add
// keys.
func TestAssignerShared(t *testing.T) {
	items := assignItems()
	// Small batches: the first balanceKeys keys are added over several.
	const size = batchSize / 64
	var batches []*batch
	for b := 0; b < len(items); b += size {
		batches = append(batches, &batch{items: items[b:min(b+size, len(items))]})
	}
	for _, n := range []int{2, 3, 7} {
		for _, b := range batches {
			*b = batch{items: b.items}
		}
		a := &assigner{owners: newOwners(n), by: assignBy}
		wild := a.owners.of(event.Value{}) // by hash: no event has the absent key
		got := make([][]int32, n)
		var wg sync.WaitGroup
		for id := range int32(n) {
			wg.Go(func() {
				for _, b := range batches {
					for _, it := range a.list(b, id) {
						// An item's index is in its batch; the want's in a
						// batch of batchSize.
						ev := b.items[it>>itemBits]
						i := int(ev.TS) // ts = the position
						got[id] = append(got[id], int32(i%batchSize)<<itemBits|it&(1<<itemBits-1))
						if it&(1<<itemBits-1) == ownItem {
							if w := a.owners.of(event.PartitionKey(assignBy.Value(ev))); w != id {
								t.Errorf("workers=%d: worker %d's item %d has a key of worker %d", n, id, i, w)
							}
						}
					}
					if w := a.owners.of(event.Value{}); w != wild {
						t.Errorf("workers=%d: the absent key went from worker %d to %d", n, wild, w)
					}
				}
			})
		}
		wg.Wait()
		checkLists(t, "workers="+strconv.Itoa(n), got, wantLists(items, n, nil))
	}
}
