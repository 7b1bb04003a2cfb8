package session

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/job"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/source"
)

// query compiles and runs a query, or prints its plan (EXPLAIN), or runs it
// and prints the plan with each operator's counts (EXPLAIN ANALYZE).
func (s *Session) query(ctx context.Context, src *ast.Source, q *ast.Query) error {
	e, err := s.streamFor(src, q.From, q.Span.Start)
	if err != nil {
		return err
	}
	var stream *event.Stream // what the query compiles against
	var unit *ast.Duration   // a live query's WITHIN to check at the first event (unitView)
	var unseen []string      // the names a live stream has not seen yet
	if s.grules != nil && s.grules.live != e.live {
		s.startGroupRules() // a rule on another stream ends the run
	}
	if e.kind == Live {
		if g := s.groups[e.live]; g != nil {
			if q.Rule != nil && !q.Explain && !q.Analyze {
				return s.groupRule(src, q, e.live, g) // with the script's next rules (rules_group.go)
			}
			return s.groupQuery(src, q, e.live, g)
		}
		if q.Analyze {
			return errAt(src, q.Span.Start, "EXPLAIN ANALYZE needs a loaded stream; %s is live", e.name)
		}
		e.live.Update(func(sc *event.Schema) { unseen = s.register(sc, q) })
		snap := e.live.Snapshot()
		s.bareWindow(src, q, e.name, snap.Unit)
		stream, unit = unitView(q, e.live, snap)
	} else {
		stream = e.stream
		s.absentTypes(src, q, e.name, stream.Schema)
		s.bareWindow(src, q, e.name, stream.Unit)
	}
	cq, err := s.c.Compile(q, src, stream, s.set.Engine)
	if err != nil {
		return err
	}
	var into *entry
	if q.Into != nil {
		if into, err = s.checkInto(src, q, e, cq); err != nil {
			return err
		}
	}
	if e.kind == Loaded {
		s.emptyAttrs(q, e.name, stream.Schema)
	}
	if q.Rule != nil && e.kind == Loaded && !q.Analyze {
		return s.addRule(src, q, e, cq) // runs with the script's next rules (rules.go)
	}
	if q.Explain && !q.Analyze {
		return s.explain(cq, q, e.name, e.live, len(stream.Events), nil)
	}
	if e.kind == Live {
		return s.liveQuery(src, q, e, into, cq, stream, unit, unseen)
	}
	work := "query"
	if q.Analyze {
		work = "EXPLAIN ANALYZE"
	}
	defer s.prog.begin(work, int64(len(stream.Events)))()
	if q.Analyze {
		j := s.job(job.Config{Query: cq, Source: job.Loaded(stream.All()), Sink: output.New(output.Count, io.Discard, output.Schema{}), Timing: true}, "", len(stream.Events))
		sum, err := j.Run(ctx)
		if err != nil {
			return err
		}
		if err := s.explain(cq, q, e.name, nil, len(stream.Events), sum.Stats); err != nil {
			return err
		}
		s.note("(%s)", counts(sum.Stats.Matches, sum.Stats, e.name, s.set.Timing))
		return nil
	}
	if q.Into != nil {
		if err := s.intoLoaded(ctx, src, q, e, into, cq); err != nil {
			return err
		}
		s.oddValues(cq, e.name, stream.Schema)
		return nil
	}

	w := s.writer(s.resultsOut(), schemaOf(cq, stream.Schema, stream.Unit, nil), 0)
	limit := s.set.Limit
	j := s.job(job.Config{Query: cq, Source: job.Loaded(stream.All()), Sink: w, Limit: limit}, s.set.Format, len(stream.Events))
	sum, err := j.Run(ctx)
	if err != nil {
		return err
	}
	s.note("(%s)", counts(sum.Stats.Matches, sum.Stats, e.name, s.set.Timing))
	s.oddValues(cq, e.name, stream.Schema)
	if sum.State == job.EndedAtLimit {
		s.note("(stopped at the limit of %s; SET limit = 0 for all)", plural(limit, "match", "matches"))
	}
	return nil
}

// job is a run on a loaded stream of events events, in format f: on the
// workers SET workers gives, which encode the matches when the sink can
// take them so (output.Chunked), counted for the session's progress.
func (s *Session) job(cfg job.Config, f output.Format, events int) *job.Job {
	cfg.Workers, _ = s.set.workers(cfg.Query, f, events)
	cfg.AnyOrder, cfg.Chunks, cfg.Progress = s.set.AnyOrder, true, s.prog != nil
	j := job.New(cfg)
	s.prog.running(j)
	return j
}

// explain prints a query's plan in its EXPLAIN's format, with the counts
// of a run (stats) for EXPLAIN ANALYZE, on a loaded stream of events
// events or live.
func (s *Session) explain(cq query.Query, q *ast.Query, from string, live *source.Live, events int, stats *query.Stats) error {
	f := s.set.Format
	if q.Analyze {
		f = "" // it counts the matches, on one worker unless SET workers says
	}
	if live != nil {
		events = -1
	}
	workers, why := s.set.workers(cq, f, events)
	text, err := cq.ExplainAs(q.ExplainFormat, workers, live != nil, stats)
	if err != nil {
		return err
	}
	if q.ExplainFormat == "" || q.ExplainFormat == "text" {
		if why != "" && stats == nil {
			text += "Parallel: one worker (" + why + ")\n" // as the plan's split says it
		}
		if e := s.cat.entries[from]; stats != nil && e != nil && e.kind != Live {
			for _, o := range cq.OddValues(e.stream.Schema, nil) {
				text += "Warning: " + o.String() + "\n"
			}
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
func schemaOf(cq query.Query, events *event.Schema, unit time.Duration, update func(func(*event.Schema))) output.Schema {
	return output.Schema{Columns: cq.Columns(), Events: events, Update: update, Unit: unit}
}

// counts is "N matches, M events on stream, 12.3ms, 8.1M events/s" for a
// summary, without the times when timing is off (so that output is
// reproducible). It names the stream: the one the query ran on may not be
// the one the user had in mind.
func counts(matches int64, stats *query.Stats, stream string, timing bool) string {
	text := fmt.Sprintf("%s, %s on %s", plural(matches, "match", "matches"), plural(stats.Events, "event", "events"), stream)
	if timing {
		text += ", " + formatDuration(stats.Elapsed)
		if secs := stats.Elapsed.Seconds(); secs > 0 {
			text += ", " + formatRate(float64(stats.Events)/secs) + " events/s"
		}
	}
	return text
}

func plural(n int64, one, many string) string { return job.Plural(n, one, many) }

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
