package planner_test

import (
	"testing"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// TestEquivAgrees pins the equivalence rule every engine uses: a missing
// value constrains nothing, the first value present is fixed, a constant
// is what every value must equal, numbers compare as numbers and kinds
// that differ are unequal.
func TestEquivAgrees(t *testing.T) {
	absent := event.Value{}
	ev := func(v event.Value) *event.Event { return &event.Event{Attrs: []event.Value{v}} }
	str, two, twoF, three := event.StringValue("x"), event.IntValue(2), event.FloatValue(2.0), event.IntValue(3)
	for _, c := range []struct {
		name      string
		konst     *event.Value
		ref, v    event.Value
		want      bool
		wantFixed event.Value // ref afterwards
	}{
		{"absent value, nothing fixed", nil, absent, absent, true, absent},
		{"absent value, ref fixed", nil, two, absent, true, two},
		{"first value is fixed", nil, absent, three, true, three},
		{"equal", nil, two, two, true, two},
		{"int = float", nil, two, twoF, true, two},
		{"unequal", nil, two, three, false, two},
		{"kinds differ", nil, two, str, false, two},
		{"constant, absent value", &two, absent, absent, true, absent},
		{"constant holds", &two, absent, twoF, true, absent},
		{"constant fails though nothing is fixed", &two, absent, three, false, absent},
		{"constant wins over ref", &two, three, two, true, three},
	} {
		q := &planner.Equiv{Attr: "a", Slot: 0, Const: c.konst}
		ref := c.ref
		if got := q.Agrees(&ref, ev(c.v)); got != c.want || !ref.Identical(c.wantFixed) {
			t.Errorf("%s: Agrees(%v, %v) = %v, ref %v; want %v, ref %v", c.name, c.ref, c.v, got, ref, c.want, c.wantFixed)
		}
	}
}
