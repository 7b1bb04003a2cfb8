package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/job"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/query"
)

// rules are a script's consecutive RULE statements on one loaded stream:
// they run as one rulebook, in one pass over the stream, when the run of
// rules ends (at the next statement that is not a rule on that stream,
// or at the end of the script). Each rule's matches come out as it would
// alone, with a first column naming the rule, one rule after another.
// A rule written with EXPLAIN does not run: the rulebook's index is
// shown, then its plan. A rule with INTO runs in the book as its producer
// query (derive.Query), its matches to its producer, and its events are
// added to its derived stream at the book's end, in rule order, as alone.
type rules struct {
	e     *entry
	book  []query.Rule
	asts  []*ast.Query
	limit int64         // the limit of matches per rule as the first rule set it
	odd   []query.Query // by rule: as compiled (an INTO rule's book query is its producer's)
	stmts []stmtBase    // by rule: where its statement is, for its errors
	into  []*loadedPart // by rule: its INTO's producer, or nil
}

// addRule holds RULE query q, compiled as cq on loaded stream e, for the
// session's rulebook on e, running the rulebook on another stream first.
func (s *Session) addRule(src *ast.Source, q *ast.Query, e *entry, cq query.Query) error {
	if s.rules != nil && s.rules.e != e {
		if err := s.runRules(context.Background()); err != nil {
			return err
		}
	}
	rule, lp := query.Rule{Name: q.Rule.Name, Query: cq}, (*loadedPart)(nil)
	if q.Into != nil {
		pq, cols, late, w, err := s.producerQuery(src, q, e.stream, cq)
		if err == nil {
			lp, err = newLoadedPart(src, q.Into, cols, late, w)
		}
		if err != nil {
			return err
		}
		rule.Query = pq
	}
	if s.rules == nil {
		s.rules = &rules{e: e, limit: s.set.Limit}
	}
	s.rules.book = append(s.rules.book, rule)
	s.rules.asts = append(s.rules.asts, q)
	s.rules.odd = append(s.rules.odd, cq)
	s.rules.stmts = append(s.rules.stmts, s.stmt)
	s.rules.into = append(s.rules.into, lp)
	return nil
}

// endsBefore reports whether the rules held must run before query q,
// which reads current unless it names a stream: q reads a stream a held
// rule writes with INTO, or writes into one from another stream, and must
// find it as the held rules leave it, as if each had run alone
// (docs/LANGUAGE.md, RULE).
func (rs *rules) endsBefore(q *ast.Query, current string) bool {
	if rs == nil {
		return false
	}
	from := current
	if q.From != nil {
		from = q.From.Name
	}
	for i, a := range rs.asts {
		if rs.into[i] == nil || a.Explain {
			continue
		}
		if name := a.Into.Name; name == from || (q.Into != nil && q.Into.Name == name && from != rs.e.name) {
			return true
		}
	}
	return false
}

// runRules runs the rules held, if any, as one rulebook over their
// stream, and prints each rule's matches and counts.
func (s *Session) runRules(ctx context.Context) error {
	rs := s.rules
	if rs == nil {
		return nil
	}
	s.rules = nil
	stream := rs.e.stream
	workers := s.set.Workers // as SET says: EXPLAIN below shows a rule's plan on one
	if slices.ContainsFunc(rs.asts, func(q *ast.Query) bool { return q.Explain }) {
		book, n := s.c.Rulebook(stream.Schema, rs.book), workers
		if n == 0 {
			n = book.AutoWorkers()
		}
		s.out.WriteString(book.Explain(n))
		// A rule runs on one worker, in its pass (SET workers shares the
		// rules among passes): its plan is shown so.
		defer func() { s.set.Workers = workers }()
		s.set.Workers = 1
		keep := 0
		for i, q := range rs.asts {
			if q.Explain {
				fmt.Fprintf(s.out, "rule %s:\n", rs.book[i].Name)
				if err := s.explain(rs.odd[i], q, rs.e.name, nil, len(stream.Events), nil); err != nil {
					return err
				}
				continue
			}
			rs.book[keep], rs.asts[keep], rs.odd[keep], rs.stmts[keep], rs.into[keep] = rs.book[i], q, rs.odd[i], rs.stmts[i], rs.into[i]
			keep++
		}
		rs.book, rs.asts, rs.odd, rs.stmts, rs.into = rs.book[:keep], rs.asts[:keep], rs.odd[:keep], rs.stmts[:keep], rs.into[:keep]
		if keep == 0 {
			return nil
		}
	}
	n := len(stream.Events)
	defer s.prog.begin("rulebook", int64(n))()
	outs := make([]bytes.Buffer, len(rs.book))
	w := &bookOut{writers: make([]output.Writer, len(rs.book)), errs: make([]error, len(rs.book))}
	for i, r := range rs.book {
		if rs.into[i] != nil {
			continue // it writes no rows
		}
		sc := schemaOf(r.Query, stream.Schema, stream.Unit, nil)
		sc.Columns = append([]output.Column{{Name: "rule"}}, sc.Columns...)
		w.writers[i] = s.writer(&outs[i], sc, 0)
	}
	counts := make([]int64, len(rs.book))
	var results []query.RuleResult
	book := s.c.Rulebook(stream.Schema, rs.book)
	if workers == 0 {
		workers = book.AutoWorkers()
	}
	// One job reads the stream once; each rule writes its rows to its own
	// writer, on its pass's goroutine (SET workers splits the rules among
	// passes run in parallel), and hands them to the job's sink, one at a
	// time, which counts them all, for a cancel's message; each rule
	// keeps its own limit and summary.
	run := func(ctx context.Context, events iter.Seq[*event.Event], sink func([]query.Cell) bool) (int64, error) {
		if workers > 1 { // passes call it at once; one pass needs no lock at each row
			var mu sync.Mutex
			job := sink
			sink = func(row []query.Cell) bool {
				mu.Lock()
				defer mu.Unlock()
				return job(row)
			}
		}
		sinks := make([]query.Sink, len(rs.book))
		for i, r := range rs.book {
			if lp := rs.into[i]; lp != nil {
				// Its producer is not told the input's time (Follow): it
				// holds its events to its end, then releases them in (ts,
				// match) order, the order in which following releases them
				// (derive), in the memory boundInto allows for.
				sinks[i] = func(cells []query.Cell) bool {
					if w.errs[i] = lp.Row(cells); w.errs[i] != nil {
						return false
					}
					counts[i]++
					return sink(cells)
				}
				continue
			}
			row := []query.Cell{{Value: event.StringValue(r.Name)}}
			sinks[i] = func(cells []query.Cell) bool {
				row = append(row[:1], cells...)
				err := w.writers[i].Row(row)
				ok := sink(row)
				if w.errs[i] = err; !ok || err != nil {
					return false
				}
				counts[i]++
				return rs.limit == 0 || counts[i] < rs.limit
			}
		}
		var read int64
		results = book.Run(ctx, workers, func(yield func(*event.Event) bool) {
			for e := range events {
				read++
				if !yield(e) {
					return
				}
			}
		}, sinks)
		return read, nil
	}
	_, err := s.job(job.Config{Source: job.Loaded(stream.All()), Sink: w, Run: run}, s.set.Format, n).Run(ctx)
	for i := range outs {
		s.out.Write(outs[i].Bytes())
	}
	if err != nil {
		return err // cancelled: the rows written are out, no rule's summary
	}
	var failed []error
	for i, r := range rs.book {
		res, err := results[i], results[i].Err
		if lp := rs.into[i]; err == nil && lp != nil && w.errs[i] != nil {
			err = lp.full(w.errs[i]) // the statement's, at its INTO
		}
		switch {
		case err != nil:
			st := rs.stmts[i]
			rebase(err, st.sub, st.src, st.start)
			failed = append(failed, fmt.Errorf("rule %s: %w", r.Name, err))
			continue
		case w.errs[i] != nil:
			failed = append(failed, fmt.Errorf("rule %s: writing the results: %w", r.Name, w.errs[i]))
			continue
		}
		s.note("(rule %s: %s)", r.Name, countsOn(counts[i], res.Stats, rs.e.name, len(stream.Events), s.set.Timing))
		if lp := rs.into[i]; lp != nil {
			lp.Finish() // it releases its events
			name := rs.asts[i].Into.Name
			s.addLoadedPart(name, rs.e, s.cat.entries[name], lp.part()) // an earlier rule may have made it
			continue
		}
		if rs.limit > 0 && counts[i] >= rs.limit {
			s.note("(rule %s stopped at the limit of %s; SET limit = 0 for all)", r.Name, plural(rs.limit, "match", "matches"))
		}
	}
	for _, cq := range rs.odd {
		s.oddValues(cq, rs.e.name, stream.Schema)
	}
	return errors.Join(failed...)
}

// bookOut is a loaded rulebook's job's sink: each rule has written its
// row to its writer before the job's sink counts it. A rule's writer's
// error ends that rule alone, not the job: it is kept for the rule's
// summary (the job counts the row it refused among those written).
type bookOut struct {
	writers []output.Writer // by rule; nil for an INTO rule's
	errs    []error         // by rule: its writer's first error, or its INTO producer's
}

func (b *bookOut) Row([]query.Cell) error { return nil }

func (b *bookOut) Sync() error { return nil }

// Finish finishes each rule's writer.
func (b *bookOut) Finish() error {
	for i, w := range b.writers {
		if w == nil {
			continue
		}
		if err := w.Finish(); b.errs[i] == nil {
			b.errs[i] = err
		}
	}
	return nil
}

// countsOn is counts for a rule of a rulebook, which read only the events
// of the stream it could use: it names the stream's events, not the
// rule's.
func countsOn(matches int64, stats *query.Stats, stream string, events int, timing bool) string {
	all := *stats
	all.Events = int64(events)
	return counts(matches, &all, stream, timing)
}
