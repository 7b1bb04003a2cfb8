package planner

import "github.com/sase-cep/sase/event"

// Agrees is the equivalence rule, for every engine: it reports whether e
// agrees with the match on q's attribute, and folds e's value in. The value
// must equal q's constant when the test has one ([attr = 'v']), else *ref,
// the value the match has fixed so far; while none is (ref absent), e's
// value becomes it. An event lacking the attribute is not constrained, as
// a comparison that reads it holds (docs/LANGUAGE.md). Values compare by
// Value.Equal: 1 = 1.0, different kinds are unequal. To check without
// fixing, pass a copy.
func (q *Equiv) Agrees(ref *event.Value, e *event.Event) bool {
	v := q.Value(e)
	switch {
	case v.IsAbsent():
		return true
	case q.Const != nil:
		return v.Equal(*q.Const)
	case ref.IsAbsent():
		*ref = v
		return true
	}
	return v.Equal(*ref)
}
