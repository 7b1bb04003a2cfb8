package session

import (
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/source"
)

// Name checks the planner cannot make. A pattern may name a type that a
// stream does not carry: the spec's conformance cases run such queries and
// expect no match rather than an error, so the session only warns, with
// the stream's types and the one the name is likely a typo of.

// stmtBase maps positions in the statement running, parsed on its own,
// back into its script, as rebase does for its errors.
type stmtBase struct {
	sub, src *ast.Source
	start    int
}

// warnAt writes a warning at a position of src, with a caret.
func (s *Session) warnAt(src *ast.Source, offset int, format string, args ...any) {
	w := errAt(src, offset, format, args...)
	rebase(w, s.stmt.sub, s.stmt.src, s.stmt.start)
	s.note("warning: %v", w)
}

// absentTypes warns about each event type the query's pattern names that
// loaded stream name, of schema sc, has no events of.
func (s *Session) absentTypes(src *ast.Source, q *ast.Query, name string, sc *event.Schema) {
	for _, comp := range q.Pattern.Components {
		for _, t := range comp.Types {
			if _, ok := sc.TypeID(t.Name); ok {
				continue
			}
			types := typeNames(sc)
			s.warnAt(src, t.Span.Start, "stream %s has no events of type %s, which never matches (its types: %s)%s",
				name, t.Name, listOf(types, 12), ast.DidYouMean(t.Name, types))
		}
	}
}

func typeNames(sc *event.Schema) []string {
	names := make([]string, len(sc.Types))
	for i, t := range sc.Types {
		names[i] = t.Name
	}
	return names
}

// listOf joins names, the first max of them and a count of the rest.
func listOf(names []string, max int) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + ", ... (" + plural(int64(len(names)-max), "more", "more") + ")"
}

// neverCarried lists the types and attributes q names that a live
// stream, of schema sc at its end, never carried: a misspelled type there
// only never matched, and a comparison with a misspelled attribute was
// always true (the absent-attribute rule).
func (s *Session) neverCarried(sc *event.Schema, q *ast.Query) []string {
	var miss []string
	names := s.c.Names(q)
	for _, t := range names.Types {
		if id, ok := sc.TypeID(t); !ok || sc.Types[id].Count == 0 {
			miss = append(miss, "type "+t)
		}
	}
	for _, u := range names.Attrs {
		slot, ok := sc.AttrSlot(u.Attr)
		present := int64(0)
		for _, t := range u.Types {
			if id, known := sc.TypeID(t); ok && known && slot < len(sc.Types[id].Present) {
				present += sc.Types[id].Present[slot]
			}
		}
		if text := "attribute " + u.Attr; present == 0 && !slices.Contains(miss, text) {
			miss = append(miss, text)
		}
	}
	return miss
}

// emptyAttrs warns about each attribute the query reads that loaded
// stream name has on no event of the types it is read on (a CSV column
// left empty for them): every comparison with it is true.
func (s *Session) emptyAttrs(q *ast.Query, name string, sc *event.Schema) {
	var attrs []string
	for _, m := range s.neverCarried(sc, q) {
		if a, ok := strings.CutPrefix(m, "attribute "); ok {
			attrs = append(attrs, a)
		}
	}
	if len(attrs) > 0 {
		s.note("warning: stream %s has no value of %s on the types the query reads it on: every comparison with it is true (has(v.x) guards it)",
			name, strings.Join(attrs, ", "))
	}
}

// oddValues warns about the events of loaded stream name, of schema sc,
// that the comparisons of query cq read an absent attribute or a value
// of another kind on (query.Odd), once it has run.
func (s *Session) oddValues(cq query.Query, name string, sc *event.Schema) {
	for _, o := range cq.OddValues(sc, nil) {
		s.note("warning: stream %s: %s", name, o)
	}
}

// oddEvery is how many events a live query reads between two looks for
// new notices on absent and mixed values, besides one whenever its stream
// pauses: the look reads the stream's schema, never the events.
const oddEvery = 4096

// oddWatch returns what says, once each, the notices on absent and mixed
// values (query.Odd) of live query id, cq, on stream l: counted from
// the events of l since now.
func (s *Session) oddWatch(id int, cq query.Query, l *source.Live) func() {
	base := l.Snapshot().Schema
	var mu sync.Mutex // the stream's pause and the query's events may call it from two goroutines
	said := map[string]bool{}
	return func() {
		mu.Lock()
		defer mu.Unlock()
		for _, o := range cq.OddValues(l.Snapshot().Schema, base) {
			if !said[o.Key] {
				said[o.Key] = true
				s.bgNote("warning: query %d: so far %s", id, o)
			}
		}
	}
}

// watchOdd calls odd every oddEvery events, and at their end.
func watchOdd(events iter.Seq[*event.Event], odd func()) iter.Seq[*event.Event] {
	return func(yield func(*event.Event) bool) {
		n := 0
		for e := range events {
			if n++; n == oddEvery {
				n = 0
				odd()
			}
			if !yield(e) {
				return
			}
		}
		odd()
	}
}

// carriedNote warns, when live query lq has read its stream to the end,
// about what q named that the stream never carried.
func (s *Session) carriedNote(lq *liveQuery, q *ast.Query) {
	if st := lq.State(); st != Ended {
		return
	}
	miss := s.neverCarried(lq.live.Snapshot().Schema, q)
	if len(miss) == 0 {
		return
	}
	why := ""
	if strings.HasPrefix(miss[len(miss)-1], "attribute ") {
		why = " (a comparison with an absent attribute is true: has(v.x) guards it)"
	}
	s.bgNote("warning: query %d: the stream never carried %s%s", lq.id, strings.Join(miss, ", "), why)
}

// bareWindow warns about a WITHIN without a unit on a stream whose
// timestamps are wall-clock times (unit is a tick's duration): it counts
// ticks, which is easy to take for seconds.
func (s *Session) bareWindow(src *ast.Source, q *ast.Query, stream string, unit time.Duration) {
	w := q.Within
	if w == nil || w.Unit != "" || unit == 0 {
		return
	}
	s.warnAt(src, w.Span.Start, "WITHIN %s on stream %s means %s %s (a tick of its timestamps): write the unit, such as WITHIN %s s",
		w.Raw, stream, w.Raw, unitName(unit), w.Raw)
}

// unitName is a tick's unit as WITHIN writes it: "ms", or "10ms" for a
// duration that is no unit of its own.
func unitName(d time.Duration) string {
	for _, u := range event.TimeUnits() {
		if u.Duration == d {
			return u.Name
		}
	}
	return d.String()
}
