package exec

import (
	"cmp"
	"slices"
	"sort"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// store indexes, by type and timestamp, the events that negation and
// closure collection look up: the types of negated and closure components.
type store struct {
	byType [][]*event.Event // by type id; nil for types nobody reads
	kept   []bool
}

func newStore(p *planner.Plan) *store {
	s := &store{}
	for _, c := range p.Components {
		if c.Kind == planner.Single {
			continue
		}
		for _, t := range c.Types {
			for len(s.kept) <= t {
				s.kept = append(s.kept, false)
				s.byType = append(s.byType, nil)
			}
			s.kept[t] = true
		}
	}
	return s
}

func (s *store) add(e *event.Event) {
	if e.Type < len(s.kept) && s.kept[e.Type] {
		s.byType[e.Type] = append(s.byType[e.Type], e)
	}
}

// bounds is a timestamp interval; lo and hi are inclusive after open
// bounds are turned into closed ones on integer timestamps.
type bounds struct{ lo, hi int64 }

func (b bounds) empty() bool { return b.lo > b.hi }

// in returns the events of one type with lo <= ts <= hi, in stream order.
func (s *store) in(t int, b bounds) []*event.Event {
	if t >= len(s.byType) {
		return nil
	}
	return inRange(s.byType[t], b)
}

// inRange returns the events of a ts-sorted slice with lo <= ts <= hi.
func inRange(evs []*event.Event, b bounds) []*event.Event {
	if b.empty() {
		return nil
	}
	i := sort.Search(len(evs), func(k int) bool { return evs[k].TS >= b.lo })
	j := sort.Search(len(evs), func(k int) bool { return evs[k].TS > b.hi })
	if i >= j {
		return nil
	}
	return evs[i:j]
}

// inTypes returns the events of several types in the interval, merged in
// stream order.
func (s *store) inTypes(types []int, b bounds) []*event.Event {
	if len(types) == 1 {
		return s.in(types[0], b)
	}
	var out []*event.Event
	for _, t := range types {
		out = append(out, s.in(t, b)...)
	}
	slices.SortFunc(out, func(x, y *event.Event) int { return cmp.Compare(x.Seq, y.Seq) })
	return out
}

// prune drops the events before minTS. Reslicing leaves the dead prefix to
// the next append that reallocates, so memory follows the window.
func (s *store) prune(minTS int64) {
	for t, evs := range s.byType {
		k := sort.Search(len(evs), func(i int) bool { return evs[i].TS >= minTS })
		if k > 0 {
			s.byType[t] = evs[k:]
		}
	}
}
