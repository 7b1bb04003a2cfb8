package event

import (
	"iter"
	"sort"
	"strings"
	"time"
)

// Event is one stream event. Attrs is indexed by the schema's attribute
// slots; a slot past the end, or holding an Absent value, is absent.
type Event struct {
	Type  int // index into Schema.Types
	TS    int64
	Seq   int64 // 0-based position in its stream
	Attrs []Value
}

// TickType is the Type of a tick: a time-only item in an event sequence
// that says the stream's time has reached its TS (no later event is
// earlier), so that matches waiting on time are released on a quiet
// stream. A tick is not an event: it has no type, attributes or seq.
const TickType = -1

// Tick returns a tick at ts.
func Tick(ts int64) *Event { return &Event{Type: TickType, TS: ts} }

// IsTick reports whether e is a tick rather than an event.
func (e *Event) IsTick() bool { return e.Type == TickType }

// Attr returns the value in slot, or an absent value.
func (e *Event) Attr(slot int) Value {
	if slot < len(e.Attrs) {
		return e.Attrs[slot]
	}
	return Value{}
}

// KindSet is a set of value kinds (bit i set for Kind i).
type KindSet uint8

func (s KindSet) Has(k Kind) bool     { return s&(1<<k) != 0 }
func (s KindSet) With(k Kind) KindSet { return s | 1<<k }

func (s KindSet) String() string {
	var parts []string
	for k := Int; k <= Bool; k++ {
		if s.Has(k) {
			parts = append(parts, k.String())
		}
	}
	if len(parts) == 0 {
		return "absent"
	}
	return strings.Join(parts, "|")
}

// TypeInfo describes one event type of a stream.
type TypeInfo struct {
	Name  string
	Count int64 // events of this type seen
	// Kinds[slot] is the set of kinds seen for that attribute on this type;
	// a type "has" an attribute when the slot is declared for it (Declared).
	Kinds    []KindSet
	Declared []bool
	Present  []int64 // Present[slot]: events of this type with a value there
	// ByKind[slot][k-1]: events of this type with a value of kind k
	// there, so that a notice can say how many hold a string among
	// numbers (their sum is Present[slot]).
	ByKind [][Bool]int64
}

// WithKind returns how many events of the type have a value of a kind in
// ks in slot.
func (t *TypeInfo) WithKind(slot int, ks KindSet) int64 {
	var n int64
	if slot < len(t.ByKind) {
		for k := Int; k <= Bool; k++ {
			if ks.Has(k) {
				n += t.ByKind[slot][k-1]
			}
		}
	}
	return n
}

// AlwaysHas reports whether every event of the type seen so far has a
// value in slot, so an equivalence test on it can partition the stream.
func (t *TypeInfo) AlwaysHas(slot int) bool {
	return t.Has(slot) && t.Present[slot] == t.Count
}

// Has reports whether the type has the attribute in slot.
func (t *TypeInfo) Has(slot int) bool { return slot < len(t.Declared) && t.Declared[slot] }

// Schema names a stream's types and attributes. Types and attributes get
// small integer indices once, so the hot path never looks up a name.
type Schema struct {
	Types     []*TypeInfo
	Attrs     []string
	typeIndex map[string]int
	attrIndex map[string]int
}

// NewSchema returns an empty schema.
func NewSchema() *Schema {
	return &Schema{typeIndex: map[string]int{}, attrIndex: map[string]int{}}
}

// TypeID returns the index of a type, and whether it exists.
func (s *Schema) TypeID(name string) (int, bool) {
	id, ok := s.typeIndex[name]
	return id, ok
}

// AttrSlot returns the slot of an attribute, and whether it exists.
func (s *Schema) AttrSlot(name string) (int, bool) {
	slot, ok := s.attrIndex[name]
	return slot, ok
}

// AddType returns the index of a type, adding it if new.
func (s *Schema) AddType(name string) int {
	if id, ok := s.typeIndex[name]; ok {
		return id
	}
	s.Types = append(s.Types, &TypeInfo{Name: name})
	s.typeIndex[name] = len(s.Types) - 1
	return len(s.Types) - 1
}

// AddAttr returns the slot of an attribute, adding it if new.
func (s *Schema) AddAttr(name string) int {
	if slot, ok := s.attrIndex[name]; ok {
		return slot
	}
	s.Attrs = append(s.Attrs, name)
	s.attrIndex[name] = len(s.Attrs) - 1
	return len(s.Attrs) - 1
}

// Declare records that type has the attribute in slot.
func (s *Schema) Declare(typ, slot int) {
	t := s.Types[typ]
	t.grow(slot + 1)
	t.Declared[slot] = true
}

// grow makes the per-slot slices at least n long.
func (t *TypeInfo) grow(n int) {
	for len(t.Declared) < n {
		t.Declared = append(t.Declared, false)
		t.Kinds = append(t.Kinds, 0)
		t.Present = append(t.Present, 0)
		t.ByKind = append(t.ByKind, [Bool]int64{})
	}
}

// Observe records an event's type count and value kinds.
func (s *Schema) Observe(e *Event) { s.ObserveN(e, 1) }

// ObserveN records n events of e's type whose attributes have the kinds
// of e's, slot for slot (SameKinds): Observe n times, at the cost of one.
func (s *Schema) ObserveN(e *Event, n int64) {
	t := s.Types[e.Type]
	t.Count += n
	attrs := e.Attrs // a local: the stores below cannot change it, so it is not read again
	t.grow(len(attrs))
	// Slices of attrs' length, so that the loop has no bounds checks; an
	// attribute's kind is read without copying its value.
	declared, kinds, present, byKind := t.Declared[:len(attrs)], t.Kinds[:len(attrs)], t.Present[:len(attrs)], t.ByKind[:len(attrs)]
	for slot := range attrs {
		if attrs[slot].IsAbsent() {
			continue
		}
		k := attrs[slot].Kind()
		declared[slot] = true
		kinds[slot] |= 1 << (k & 7) // a kind is below 8: the shift needs no check for 8 or more
		present[slot] += n
		byKind[slot][(k-1)&3] += n // a present kind is 1 to 4 (Int to Bool)
	}
}

// Tally records events in a schema in bulk: by type, the events added
// since the last Flush that have the kinds of the type's first of them,
// slot for slot, are recorded at the cost of one (ObserveN). A loaded
// stream's events mostly repeat their type's kinds. The zero Tally is
// empty.
type Tally struct {
	pending []tallied
	// keys are, by type, AddKeyed's names for the kinds of the pending
	// events, 0 for none: a slice of their own, that Add's do not grow.
	keys []uint64
}

// tallied is n events of e's type with e's kinds, not yet recorded.
type tallied struct {
	e *Event
	n int64
}

// Add records e in s, now or at the next Flush.
func (t *Tally) Add(s *Schema, e *Event) {
	if e.Type < len(t.pending) {
		if p := &t.pending[e.Type]; p.n > 0 && len(p.e.Attrs) == len(e.Attrs) {
			// The kinds, compared here: a number's or bool's kind is its
			// tag, so that two of them compare in one comparison.
			a, b := p.e.Attrs, e.Attrs[:len(p.e.Attrs)]
			same := true
			for i := range a {
				if a[i].p != b[i].p && !sameKind(a, b, i) {
					same = false
					break
				}
			}
			if same {
				p.n++
				return
			}
		}
	}
	t.start(s, e)
}

// AddKeyed is Add for an event whose kinds, slot for slot, and Attrs'
// length the caller names by key, if not 0: events with one key have the
// same, which then need not be compared. (A key stays with the kinds of
// its type's pending events, whatever Add adds in between.)
func (t *Tally) AddKeyed(s *Schema, e *Event, key uint64) {
	if !t.Repeat(e, key) {
		t.Add(s, e)
		for len(t.keys) <= e.Type {
			t.keys = append(t.keys, 0)
		}
		t.keys[e.Type] = key
	}
}

// Repeat is AddKeyed's common case, inlined: it adds e if its type's
// pending events have key's kinds, and reports whether it did.
func (t *Tally) Repeat(e *Event, key uint64) bool {
	if uint(e.Type) < uint(len(t.keys)) && t.keys[e.Type] == key && key != 0 {
		if p := &t.pending[e.Type]; p.n > 0 {
			p.n++
			return true
		}
	}
	return false
}

// start begins the pending events of e's type with e, recording those
// before it, of other kinds.
func (t *Tally) start(s *Schema, e *Event) {
	for len(t.pending) <= e.Type {
		t.pending = append(t.pending, tallied{})
	}
	p := &t.pending[e.Type]
	if p.n > 0 {
		s.ObserveN(p.e, p.n)
	}
	*p = tallied{e, 1}
	if e.Type < len(t.keys) {
		t.keys[e.Type] = 0 // other kinds
	}
}

// Flush records in s every event added: before s is read.
func (t *Tally) Flush(s *Schema) {
	for i := range t.pending {
		if p := &t.pending[i]; p.n > 0 {
			s.ObserveN(p.e, p.n)
			*p = tallied{}
		}
	}
}

// sameKind reports whether a[i] and b[i] are of the same kind: a call,
// for values whose first words differ (strings, or different kinds).
func sameKind(a, b []Value, i int) bool { return a[i].Kind() == b[i].Kind() }

// AttrsOf lists the attribute names of a type, sorted.
func (s *Schema) AttrsOf(typ int) []string {
	var out []string
	for slot, name := range s.Attrs {
		if s.Types[typ].Has(slot) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Stream is a named, time-ordered sequence of events.
type Stream struct {
	Name   string
	Source string // where it came from: a path, "-", "generated"
	Schema *Schema
	Events []*Event
	// Unit is the duration of one timestamp tick, 0 when timestamps are
	// unit-less (then WITHIN may not name a unit).
	Unit time.Duration
	Live bool
}

// All returns the events as a sequence.
func (s *Stream) All() iter.Seq[*Event] {
	return func(yield func(*Event) bool) {
		for _, e := range s.Events {
			if !yield(e) {
				return
			}
		}
	}
}
