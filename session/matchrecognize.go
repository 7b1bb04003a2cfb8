package session

import (
	"context"
	"strings"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/rowpattern"
)

// matchRecognize runs a MATCH_RECOGNIZE on a loaded stream (rowpattern),
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
	q, err := rowpattern.Compile(st, src, stream.Schema, int64(stream.Unit))
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
	cells := make([]sase.Cell, len(q.Columns()))
	limit, written := s.set.Limit, int64(0)
	var werr error
	workers, _ := s.set.workers(nil, s.set.Format, len(stream.Events))
	stats, err := q.Run(ctx, stream.Events, workers, func(row []event.Value, _ *event.Event) bool {
		for i, v := range row {
			cells[i] = sase.Cell{Value: v}
		}
		if werr = w.Row(cells); werr != nil {
			return false
		}
		written++
		return limit <= 0 || written < limit
	})
	if ferr := w.Finish(); werr == nil {
		werr = ferr
	}
	if err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	s.note("(%s, %s, %s on %s)", plural(written, "row", "rows"), plural(stats.Matches, "match", "matches"),
		plural(stats.Rows, "event", "events"), e.name)
	if limit > 0 && written >= limit {
		s.note("(stopped at the limit of %s; SET limit = 0 for all)", plural(limit, "row", "rows"))
	}
	return nil
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
