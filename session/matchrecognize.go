package session

import (
	"context"
	"strings"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/job"
	"github.com/sase-cep/sase/query"
)

// matchRecognize runs a MATCH_RECOGNIZE on a loaded stream (query.MatchRecognize),
// writing its rows in the session's format, at most SET limit of them.
func (s *Session) matchRecognize(ctx context.Context, src *ast.Source, st *ast.MatchRecognize) error {
	e, err := s.mrStream(src, st.From)
	if err != nil {
		return err
	}
	if e.kind == Live {
		return s.mrLive(src, st, e)
	}
	stream := e.stream
	q, err := s.c.MatchRecognize(st, src, stream.Schema, int64(stream.Unit))
	if err != nil {
		return err
	}
	if st.Explain {
		return s.mrExplain(ctx, st, q, e.name, stream.Events)
	}
	if st.Into != nil {
		return s.mrIntoLoaded(ctx, src, st, q, e)
	}
	w := s.writer(s.resultsOut(), mrSchema(q), 0)
	limit, n := s.set.Limit, len(stream.Events)
	workers, _ := s.set.workers(nil, s.set.Format, n)
	var counted query.MRStats
	run := func(ctx context.Context, events []*event.Event, emit query.MREmit) (query.MRStats, error) {
		return q.Run(ctx, events, workers, emit)
	}
	defer s.prog.begin("query", int64(n))()
	j := s.job(job.Config{Source: job.Slice(stream.Events), Sink: w, Limit: limit, RunAll: mrLoaded(q, false, run, &counted)}, s.set.Format, n)
	sum, err := j.Run(ctx)
	if err != nil {
		return err
	}
	s.note("(%s)", s.mrCounts(sum, counted, e.name))
	if sum.State == job.EndedAtLimit {
		s.note("(stopped at the limit of %s; SET limit = 0 for all)", plural(limit, "row", "rows"))
	}
	return nil
}

// mrLoaded is a job's RunAll for q over a loaded stream's events: run (q's
// Run or RunProfiled) partitions and sorts them all before it matches;
// with at, each row's cells end with one holding the row it is at
// (mrCells). st gets the run's counts.
func mrLoaded(q query.MatchRecognize, at bool, run func(context.Context, []*event.Event, query.MREmit) (query.MRStats, error), st *query.MRStats) func(context.Context, []*event.Event, func([]query.Cell) bool) error {
	return func(ctx context.Context, events []*event.Event, sink func([]query.Cell) bool) error {
		var err error
		*st, err = run(ctx, events, mrCells(len(q.Columns()), at, sink))
		return err
	}
}

// mrCounts is a loaded MATCH_RECOGNIZE's summary: the rows it wrote, its
// matches, then the events it read on stream as a query's counts say
// them (with its time when SET timing is on).
func (s *Session) mrCounts(sum job.Summary, st query.MRStats, stream string) string {
	return plural(sum.Matches, "row", "rows") + ", " + counts(st.Matches, sum.Stats, stream, s.set.Timing)
}

// mrStream finds the stream FROM names: SQL names are case-insensitive
// unless quoted.
func (s *Session) mrStream(src *ast.Source, n *ast.MRName) (*entry, error) {
	if e, ok := s.cat.entries[n.Name]; ok {
		return e, nil
	}
	if !n.Quoted {
		for _, name := range s.cat.order {
			if e, ok := s.cat.entries[name]; ok && strings.EqualFold(name, n.Name) {
				return e, nil
			}
		}
	}
	name := n.Name
	if !n.Quoted {
		name = src.Text[n.Span.Start:n.Span.End]
	}
	return s.streamFor(src, &ast.Ident{Span: n.Span, Name: name}, n.Span.Start)
}
