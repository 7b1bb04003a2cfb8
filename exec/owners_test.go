package exec

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// TestAssignAll checks that the workers, each assigning the stream's events
// itself through its caches, agree with one another and with the
// assignment owners.assign makes of each event's partition key in stream
// order: every event is one worker's, or every worker's when it lacks the
// attribute, whatever the kind of its value (1 and 1.0 are one key; a
// string's text, not its address, is its key).
func TestAssignAll(t *testing.T) {
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
	by := &planner.Equiv{Attr: "k", Slot: 1}
	for _, n := range []int{1, 2, 3, 7} {
		ref := newOwners(n)
		want := make([]int32, len(items)) // each item's worker, -1: every worker's
		for i, ev := range items {
			want[i] = -1
			if v := by.Value(ev); !ev.IsTick() && !v.IsAbsent() {
				want[i] = ref.assign(event.PartitionKey(v))
			}
		}
		for id := range int32(n) {
			for _, skip := range []bool{false, true} {
				o := newOwners(n)
				var got []int32
				for b := 0; b < len(items); b += batchSize {
					got = o.assignAll(by, items[b:min(b+batchSize, len(items))], id, skip, got)
				}
				var wantList []int32
				for i, w := range want {
					whose := int32(otherItem)
					switch {
					case w < 0:
						whose = sharedItem
					case w == id:
						whose = ownItem
					case skip:
						continue
					}
					wantList = append(wantList, int32(i%batchSize)<<itemBits|whose)
				}
				if len(got) != len(wantList) {
					t.Fatalf("workers=%d worker %d skip=%v: %d items listed, want %d", n, id, skip, len(got), len(wantList))
				}
				for i := range got {
					if got[i] != wantList[i] {
						t.Fatalf("workers=%d worker %d skip=%v: item %d listed as %d, want %d", n, id, skip, i, got[i], wantList[i])
					}
				}
			}
		}
	}
}
