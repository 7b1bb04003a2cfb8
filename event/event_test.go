package event

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestSchema(t *testing.T) {
	s := NewSchema()
	if _, ok := s.TypeID("A"); ok {
		t.Fatal("empty schema has type A")
	}
	a, b := s.AddType("A"), s.AddType("B")
	if a != 0 || b != 1 || s.AddType("A") != 0 || len(s.Types) != 2 {
		t.Fatalf("AddType: %d %d %v", a, b, s.Types)
	}
	if id, ok := s.TypeID("B"); !ok || id != 1 {
		t.Errorf("TypeID(B) = %d, %v", id, ok)
	}
	if _, ok := s.TypeID("a"); ok {
		t.Error("type names are case-sensitive")
	}
	x, y := s.AddAttr("x"), s.AddAttr("y")
	if x != 0 || y != 1 || s.AddAttr("x") != 0 || !reflect.DeepEqual(s.Attrs, []string{"x", "y"}) {
		t.Fatalf("AddAttr: %d %d %v", x, y, s.Attrs)
	}
	if slot, ok := s.AttrSlot("y"); !ok || slot != 1 {
		t.Errorf("AttrSlot(y) = %d, %v", slot, ok)
	}
	if _, ok := s.AttrSlot("z"); ok {
		t.Error("AttrSlot(z) exists")
	}

	// Declared but never seen: the type has it, not always.
	s.Declare(b, y)
	if tb := s.Types[b]; !tb.Has(y) || tb.Has(x) || tb.Has(7) || tb.AlwaysHas(y) && tb.Count > 0 {
		t.Errorf("after Declare: %+v", tb)
	}
	events := []*Event{
		{Type: a, Attrs: []Value{IntValue(1)}},
		{Type: a, Attrs: []Value{FloatValue(1.5), StringValue("s")}},
		{Type: a, Attrs: []Value{IntValue(2), {}}}, // y absent
		{Type: b, Attrs: []Value{{}, BoolValue(true)}},
	}
	for _, e := range events {
		s.Observe(e)
	}
	ta, tb := s.Types[a], s.Types[b]
	if ta.Count != 3 || tb.Count != 1 {
		t.Errorf("counts: %d %d", ta.Count, tb.Count)
	}
	if got := ta.Kinds[x].String(); got != "int|float" {
		t.Errorf("A.x kinds %s", got)
	}
	if got := ta.Kinds[y].String(); got != "string" {
		t.Errorf("A.y kinds %s", got)
	}
	if !ta.AlwaysHas(x) || ta.AlwaysHas(y) || !ta.Has(y) || ta.Present[y] != 1 {
		t.Errorf("A: %+v", ta)
	}
	if tb.Has(x) || !tb.AlwaysHas(y) {
		t.Errorf("B: %+v", tb)
	}
	if got := s.AttrsOf(a); !reflect.DeepEqual(got, []string{"x", "y"}) {
		t.Errorf("AttrsOf(A) = %v", got)
	}
	s.AddAttr("a")
	s.Declare(b, 2)
	if got := s.AttrsOf(b); !reflect.DeepEqual(got, []string{"a", "y"}) {
		t.Errorf("AttrsOf(B) = %v, want sorted", got)
	}
}

func TestEventAttrAndBuiltins(t *testing.T) {
	e := &Event{Type: 0, TS: 40, Seq: 3, Attrs: []Value{IntValue(9)}}
	for _, tt := range []struct {
		slot int
		b    Builtin
		want Value
	}{
		{0, NotBuiltin, IntValue(9)},
		{5, NotBuiltin, Value{}},
		{0, BuiltinTS, IntValue(40)},
		{0, BuiltinSeq, IntValue(3)},
	} {
		if got := e.Get(tt.slot, tt.b); !got.Identical(tt.want) {
			t.Errorf("Get(%d, %v) = %v, want %v", tt.slot, tt.b, got, tt.want)
		}
	}
	for name, want := range map[string]Builtin{"ts": BuiltinTS, "timestamp": BuiltinTS, "seq": BuiltinSeq, "TS": NotBuiltin, "price": NotBuiltin, "": NotBuiltin} {
		if got := LookupBuiltin(name); got != want {
			t.Errorf("LookupBuiltin(%q) = %v, want %v", name, got, want)
		}
	}
	var names []string
	for _, a := range BuiltinAttrs() {
		if LookupBuiltin(a.Name) != a.Builtin {
			t.Errorf("%+v does not look up as itself", a)
		}
		for _, al := range a.Aliases {
			if LookupBuiltin(al) != a.Builtin {
				t.Errorf("alias %s of %s", al, a.Name)
			}
		}
		names = append(names, a.Name)
	}
	if !slices.Equal(names, []string{"ts", "seq"}) {
		t.Errorf("listed built-ins %v", names)
	}
}

func TestTimeUnits(t *testing.T) {
	for word, want := range map[string]time.Duration{
		"ms": time.Millisecond, "MS": time.Millisecond, "milliseconds": time.Millisecond, "Millisecond": time.Millisecond,
		"s": time.Second, "sec": time.Second, "SECONDS": time.Second, "second": time.Second,
		"m": time.Minute, "min": time.Minute, "minute": time.Minute, "Minutes": time.Minute,
		"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
		"d": 24 * time.Hour, "day": 24 * time.Hour, "Days": 24 * time.Hour,
	} {
		u, ok := LookupTimeUnit(word)
		if !ok || u.Duration != want {
			t.Errorf("LookupTimeUnit(%q) = %+v, %v; want %v", word, u, ok, want)
		}
	}
	for _, word := range []string{"", "w", "week", "fortnight", "mss", "msec", "seconds "} {
		if u, ok := LookupTimeUnit(word); ok {
			t.Errorf("LookupTimeUnit(%q) = %+v", word, u)
		}
	}
	// Every spelling names one unit, and the units are in increasing order.
	seen := map[string]string{}
	units := TimeUnits()
	for i, u := range units {
		if i > 0 && u.Duration <= units[i-1].Duration {
			t.Errorf("%s is not longer than %s", u.Name, units[i-1].Name)
		}
		for _, w := range append([]string{u.Name}, u.Aliases...) {
			if prev, dup := seen[w]; dup {
				t.Errorf("%q names both %s and %s", w, prev, u.Name)
			}
			seen[w] = u.Name
		}
	}
}

func TestStreamAll(t *testing.T) {
	s := &Stream{Events: []*Event{{Seq: 0}, {Seq: 1}, {Seq: 2}}}
	var got []int64
	for e := range s.All() {
		got = append(got, e.Seq)
		if e.Seq == 1 {
			break
		}
	}
	if !slices.Equal(got, []int64{0, 1}) {
		t.Errorf("All with break: %v", got)
	}
}

// A Tally records what Observe would: the events of a type in runs of
// the same kinds and not, strings at different addresses, absent slots,
// Attrs of different lengths, types interleaved, a Flush in between; and
// so with the events a key names added with AddKeyed (one key, one set of
// kinds), a key again after Add began a run of other kinds.
func TestTally(t *testing.T) {
	str := func(s string) Value { return StringValue(string([]byte(s))) } // text of its own
	keyed := []struct {
		e   *Event
		key uint64
	}{
		{&Event{Type: 0, Attrs: []Value{IntValue(1), str("a")}}, 1},
		{&Event{Type: 1, Attrs: []Value{FloatValue(1)}}, 2},
		{&Event{Type: 0, Attrs: []Value{IntValue(2), str("b")}}, 1},
		{&Event{Type: 0, Attrs: []Value{IntValue(3), StringValue("")}}, 0},
		{&Event{Type: 0, Attrs: []Value{IntValue(4), {}}}, 0},
		{&Event{Type: 0, Attrs: []Value{IntValue(4), str("b")}}, 1},
		{&Event{Type: 1, Attrs: []Value{FloatValue(2)}}, 2},
		{&Event{Type: 0, Attrs: []Value{IntValue(5)}}, 3},
		{&Event{Type: 0, Attrs: []Value{IntValue(5)}}, 3},
		{&Event{Type: 0, Attrs: []Value{FloatValue(6), str("c")}}, 0},
		{&Event{Type: 1, Attrs: []Value{BoolValue(true), IntValue(7), {}}}, 0},
		{&Event{Type: 1}, 4},
		{&Event{Type: 2, Attrs: []Value{{}, {}, {}, IntValue(8)}}, 0},
		{&Event{Type: 0, Attrs: []Value{FloatValue(9), str("d")}}, 0},
		{&Event{Type: 0, Attrs: []Value{IntValue(10), str("e")}}, 1},
		{&Event{Type: 1}, 4},
	}
	var events []*Event
	for _, k := range keyed {
		events = append(events, k.e)
	}
	schema := func() *Schema {
		s := NewSchema()
		s.AddType("A")
		s.AddType("B")
		s.AddType("C")
		return s
	}
	want := schema()
	for _, e := range events {
		want.Observe(e)
	}
	for _, withKeys := range []bool{false, true} {
		for _, flushAt := range []int{-1, 0, 3, 7} {
			got := schema()
			var tally Tally
			for i, k := range keyed {
				if withKeys && k.key != 0 {
					tally.AddKeyed(got, k.e, k.key)
				} else {
					tally.Add(got, k.e)
				}
				if i == flushAt {
					tally.Flush(got)
				}
			}
			tally.Flush(got)
			for i := range want.Types {
				if !reflect.DeepEqual(got.Types[i], want.Types[i]) {
					t.Errorf("keys %v, flush after %d: type %d is %+v, want %+v", withKeys, flushAt, i, got.Types[i], want.Types[i])
				}
			}
		}
	}
}
