package session

import (
	"context"
	"io"
	"iter"
	"math"
	"strings"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/job"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/query"
)

// mrLive starts a MATCH_RECOGNIZE on the live stream e in the background
// (docs/MATCH_RECOGNIZE.md, Live streams): its rows are written as its
// matches are decided, on one worker.
func (s *Session) mrLive(src *ast.Source, st *ast.MatchRecognize, e *entry) error {
	l := e.live
	l.Update(func(sc *event.Schema) { registerMR(sc, src, st) })
	snap := l.Snapshot()
	q, err := s.c.MatchRecognize(st, src, snap.Schema, int64(snap.Unit))
	if err != nil {
		return err
	}
	if err := q.LiveError(); err != nil {
		return err
	}
	if st.Analyze {
		return errAt(src, st.Span.Start, "EXPLAIN ANALYZE needs a loaded stream; %s is live", e.name)
	}
	if st.Explain {
		s.printMRPlan(st, q.Plan(nil, nil))
		return nil
	}
	if st.Into != nil {
		return s.mrIntoLive(src, st, q, e)
	}
	sc := mrSchema(q)
	lw, err := s.liveWriter(src, st.Span.Start, l, sc, false)
	if err != nil {
		return err
	}
	lq := s.addQuery(l, st)
	lq.taps, lw.src.q = newTaps(sc), lq
	s.note("query %d started on %s", lq.id, l.Name())
	cfg := job.Config{Source: lw.src, Sink: s.counted(lq, lw.w), Limit: s.set.Limit, Run: mrRun(q, false)}
	s.runLive(lq, cfg, nil, lw.end)
	return nil
}

// mrRun runs q live over events, a row at a time into sink; with at,
// each row's cells end with one whose Event is the row it is at (a
// derived event's ts, derive.Producer.Row).
func mrRun(q query.MatchRecognize, at bool) func(context.Context, iter.Seq[*event.Event], func([]query.Cell) bool) (int64, error) {
	return func(ctx context.Context, events iter.Seq[*event.Event], sink func([]query.Cell) bool) (int64, error) {
		run := q.Live(mrCells(len(q.Columns()), at, sink))
		for e := range events {
			if err := run.Push(e); err != nil || run.Stopped() {
				return run.Stats().Rows, err
			}
		}
		if ctx.Err() != nil {
			return run.Stats().Rows, nil // stopped: no end to decide at
		}
		return run.Stats().Rows, run.End()
	}
}

// mrSchema is the output schema of q's rows.
func mrSchema(q query.MatchRecognize) output.Schema {
	names := q.Columns()
	cols := make([]output.Column, len(names))
	for i, n := range names {
		cols[i] = output.Column{Name: n, Kind: output.Value}
	}
	return output.Schema{Columns: cols}
}

// registerMR adds to a live stream's schema the columns st reads that it
// has not seen yet (as written), so that its events' attributes of those
// names land where the query reads them.
func registerMR(sc *event.Schema, src *ast.Source, st *ast.MatchRecognize) {
	add := func(n *ast.MRName) {
		name := n.Name
		if !n.Quoted {
			name = src.Text[n.Span.Start:n.Span.End]
		}
		for _, a := range sc.Attrs {
			if a == name || !n.Quoted && strings.EqualFold(a, name) {
				return
			}
		}
		switch strings.ToUpper(name) {
		case "TS", "TYPE", "SEQ":
			if !n.Quoted || name == strings.ToLower(name) {
				return // a row's own columns
			}
		}
		sc.AddAttr(name)
	}
	var walk func(x ast.Expr)
	walk = func(x ast.Expr) {
		switch n := x.(type) {
		case *ast.MRColumn:
			add(n.Col)
		case *ast.BinaryExpr:
			walk(n.X)
			walk(n.Y)
		case *ast.UnaryExpr:
			walk(n.X)
		case *ast.MRCall:
			if n.Func != "CLASSIFIER" {
				for _, a := range n.Args {
					walk(a)
				}
			}
		}
	}
	for _, p := range st.PartitionBy {
		add(p)
	}
	for _, o := range st.OrderBy {
		add(o.Col)
	}
	for _, m := range st.Measures {
		walk(m.Expr)
	}
	for _, d := range st.Defines {
		walk(d.Cond)
	}
}

// mrExplain prints q's plan in the EXPLAIN format asked for; ANALYZE runs
// q over events first (on one worker, its rows dropped) and adds its
// counts.
func (s *Session) mrExplain(ctx context.Context, st *ast.MatchRecognize, q query.MatchRecognize, stream string, events []*event.Event) error {
	plan := q.Plan(nil, nil)
	if st.Analyze {
		var counted query.MRStats
		var prof query.MRProfile
		run := func(ctx context.Context, events []*event.Event, emit query.MREmit) (rs query.MRStats, err error) {
			rs, prof, err = q.RunProfiled(ctx, events, emit)
			return rs, err
		}
		defer s.prog.begin("EXPLAIN ANALYZE", int64(len(events)))()
		discard := output.New(output.Count, io.Discard, output.Schema{})
		j := s.job(job.Config{Source: job.Slice(events), Sink: discard, RunAll: mrLoaded(q, false, run, &counted)}, "", len(events))
		sum, err := j.Run(ctx)
		if err != nil {
			return err
		}
		plan = q.Plan(&counted, prof)
		defer s.note("(%s)", s.mrCounts(sum, counted, stream))
	}
	s.printMRPlan(st, plan)
	return nil
}

// printMRPlan prints plan in st's EXPLAIN format.
func (s *Session) printMRPlan(st *ast.MatchRecognize, plan query.MRPlan) {
	switch st.ExplainFormat {
	case "json":
		s.out.WriteString(plan.JSON())
	case "dot":
		s.out.WriteString(plan.Dot())
	default:
		s.out.WriteString(plan.Text())
	}
}

// mrCells turns rows of n values into cells for sink; with at, followed by
// a cell holding the row they are at.
func mrCells(n int, at bool, sink func([]query.Cell) bool) query.MREmit {
	cells := make([]query.Cell, n, n+1)
	if at {
		cells = cells[:n+1]
	}
	return func(row []event.Value, e *event.Event) bool {
		for i, v := range row {
			cells[i] = query.Cell{Value: v}
		}
		if at {
			cells[n] = query.Cell{Event: e}
		}
		return sink(cells)
	}
}

// mrInto checks q's INTO: its columns may not be named as a derived
// event's own, and its stream is new or a derived one it may write into.
func (s *Session) mrInto(src *ast.Source, st *ast.MatchRecognize, q query.MatchRecognize, from *entry) (*entry, error) {
	for _, col := range q.Columns() {
		for _, b := range builtinNames {
			if strings.EqualFold(col, b) {
				return nil, errAt(src, st.Into.Span.Start, "column %s would be hidden by the derived event's %s; name it otherwise with AS", col, b)
			}
		}
	}
	return s.intoTarget(src, st.Into, from)
}

// mrIntoLoaded runs q over the loaded stream from to its end and adds its
// rows, as events, to the derived stream st.Into names: an event's ts is
// the row's it is at (ONE ROW PER MATCH: the match's last).
func (s *Session) mrIntoLoaded(ctx context.Context, src *ast.Source, st *ast.MatchRecognize, q query.MatchRecognize, from *entry) error {
	target, err := s.mrInto(src, st, q, from)
	if err != nil {
		return err
	}
	lp, err := newLoadedPart(src, st.Into, q.Columns(), true, math.MaxInt64)
	if err != nil {
		return err
	}
	n := len(from.stream.Events)
	workers, _ := s.set.workers(nil, s.set.Format, n)
	var counted query.MRStats
	run := func(ctx context.Context, events []*event.Event, emit query.MREmit) (query.MRStats, error) {
		return q.Run(ctx, events, workers, emit)
	}
	defer s.prog.begin("query", int64(n))()
	j := s.job(job.Config{Source: job.Slice(from.stream.Events), Sink: lp, RunAll: mrLoaded(q, true, run, &counted)}, s.set.Format, n)
	sum, err := j.Run(ctx)
	if err != nil {
		return lp.full(err)
	}
	s.note("(%s)", s.mrCounts(sum, counted, from.name))
	s.addLoadedPart(st.Into.Name, from, target, lp.part())
	return nil
}

// mrIntoLive starts q on the live stream from in the background, writing
// into the live derived stream st.Into names. Its events are released once
// the input has passed their ts by the WITHIN (no match decided later can
// be earlier), or at the input's end when there is no WITHIN.
func (s *Session) mrIntoLive(src *ast.Source, st *ast.MatchRecognize, q query.MatchRecognize, from *entry) error {
	target, err := s.mrInto(src, st, q, from)
	if err != nil {
		return err
	}
	w, ok := q.Window()
	if !ok {
		w = math.MaxInt64
	}
	lq, ls, p, err := s.soloProducer(src, st.Into, st, from, target, q.Columns(), true, w)
	if err != nil {
		return err
	}
	s.runLive(lq, job.Config{Source: ls, Sink: s.counted(lq, p), Run: mrRun(q, true)}, nil, nil)
	return nil
}
