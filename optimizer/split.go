package optimizer

import (
	"math"
	"slices"

	"github.com/sase-cep/sase/planner"
)

// decideSplit records in p.Split how the query may split over workers
// (planner.Split), the one place that decides it: by key when a top-level
// equivalence test keeps every match in one partition and the partitions
// are independent, else in time segments of a loaded stream when the
// query has a window, else not at all. est is the basic plan's estimate
// (nil: none, a v3 pattern).
func decideSplit(p *planner.Plan, e *Engine, est *estimate) {
	s := planner.Split{Kind: planner.SplitKey, By: partitionOf(p), MatchesPerEvent: -1, RowsOfEvents: rowsOfEvents(p), EventsPerKey: -1}
	if est != nil {
		s.MatchesPerEvent = est.matchesPerEvent()
	}
	if n := len(p.Stream.Events); s.By != nil && n > 0 && !p.Stream.Live {
		d := s.By.Distinct // pushPartition's count, if it made one
		if d == 0 {
			d = distinct(p, s.By)
		}
		s.EventsPerKey = float64(min(n, distinctSample)) / float64(max(d, 1))
	}
	for _, q := range p.Equivs {
		s.Keys = append(s.Keys, q.Attr)
	}
	s.ByKeyWhy = partitionable(p, s.By)
	switch src := p.Source.(type) {
	case *planner.Union:
		s.MatchesPerEvent = 0
		for _, br := range src.Branches {
			if m := br.Plan.Split.MatchesPerEvent; m >= 0 && s.MatchesPerEvent >= 0 {
				s.MatchesPerEvent += m
			} else {
				s.MatchesPerEvent = -1
			}
		}
	}
	s.Why = s.ByKeyWhy
	switch {
	case e == Basic:
		s.Kind, s.Why = planner.SplitNone, "the basic engine runs on one worker"
	case isV3(p) && s.Why == "" && !keyEverywhere(p, s.By):
		// A worker's branches see only its partitions' events: every
		// event must have the key, or a match of events lacking it would
		// need every partition's events in its negations and closures.
		s.Kind, s.Why = planner.SplitNone, "a v3 pattern (nested, AND, OR, optional) splits by key only when every event of every component has "+s.By.Text+"; it runs on one worker"
	case isV3(p) && s.Why != "":
		s.Kind, s.Why = planner.SplitNone, "a v3 pattern (nested, AND, OR, optional) runs on one worker"
	case s.Why == "":
	case p.HasWindow:
		s.Kind, s.Overlap = planner.SplitSegments, overlap(p)
		s.LiveWhy = s.Why + "; a live stream is not cut into time segments"
	default:
		s.LiveWhy = s.Why + "; a live stream is not cut into time segments"
		s.Kind, s.Why = planner.SplitNone, s.Why+"; without WITHIN a match may span the whole stream, so no time segments"
	}
	p.Split = s
}

func isV3(p *planner.Plan) bool {
	switch p.Source.(type) {
	case *planner.Algebra, *planner.Union:
		return true
	}
	return false
}

// partitionable says why plan does not split by partition by ("" when it
// does).
func partitionable(p *planner.Plan, by *planner.Equiv) string {
	if s := p.Strategy; s != planner.NoStrategy && s != planner.AnyMatch {
		// A run takes the next event that fits, and while its partition is
		// open (its events so far lack the attribute) that may be any
		// partition's: the partitions are not independent.
		return s.String() + ": a run's next event may be any partition's"
	}
	if by == nil {
		return "no equivalence test to partition on"
	}
	if _, ok := p.Source.(*planner.ReCEP); ok && len(p.Positives) < len(p.Components) {
		// The negations and closures of a match whose events lack the
		// attribute read ReCEP's own buffers of every partition's events.
		return "recep with negation or closure reads every partition's buffers"
	}
	return ""
}

// partitionOf is the attribute a partitioned run splits by, nil if none:
// the one its source partitions on, else its first top-level equivalence
// test (one the optimizer recognised from a chain included) without a
// constant.
func partitionOf(p *planner.Plan) *planner.Equiv {
	if by := sourcePartition(p.Source); by != nil {
		if by.Const != nil {
			return nil
		}
		return by
	}
	for _, q := range p.Equivs {
		if q.Const == nil {
			return q
		}
	}
	return nil
}

func sourcePartition(src planner.Source) *planner.Equiv {
	switch s := src.(type) {
	case *planner.AISScan:
		return s.Partition
	case *planner.RunScan:
		if len(s.Partition) > 0 {
			return s.Partition[0]
		}
	case *planner.ReCEP:
		return s.Cache.Partition
	}
	return nil
}

// keyEverywhere says whether every event of every component's types has
// by on a loaded stream.
func keyEverywhere(p *planner.Plan, by *planner.Equiv) bool {
	if p.Stream.Live || by.Builtin != planner.NotBuiltin {
		return !p.Stream.Live
	}
	for _, c := range p.Components {
		for _, t := range c.Types {
			if !p.Stream.Schema.Types[t].AlwaysHas(by.Slot) {
				return false
			}
		}
	}
	return true
}

// rowsOfEvents says whether each output column is a positive component's
// event or a closure's list, as without RETURN.
func rowsOfEvents(p *planner.Plan) bool {
	return !slices.ContainsFunc(p.Columns, func(c planner.Column) bool { return c.Kind == planner.ColValue })
}

// overlap is how far back, in ticks, a segment's run must start so that
// the matches that come out at its own events are exactly one run's: each
// match that comes out at an event t of the segment completes there or
// is released by time there. A match completing at t has its events
// within W before t; one released by time passing ts(P1)+W, which had not
// passed at t, so ts(P1) >= t-W and its events are after that. A negation
// or closure before P1 reads back from ts(Pn)-W: to t-W for a completed
// match, to t-2W for a released one (a negation or closure after Pn holds
// it).
func overlap(p *planner.Plan) int64 {
	before := p.Components[0].Kind != planner.Single
	after := p.Components[len(p.Components)-1].Kind != planner.Single
	if before && after {
		return min(p.Window, math.MaxInt64/2) * 2 // saturated
	}
	return p.Window
}

// matchesPerEvent estimates the matches per event of the stream: the
// sequences before a trigger that pass every check, times the triggers'
// share of the events; -1 when the stream has no statistics.
func (e *estimate) matchesPerEvent() float64 {
	if !e.known || e.n == 0 {
		return -1
	}
	all := func([]int) bool { return true }
	return e.before(span(0, e.n-1), all, e.equivs) * e.lambda[e.n-1] / e.perWindow
}
