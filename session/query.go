package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/planner"
	"github.com/sase-cep/sase/source"
)

// query compiles and runs a query, or prints its plan (EXPLAIN), or runs it
// and prints the plan with each operator's counts (EXPLAIN ANALYZE).
func (s *Session) query(ctx context.Context, src *ast.Source, q *ast.Query) error {
	e, err := s.streamFor(src, q.From, q.Span.Start)
	if err != nil {
		return err
	}
	if e.kind == Live {
		return s.liveQuery(src, q, e.live)
	}
	stream := e.stream
	s.absentTypes(src, q, e.name, stream.Schema)
	s.bareWindow(src, q, e.name, stream.Unit)
	cq, err := sase.CompileAST(q, src, stream, sase.WithEngine(s.set.Engine))
	if err != nil {
		return err
	}
	var into *entry
	if q.Into != nil {
		if into, err = s.checkInto(src, q, e, cq); err != nil {
			return err
		}
	}
	s.emptyAttrs(q, e.name, stream.Schema)
	if q.Explain && !q.Analyze {
		return s.explain(cq, q, e.name, nil, len(stream.Events), nil)
	}
	work := "query"
	if q.Analyze {
		work = "EXPLAIN ANALYZE"
	}
	defer s.prog.begin(work, int64(len(stream.Events)))()
	events := s.prog.count(stream.All())
	if q.Analyze {
		var n int64
		stats, err := cq.Run(ctx, events, func([]sase.Cell) bool {
			n++
			s.prog.matched(n)
			return true
		}, append(s.runOptions(output.New(output.Count, io.Discard, output.Schema{}), "", 0, len(stream.Events), &n), sase.WithTiming())...)
		if err != nil {
			return runError(err, stats, stats.Matches)
		}
		if err := s.explain(cq, q, e.name, nil, len(stream.Events), stats); err != nil {
			return err
		}
		s.note("(%s)", counts(stats.Matches, stats, e.name, s.set.Timing))
		return nil
	}
	if q.Into != nil {
		return s.intoLoaded(ctx, src, q, e, into, cq)
	}

	w := s.writer(s.resultsOut(), schemaOf(cq, stream.Schema, stream.Unit, nil), 0)
	limit, n := s.set.Limit, int64(0)
	stats, err := cq.Run(ctx, events, func(row []sase.Cell) bool {
		if w.Row(row) != nil {
			return false // the output is gone (\o's disk is full, a closed pipe): stop
		}
		n++
		s.prog.matched(n)
		return limit == 0 || n < limit
	}, s.runOptions(w, s.set.Format, limit, len(stream.Events), &n)...)
	werr := w.Finish()
	if err != nil {
		return runError(err, stats, n) // the matches written: the engine counts one the sink refused
	}
	if werr != nil {
		return fmt.Errorf("writing the results: %w", werr)
	}
	s.note("(%s)", counts(stats.Matches, stats, e.name, s.set.Timing))
	if limit > 0 && n >= limit {
		s.note("(stopped at the limit of %s; SET limit = 0 for all)", plural(limit, "match", "matches"))
	}
	return nil
}

// runOptions are the options of a run on a loaded stream of events
// events that writes through w, in format f, at most limit matches (0:
// all), counting them in n. A split run has its workers encode the matches when w can take them
// so (output.Chunked); one worker calls the run's sink, but for a count.
func (s *Session) runOptions(w output.Writer, f output.Format, limit int64, events int, n *int64) []sase.RunOption {
	workers, _ := s.set.workers(f, events)
	opts := []sase.RunOption{sase.WithWorkers(workers)}
	if s.set.AnyOrder {
		opts = append(opts, sase.WithAnyOrder())
	}
	// One worker calls the sink per match, except for a count.
	if c := output.ChunksOf(w, limit, func(rows int) { *n += int64(rows); s.prog.matched(*n) }); c != nil {
		opts = append(opts, sase.WithChunks(c))
	}
	return opts
}

// explain prints a query's plan in its EXPLAIN's format, with the counts
// of a run (stats) for EXPLAIN ANALYZE, on a loaded stream of events
// events or live.
func (s *Session) explain(cq *sase.Query, q *ast.Query, from string, live *source.Live, events int, stats *sase.Stats) error {
	f := s.set.Format
	if q.Analyze {
		f = "" // it counts the matches, on one worker unless SET workers says
	}
	if live != nil {
		events = -1
	}
	workers, why := s.set.workers(f, events)
	text, err := cq.ExplainAs(q.ExplainFormat, workers, live != nil, stats)
	if err != nil {
		return err
	}
	if q.ExplainFormat == "" || q.ExplainFormat == "text" {
		if why != "" && stats == nil {
			text += sase.Split{Workers: 1, Why: why}.String() + "\n"
		}
		if live != nil {
			text = explainLive(text, live)
		}
		text = s.explainHeader(from, q, text)
	}
	s.out.WriteString(text)
	return nil
}

// resultsOut is s.out for a query's result writer, with the vectored
// writes of the results' file or standard output if it has them.
func (s *Session) resultsOut() io.Writer {
	if vec := output.BuffersOf(s.res.w); vec != nil {
		return vectoredOut{s.out, s.outs, vec}
	}
	return s.out
}

// writer is a result writer in the session's format: a table is expanded
// (\x) and fitted to the terminal, less indent columns, unless results go
// to a file.
func (s *Session) writer(w io.Writer, sc output.Schema, indent int) output.Writer {
	var opts []output.Option
	if s.style.Header != nil {
		opts = append(opts, output.WithHeaderStyle(s.style.Header))
	}
	if s.set.Expanded {
		opts = append(opts, output.WithExpanded())
	}
	if s.width != nil && s.res.file == nil {
		if width := s.width(); width > indent {
			opts = append(opts, output.WithWidth(width-indent))
		}
	}
	return output.New(s.set.Format, w, sc, opts...)
}

// schemaOf is the output schema of a compiled query's rows on a stream
// with schema events and tick unit; update reads a live stream's growing
// schema (nil for a loaded one).
func schemaOf(cq *sase.Query, events *event.Schema, unit time.Duration, update func(func(*event.Schema))) output.Schema {
	cols := cq.Columns()
	sc := output.Schema{Columns: make([]output.Column, len(cols)), Events: events, Update: update, Unit: unit}
	for i, c := range cols {
		kind := output.Value
		switch c.Kind {
		case planner.ColEvent:
			kind = output.Event
		case planner.ColList:
			kind = output.List
		}
		a, isAttr := c.Expr.(*planner.Attr)
		sc.Columns[i] = output.Column{Name: c.Name, Kind: kind, Time: isAttr && a.Builtin == planner.BuiltinTS}
	}
	return sc
}

// runError words a failed run; a cancelled one says how far it got.
func runError(err error, stats *sase.Stats, matches int64) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("query cancelled after %s and %s", plural(stats.Events, "event", "events"), plural(matches, "match", "matches"))
	}
	return err
}

// counts is "N matches, M events on stream, 12.3ms, 8.1M events/s" for a
// summary, without the times when timing is off (so that output is
// reproducible). It names the stream: the one the query ran on may not be
// the one the user had in mind.
func counts(matches int64, stats *sase.Stats, stream string, timing bool) string {
	text := fmt.Sprintf("%s, %s on %s", plural(matches, "match", "matches"), plural(stats.Events, "event", "events"), stream)
	if timing {
		text += ", " + formatDuration(stats.Elapsed)
		if secs := stats.Elapsed.Seconds(); secs > 0 {
			text += ", " + formatRate(float64(stats.Events)/secs) + " events/s"
		}
	}
	return text
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// formatRate prints a rate with a metric suffix: 812, 8.1K, 8.1M, 1.2G.
func formatRate(r float64) string {
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "K"}} {
		if r >= u.div {
			return strconv.FormatFloat(r/u.div, 'f', 1, 64) + u.suffix
		}
	}
	return strconv.FormatFloat(r, 'f', 0, 64)
}
