package planner

import "github.com/sase-cep/sase/event"

// Agrees is the equivalence rule, for every engine: it reports whether v,
// an event's value of q's attribute, agrees with ref, the value the match
// has fixed so far (absent when none has). v must equal q's constant when
// the test has one ([attr = 'v']), else ref. An event lacking the
// attribute is not constrained, as a comparison that reads it holds
// (docs/LANGUAGE.md), and neither is the first value. Values compare by
// Value.Equal: 1 = 1.0, different kinds are unequal.
func (q *Equiv) Agrees(ref, v event.Value) bool {
	if q.Const != nil {
		ref = *q.Const
	}
	return v.IsAbsent() || ref.IsAbsent() || v.Equal(ref)
}

// Fold checks e against ref by Agrees and, while ref is absent, fixes it to
// e's value: folded over a match's events in any order, it reports false
// on the first disagreement.
func (q *Equiv) Fold(ref *event.Value, e *event.Event) bool {
	v := q.Value(e)
	if !q.Agrees(*ref, v) {
		return false
	}
	if ref.IsAbsent() {
		*ref = v
	}
	return true
}
