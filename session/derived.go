package session

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/derive"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/job"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/source"
)

// Derived streams (docs/LANGUAGE.md, Derived streams): `RETURN ... INTO
// name` makes each match an event of the stream name. Over a loaded
// stream the query runs to completion and name is then a loaded stream,
// rebuilt from all its producers' events whenever one is added. Over a
// live stream it is a live stream, fed as the producers' matches are
// released (derived_live.go). A script's consumer written before the
// producers of the stream it reads waits for them (Exec).

// derivation is how a derived stream is made: its producers, in statement
// order.
type derivation struct {
	producers []*producer
	unit      time.Duration
	merge     *derive.Stream // a live stream's: the producers write into it
	src       *derivedSource // a live stream's: what merge releases to
}

// producer is one INTO query of a derived stream.
type producer struct {
	from  *entry      // the stream it reads
	query int         // a live producer's query number
	part  derive.Part // a loaded producer's events
}

// describe says where the stream comes from: "INTO from stocks", "INTO
// from stocks (2 queries)", "INTO from query 1 over s, query 2 over t".
func (d *derivation) describe() string {
	var parts []string
	n := map[string]int{}
	for _, p := range d.producers {
		part := p.from.name
		if p.query > 0 {
			part = "query " + strconv.Itoa(p.query) + " over " + p.from.name
		}
		if n[part]++; n[part] == 1 {
			parts = append(parts, part)
		}
	}
	for i, part := range parts {
		if n[part] > 1 {
			parts[i] += " (" + strconv.Itoa(n[part]) + " queries)"
		}
	}
	return "INTO from " + strings.Join(parts, ", ")
}

// explainHeader adds to a plan as EXPLAIN prints it where a derived
// stream it reads comes from, and the stream an INTO query writes into.
func (s *Session) explainHeader(from string, q *ast.Query, plan string) string {
	if e := s.cat.entries[from]; e != nil && e.derived != nil {
		plan = "Stream: " + from + " (derived: " + e.derived.describe() + ")\n" + plan
	}
	if q.Into != nil {
		plan += "Into: " + q.Into.Name + "\n"
	}
	return plan
}

// builtinNames are the names a derived event's attributes may not have:
// its type and the built-ins would hide them.
var builtinNames = []string{"type", "ts", "timestamp", "seq"}

// checkInto checks an INTO query compiled as cq over the stream from: its
// columns are scalars, and its stream is new, or derived and of the same
// kind, and not one the query reads. It returns the derived stream, nil
// when it is new.
func (s *Session) checkInto(src *ast.Source, q *ast.Query, from *entry, cq query.Query) (*entry, error) {
	const scalars = "INTO needs scalar columns (an attribute, an expression or an aggregate)"
	if q.Return.Star {
		return nil, errAt(src, q.Return.Span.Start, "RETURN * gives whole events; %s", scalars)
	}
	for i, col := range cq.Columns() {
		at := q.Return.Items[i].Span.Start
		switch {
		case col.Kind == query.EventColumn:
			return nil, errAt(src, at, "column %s is a whole event; %s", col.Name, scalars)
		case col.Kind == query.ListColumn:
			return nil, errAt(src, at, "column %s is a closure list; %s", col.Name, scalars)
		}
		if alias := q.Return.Items[i].Alias; alias != nil {
			at = alias.Span.Start
		}
		for _, b := range builtinNames {
			if strings.EqualFold(col.Name, b) {
				return nil, errAt(src, at, "column %s would be hidden by the derived event's %s; name it otherwise with AS", col.Name, b)
			}
		}
	}
	return s.intoTarget(src, q.Into, from)
}

// intoTarget checks the stream an INTO into names for a query over the
// stream from: new, or derived and of the same kind, and not one the query
// reads. It returns the derived stream, nil when it is new.
func (s *Session) intoTarget(src *ast.Source, into *ast.Ident, from *entry) (*entry, error) {
	name, at := into.Name, into.Span.Start
	target := s.cat.entries[name]
	if target == nil {
		return nil, nil
	}
	if target.derived == nil {
		return nil, errAt(src, at, "%s is a %s stream, not one made by INTO: INTO needs a new name or a derived stream's", name, target.kind)
	}
	if target.kind != from.kind {
		return nil, errAt(src, at, "%s is a %s derived stream; a query over the %s stream %s cannot write into it", name, target.kind, from.kind, from.name)
	}
	if chain := lineage(from, target); chain != nil {
		names := make([]string, 0, len(chain)+1)
		for _, e := range chain {
			names = append(names, e.name)
		}
		return nil, errAt(src, at, "INTO %s makes a cycle: %s (a query may not write into a stream it reads, directly or through derived streams)",
			name, strings.Join(append(names, name), " -> "))
	}
	if unit := from.view().Unit; unit != target.derived.unit {
		return nil, errAt(src, at, "%s has %s but %s has %s: a derived stream's producers share one", name,
			unitText(target.derived.unit), from.name, unitText(unit))
	}
	return target, nil
}

// lineage returns the streams from target to stream when stream is target
// or derived from it, directly or through other derived streams; nil
// otherwise.
func lineage(stream, target *entry) []*entry {
	if stream == target {
		return []*entry{stream}
	}
	if stream.derived == nil {
		return nil
	}
	for _, p := range stream.derived.producers {
		if chain := lineage(p.from, target); chain != nil {
			return append(chain, stream)
		}
	}
	return nil
}

// unitText is "time unit ms", or "no time unit".
func unitText(d time.Duration) string {
	if v := unitValue(d); !v.IsAbsent() {
		return "time unit " + v.Str()
	}
	return "no time unit"
}

// producerQuery compiles q over stream as its producer runs it
// (derive.Query) and says how it releases its events: late, with a window
// of w ticks.
func (s *Session) producerQuery(src *ast.Source, q *ast.Query, stream *event.Stream, cq query.Query) (pq query.Query, cols []string, late bool, w int64, err error) {
	pq, err = s.c.Compile(derive.Query(q), src, stream, s.set.Engine)
	if err != nil {
		return nil, nil, false, 0, err
	}
	for _, c := range cq.Columns() {
		cols = append(cols, c.Name)
	}
	w, ok := pq.Window()
	if !ok {
		w = math.MaxInt64
	}
	return pq, cols, pq.Late(), w, nil
}

// intoLoaded runs an INTO query over a loaded stream to its end, then adds
// its events to the derived stream (SET limit does not apply: the stream
// gets every match).
func (s *Session) intoLoaded(ctx context.Context, src *ast.Source, q *ast.Query, from, target *entry, cq query.Query) error {
	pq, cols, late, w, err := s.producerQuery(src, q, from.stream, cq)
	if err != nil {
		return err
	}
	lp, err := newLoadedPart(src, q.Into, cols, late, w)
	if err != nil {
		return err
	}
	sum, err := job.New(job.Config{Query: pq, Source: job.Loaded(lp.Follow(from.stream.All())), Sink: lp}).Run(ctx)
	if err != nil {
		return lp.full(err)
	}
	s.note("(%s)", counts(sum.Stats.Matches, sum.Stats, from.name, s.set.Timing))
	s.addLoadedPart(q.Into.Name, from, target, lp.part())
	return nil
}

// loadedPart is a loaded INTO's producer, bounded (boundInto), and the
// events it has released.
type loadedPart struct {
	*derive.Producer
	got  collected
	full func(error) error // boundInto's
}

// newLoadedPart makes the producer of a loaded INTO into, of columns cols,
// released as late with window w says (derive.Stream.Add), into a stream
// of its own: its part, which addLoadedPart adds to the derived stream.
func newLoadedPart(src *ast.Source, into *ast.Ident, cols []string, late bool, w int64) (*loadedPart, error) {
	lp := &loadedPart{}
	p, err := derive.New(&lp.got).Add(cols, late, w)
	if err != nil {
		return nil, err // a new stream has started nothing
	}
	lp.Producer, lp.full = p, boundInto(p, src, into)
	return lp, nil
}

// part is the events the producer has released, with its columns.
func (lp *loadedPart) part() derive.Part { return derive.Part{Cols: lp.Cols(), Events: lp.got} }

// memoryLimit is source.MemoryLimit; a variable, for tests.
var memoryLimit = source.MemoryLimit

// boundInto bounds the events a loaded INTO's producer p makes to what
// fits in memoryLimit: the stream keeps them all, and a query with many
// matches took all the memory (a fatal error). It returns what makes p's
// derive.ErrFull the statement's error, at into's name.
func boundInto(p *derive.Producer, src *ast.Source, into *ast.Ident) func(error) error {
	limit, says, ok := memoryLimit()
	if !ok {
		return func(err error) error { return err }
	}
	per := derive.EventBytes(len(p.Cols()))
	n := max(limit/per, 1)
	p.Bound(n)
	return func(err error) error {
		if !errors.Is(err, derive.ErrFull) {
			return err
		}
		return errAt(src, into.Span.Start, "INTO %s: a loaded derived stream is kept in memory, and %d events of this one would take about %s, more than %s: narrow the query (WHERE, WITHIN, RETURN), or run it on a live stream",
			into.Name, n+1, source.FormatBytes((n+1)*per), says)
	}
}

// addLoadedPart adds a loaded producer's events, part, to the derived
// stream name (target; nil: a new one) and rebuilds it.
func (s *Session) addLoadedPart(name string, from, target *entry, part derive.Part) {
	if target == nil {
		target = &entry{name: name, kind: Loaded, derived: &derivation{unit: from.stream.Unit}}
		s.cat.add(target)
	}
	d := target.derived
	d.producers = append(d.producers, &producer{from: from, part: part})
	parts := make([]derive.Part, len(d.producers))
	for i, p := range d.producers {
		parts[i] = p.part
	}
	// Rebuilt in place: derivations that read it hold the entry.
	target.stream = derive.Build(name, d.unit, parts)
	target.stream.Source = d.describe()
	text := "derived stream " + name + ": " + plural(int64(len(part.Events)), "event", "events")
	if len(d.producers) > 1 {
		text += " from this query, " + strconv.Itoa(len(target.stream.Events)) + " in all"
	}
	s.note("%s", text)
}

// collected is a loaded producer's output: its events in ts order.
type collected []*event.Event

func (c *collected) Event(_ *derive.Producer, e *event.Event) { *c = append(*c, e) }
func (*collected) Flush()                                     {}
func (*collected) Close()                                     {}
