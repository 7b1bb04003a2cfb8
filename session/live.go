package session

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/derive"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/job"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/source"
)

// A query on a live stream runs in the background: the statement starts it
// as query n and returns, its matches are written as they complete (flushed
// whenever the query waits for input), and it ends with its stream, at
// STOP QUERY n, or when Wait is cancelled. In a script the streams start
// reading once the script has run (Wait), so that every query of the
// script sees the whole stream; in the shell a stream starts with its
// first query.

// State is where a live query is in its life: its job's (job.State).
type State = job.State

const (
	Running      = job.Running
	Ended        = job.Ended        // its stream ended
	EndedAtLimit = job.EndedAtLimit // it wrote SET limit matches
	Stopped      = job.Stopped      // STOP QUERY, or Wait cancelled
	Failed       = job.Failed       // its run returned an error
)

// QueryInfo describes a live query as SHOW QUERIES lists it.
type QueryInfo struct {
	ID      int
	Stream  string
	State   State
	Matches int64 // written so far
	Events  int64 // events it has read so far (a group query's: 0)
	Text    string
	Group   string // a group query's: what this instance does for it (its partitions, lag, pending acks)
	// GroupStats is a group query's counters (Group is its Status); nil
	// for the others.
	GroupStats *source.GroupStats
}

// liveQuery is one query started on a live stream.
type liveQuery struct {
	id     int
	live   *source.Live
	text   string
	cancel context.CancelFunc
	done   chan struct{}            // closed once the query has ended and written its summary
	job    *job.Job                 // its run; nil for a group query, which its group runs
	state  atomic.Int32             // a group query's State
	group  func() source.GroupStats // a group query's (remote.go)
	// matches and events count what it wrote and read so far, exactly
	// (SHOW QUERIES, metrics; a group query's are its group's).
	matches atomic.Int64
	events  atomic.Int64
	// observe (WithMatchDelay) gets each match's delay from readAt, when
	// the query read its latest event (nanoseconds since epoch); nil: the
	// query reads no clock.
	observe func(time.Duration)
	readAt  atomic.Int64
	taps    *taps // its followers (Follow); nil for INTO and group queries
	// odd says the new notices on absent and mixed values (oddWatch);
	// nil for none.
	odd func()
}

func (q *liveQuery) State() State {
	if q.job != nil {
		return q.job.State()
	}
	return State(q.state.Load())
}

// stop ends the query and waits until it has written its matches and
// summary.
func (q *liveQuery) stop() {
	q.cancel()
	<-q.done
}

// Queries lists the queries started on live streams, in the order they
// were started.
func (s *Session) Queries() []QueryInfo {
	infos := make([]QueryInfo, len(s.queries))
	for i, q := range s.queries {
		infos[i] = QueryInfo{ID: q.id, Stream: q.live.Name(), State: q.State(), Matches: q.matches.Load(), Events: q.events.Load(), Text: q.text}
		if q.group != nil {
			st := q.group()
			infos[i].Matches, infos[i].Group, infos[i].GroupStats = st.Matches, st.Status, &st
		}
	}
	return infos
}

// addLive registers a live stream under its name; text says what it is.
func (s *Session) addLive(l *source.Live, text string) {
	s.addLiveEntry(&entry{name: l.Name(), kind: Live, live: l}, text)
}

// addLiveEntry registers a live stream's entry (a derived one's has its
// derivation).
func (s *Session) addLiveEntry(e *entry, text string) {
	text += " (live: queries on it run in the background as events arrive)"
	if s.cat.add(e) {
		text += ", the current stream"
	}
	s.note("%s", text)
	if s.interactive {
		go func() {
			<-e.live.Done()
			s.streamSummary(e.live)
		}()
	}
}

// streamSummary says how much of a live stream was read, used and
// rejected, and why it ended if it failed.
func (s *Session) streamSummary(l *source.Live) {
	state := "ended"
	select {
	case <-l.Done():
		if l.Err() != nil {
			state = "stopped at an error" // reported when it happened
		} else if l.Stopped() {
			state = "stopped"
		}
	default:
		state = "stopped"
	}
	s.bgNote("(stream %s %s: %s)", l.Name(), state, reportCounts(l.Stats()))
}

// loadLive opens LOAD '-' and LOAD 'path' FOLLOW.
func (s *Session) loadLive(st *ast.Load, path string, opts source.Options) error {
	name, err := s.claim(st.Name, source.DefaultName(path))
	if err != nil {
		return err
	}
	if st.Follow {
		l, err := source.Follow(name, path, st.Format, opts, s.bgErrw)
		if err != nil {
			return err
		}
		s.addLive(l, "following "+path+" as "+name)
		return nil
	}
	if s.stdin == nil {
		return errors.New("LOAD '-': standard input is not available here (it is the script, or the terminal)")
	}
	l, err := source.LiveReader(name, s.stdin, st.Format, opts, s.bgErrw)
	if err != nil {
		return err
	}
	s.stdin = nil // it is read once, by this stream
	s.addLive(l, "reading "+name+" from standard input")
	return nil
}

func (s *Session) listen(src *ast.Source, st *ast.Listen) error {
	if listenScheme(st.Addr) {
		return s.listenURL(src, st)
	}
	opts, err := s.loadOptions(src, st.Options)
	if err == nil {
		err = timeOptions(src, st.Options, true)
	}
	if err == nil {
		err = s.allowLate(src, st.Options, &opts)
	}
	if err != nil {
		return err
	}
	name, err := s.claim(st.Name, "listen")
	if err != nil {
		return err
	}
	l, err := source.Listen(name, st.Addr, st.Format, opts, s.bgErrw)
	if old := s.cat.entries[name]; errors.Is(err, syscall.EADDRINUSE) && old != nil && old.kind == Live && samePort(old.live.Source(), st.Addr) {
		// The stream it replaces holds the port: it lets go of it first.
		old.live.CloseWait()
		if l, err = source.Listen(name, st.Addr, st.Format, opts, s.bgErrw); err != nil {
			s.cat.remove(name)
			return fmt.Errorf("%w (stream %s, which listened there, is closed)", err, name)
		}
	}
	if err != nil {
		return err
	}
	s.addLive(l, "listening on "+l.Source()+" as "+name)
	return nil
}

// samePort reports whether a listener's URL (tcp://host:port, with the
// port it got) and a LISTEN address name the same port.
func samePort(url, addr string) bool {
	_, p1, err1 := net.SplitHostPort(strings.TrimPrefix(url, "tcp://"))
	_, p2, err2 := net.SplitHostPort(strings.TrimPrefix(addr, "tcp://"))
	return err1 == nil && err2 == nil && p1 == p2
}

// explainLive adds the stream's event time to a plan's header, after its
// first line: what releases a waiting match depends on it.
func explainLive(plan string, l *source.Live) string {
	head, rest, _ := strings.Cut(plan, "\n")
	return head + "\nStream " + l.Name() + ": live, " + l.EventTime().String() + "\n" + rest
}

// liveQuery starts query q, compiled as cq over view (stream e as
// unitView gives it, with unit), on the live stream e; into is its INTO's
// derived stream if it has one, unseen the names the stream had not seen.
func (s *Session) liveQuery(src *ast.Source, q *ast.Query, e, into *entry, cq query.Query, view *event.Stream, unit *ast.Duration, unseen []string) error {
	l := e.live
	if !cq.Bounded() {
		// Its state would grow with the stream.
		return errAt(src, q.Span.Start, "engine %s does not bound its state by the window, which a live stream needs: SET engine = auto", s.set.Engine)
	}
	if q.Rule != nil && unit == nil {
		return s.liveRule(src, q, e, into, cq, view, unseen) // with the stream's other rules (rules_live.go)
	}
	if q.Into != nil {
		return s.intoLive(src, q, e, into, cq, view, unit)
	}
	tick := view.Unit // the stream's unit, which unitView may have set for a unit it does not know yet
	if unit != nil {
		tick = 0
	}
	sc := schemaOf(cq, view.Schema, tick, l.Update)
	// As they were at the start: SET may change them meanwhile.
	workers, _ := s.set.workers(cq, "", -1)
	lw, err := s.liveWriter(src, q.Span.Start, l, sc, cq.SplitWorkers(workers, true) > 1)
	if err != nil {
		return err
	}
	lq := s.addQuery(l, q)
	lq.taps, lq.odd, lw.src.q = newTaps(sc), s.oddWatch(lq.id, cq, l), lq
	lw.src.unit = unit
	text := fmt.Sprintf("query %d started on %s", lq.id, l.Name())
	if len(unseen) > 0 {
		text += " (not seen yet: " + strings.Join(unseen, ", ") + ")"
	}
	s.note("%s", text)
	cfg := job.Config{Query: cq, Source: lw.src, Sink: s.counted(lq, lw.w), Limit: s.set.Limit, Workers: workers, Flush: lq.odd}
	s.runLive(lq, cfg, q, lw.end)
	return nil
}

// liveOut is where the next live query's rows go: its writer, its source
// (subscribed to its stream, its q not set yet), and end, which closes
// what it holds once the query has ended.
type liveOut struct {
	w   output.Writer
	src *liveSource
	res *results // where its lines go, if not to SET output
}

// liveWriter opens the output of the next live query on l, of schema sc:
// SET output's sink, or the results, in the order of the stream's lines
// (split: its run is split among workers). at is the query's offset, for
// an error.
func (s *Session) liveWriter(src *ast.Source, at int, l *source.Live, sc output.Schema, split bool) (*liveOut, error) {
	id := len(s.queries) + 1
	out := &liveOut{src: &liveSource{live: l}}
	var err error
	if s.set.Output != "" {
		if out.w, err = output.Open(context.Background(), s.set.Output, output.SinkConfig{Query: "q" + strconv.Itoa(id), Schema: sc, Errors: s.bgErrw}); err != nil {
			return nil, errAt(src, at, "%v", err)
		}
		out.src.sub, err = l.Subscribe()
	} else {
		prefix := ""
		if s.interactive {
			prefix = "[" + strconv.Itoa(id) + "] "
		}
		var ms []*orderedOut
		var subs []*source.Subscription
		if ms, out.res, subs, err = s.ordered(l, split, prefix, 1); err == nil {
			m := ms[0]
			m.w = s.writer(m, sc, len(m.prefix))
			out.w, out.src.order, out.src.sub = m, m, subs[0]
		}
	}
	if err != nil {
		return nil, err
	}
	// A header (CSV's) goes out now, before any event, in statement order.
	out.w.Sync()
	return out, nil
}

// ordered is the sink in the order of l's lines of the next live query
// on l, its writer not set yet, each of its lines led by prefix: n
// members of the order, each with its subscription to l, from one
// position (a live rulebook's passes); res is the results they hold.
func (s *Session) ordered(l *source.Live, split bool, prefix string, n int) (ms []*orderedOut, res *results, subs []*source.Subscription, err error) {
	to := s.res // the results go where they went at the start, even after \o
	if s.bgRes != nil && to.file == nil {
		to = s.bgRes
	}
	res = to.hold()
	ms = make([]*orderedOut, n)
	for i := range ms {
		ms[i] = &orderedOut{dst: lockedWriter{s.outs, to.w}, lines: s.set.Format != output.Table, split: split, q: len(s.queries) + 1}
		if prefix != "" {
			ms[i].prefix = []byte(prefix)
		}
	}
	if subs, err = s.order(l).join(l, ms); err != nil {
		res.release()
		return nil, nil, nil, err
	}
	return ms, res, subs, nil
}

// end releases the results the query wrote to, adding to its error.
func (o *liveOut) end(err error) error {
	if o.res == nil {
		return err
	}
	if cerr := o.res.release(); err == nil && cerr != nil {
		err = fmt.Errorf("closing %s: %w", o.res.file.Name(), cerr)
	}
	return err
}

// addQuery registers q as the next query on the live stream l.
func (s *Session) addQuery(l *source.Live, q fmt.Stringer) *liveQuery {
	lq := &liveQuery{id: len(s.queries) + 1, live: l, text: strings.TrimSpace(q.String()), done: make(chan struct{})}
	s.queries = append(s.queries, lq)
	return lq
}

// runLive runs live query lq as a job of cfg in the background, until its
// stream ends, its limit, or STOP QUERY; then end (if not nil) may add to
// its error, and the query's summary is noted, with what its stream never
// carried of q (nil: none is said).
func (s *Session) runLive(lq *liveQuery, cfg job.Config, q *ast.Query, end func(error) error) {
	cfg.Live = true
	timing := s.set.Timing // as it was at the start
	ctx, cancel := context.WithCancel(context.Background())
	lq.cancel, lq.job = cancel, job.New(cfg)
	lq.job.Start(ctx)
	go func() {
		defer close(lq.done)
		sum, err := lq.job.Wait()
		if end != nil {
			err = end(err)
		}
		if err != nil {
			s.bgNote("%s query %d: %v", s.style.errorPrefix(), lq.id, err)
		}
		s.bgNote("(query %d %s: %s)", lq.id, sum.State, counts(sum.Matches, sum.Stats, lq.live.Name(), timing))
		if q != nil {
			s.carriedNote(lq, q)
		}
	}()
	if s.interactive || s.startLive {
		lq.live.Start()
	}
}

// liveSource is a live query's events: its subscription's, ended at the
// first one when they show that its WITHIN's unit cannot measure them
// (unit, checkUnit), followed by an INTO query's producer (into) and by
// the order of the lines of a query writing to the results (order).
type liveSource struct {
	sub   *source.Subscription
	live  *source.Live
	unit  *ast.Duration
	into  *derive.Producer
	order *orderedOut // a query writing to the results: it follows where the query has read
	q     *liveQuery  // counts what it reads, watches for odd values, stops at Close
	err   error
}

func (ls *liveSource) Events(ctx context.Context, pause func()) iter.Seq[*event.Event] {
	events := ls.q.read(ls.sub.Events(ctx, pause))
	if ls.unit != nil {
		events = ls.checkUnit(events)
	}
	if ls.into != nil {
		events = ls.into.Follow(events)
	}
	if ls.order != nil {
		events = ls.order.track(ctx, events)
	}
	return ls.q.stopAtClose(events)
}

func (ls *liveSource) Close()     { ls.sub.Close() }
func (ls *liveSource) Err() error { return ls.err }

// read counts the events the query reads (SHOW QUERIES, metrics) and,
// with odd, has each new kind of absent or mixed value said.
func (q *liveQuery) read(events iter.Seq[*event.Event]) iter.Seq[*event.Event] {
	counted := func(yield func(*event.Event) bool) {
		for e := range events {
			if !e.IsTick() {
				q.events.Add(1)
			}
			if q.observe != nil {
				q.readAt.Store(int64(time.Since(epoch)))
			}
			if !yield(e) {
				return
			}
		}
	}
	if q.odd != nil {
		return watchOdd(counted, q.odd)
	}
	return counted
}

// stopAtClose stops the query once it has read a stream that Close
// stopped to its end (the events its slack held among them): the stream
// was stopped, not ended, so the run's end releases no match whose window
// is still open.
func (q *liveQuery) stopAtClose(events iter.Seq[*event.Event]) iter.Seq[*event.Event] {
	return func(yield func(*event.Event) bool) {
		for e := range events {
			if !yield(e) {
				return
			}
		}
		if q.live.Stopped() {
			q.cancel()
		}
	}
}

// counted is w, counting the rows query q writes, handing each to its
// followers and timing it (WithMatchDelay).
func (s *Session) counted(q *liveQuery, w output.Writer) output.Writer {
	if s.delay != nil {
		q.observe = s.delay(q.id, q.live.Name())
	}
	return &countedWriter{w, q}
}

type countedWriter struct {
	output.Writer
	q *liveQuery
}

func (w *countedWriter) Row(row []query.Cell) error {
	if err := w.Writer.Row(row); err != nil {
		return err
	}
	w.q.matches.Add(1)
	w.q.taps.row(row)
	if w.q.observe != nil {
		w.q.observe(time.Since(epoch) - time.Duration(w.q.readAt.Load()))
	}
	return nil
}

// epoch is where the queries' monotonic read times count from.
var epoch = time.Now()

// unitView is the stream a live query compiles against. When its WITHIN
// names a time unit and the stream has no unit yet but has used no event
// either, its timestamps may still turn out RFC 3339, which count
// milliseconds: the query compiles as if they did, and returns the WITHIN
// for checkUnit to check at the first event. Otherwise it is stream, as
// it is (a unit on unit-less timestamps is then a compile error).
func unitView(q *ast.Query, l *source.Live, stream *event.Stream) (*event.Stream, *ast.Duration) {
	if q.Within == nil || q.Within.Unit == "" || stream.Unit != 0 || l.Stats().Used > 0 {
		return stream, nil
	}
	view := *stream
	view.Unit = time.Millisecond
	return &view, q.Within
}

// checkUnit stops the query at the stream's first event (or punctuation)
// when that shows its timestamps are unit-less integers, which the
// query's WITHIN cannot measure: it sets ls.err and ends the events.
func (ls *liveSource) checkUnit(events iter.Seq[*event.Event]) iter.Seq[*event.Event] {
	return func(yield func(*event.Event) bool) {
		checked := false
		for e := range events {
			if !checked {
				checked = true
				if ls.live.Unit() == 0 {
					what := "its first event, seq " + strconv.FormatInt(e.Seq, 10) + ","
					if e.IsTick() {
						what = "its first punctuation"
					}
					ls.err = fmt.Errorf("stream %s has unit-less integer timestamps (%s has ts %d), which WITHIN %s cannot measure: "+
						"load it WITH (time_unit = 'ms') (or the unit its integers count), or give it RFC 3339 timestamps, or write WITHIN %s (ticks)",
						ls.live.Name(), what, e.TS, ls.unit, ls.unit.Raw)
					return
				}
			}
			if !yield(e) {
				return
			}
		}
	}
}

// register prepares a live stream's schema for a query, so that it
// compiles before the events it reads have appeared: it adds the query's
// type names (their ids are then fixed), and declares each attribute the
// query reads on its component's types when none of them has it yet. It
// returns what the stream has not seen, for a note: a misspelled name
// there cannot be caught, it only never matches (or reads as absent).
func (s *Session) register(sc *event.Schema, q *ast.Query) (unseen []string) {
	names := s.c.Names(q)
	seen := typeNames(sc) // before the query's own are added
	for _, t := range names.Types {
		if _, ok := sc.TypeID(t); !ok {
			sc.AddType(t)
			text := "type " + t
			if near := ast.DidYouMean(t, seen); near != "" {
				text += " (" + strings.TrimPrefix(near, "; ") + ")"
			}
			unseen = append(unseen, text)
		}
	}
	for _, u := range names.Attrs {
		slot := sc.AddAttr(u.Attr)
		if slices.ContainsFunc(u.Types, func(t string) bool { id, _ := sc.TypeID(t); return sc.Types[id].Has(slot) }) {
			continue
		}
		for _, t := range u.Types {
			id, _ := sc.TypeID(t)
			sc.Declare(id, slot)
		}
		if !slices.Contains(unseen, "attribute "+u.Attr) {
			unseen = append(unseen, "attribute "+u.Attr)
		}
	}
	return unseen
}

// Wait starts the live streams a script's queries read (a stream no query
// reads is not read) and returns when every live query has ended. When ctx
// is cancelled first (SIGINT) it stops them, each writing the matches it
// has completed, and returns ctx's error. It ends with each stream's
// summary, and returns ErrFailed if a query failed or a stream stopped at
// an error.
func (s *Session) Wait(ctx context.Context) error {
	started := map[*source.Live]bool{}
	for _, q := range s.queries {
		if !started[q.live] {
			q.live.Start()
			started[q.live] = true
		}
	}
	var err error
	for _, q := range s.queries {
		select {
		case <-q.done:
			continue
		case <-ctx.Done():
			err = ctx.Err()
		}
		s.stopAll(started)
		break
	}
	for _, name := range s.cat.order {
		e := s.cat.entries[name]
		if e.kind != Live || !started[e.live] {
			continue
		}
		if !s.interactive {
			s.streamSummary(e.live)
		}
		select {
		case <-e.live.Done():
			if e.live.Err() != nil && err == nil {
				err = ErrFailed
			}
		default:
		}
	}
	for _, q := range s.queries {
		if q.State() == Failed && err == nil {
			err = ErrFailed
		}
	}
	return err
}

// stopAll stops the live queries at a signal. A stream whose reading
// stops releases the events its slack holds, and its queries read them
// before they stop; the queries of the others (standard input, derived
// and group streams) stop at once, in the order they started, so that a
// derived stream's producers have finished before its consumers stop.
func (s *Session) stopAll(started map[*source.Live]bool) {
	closed := map[*source.Live]bool{}
	for _, name := range s.cat.order {
		e := s.cat.entries[name]
		if e.kind == Live && started[e.live] && e.derived == nil && s.groups[e.live] == nil && e.live.Stops() {
			e.live.Close()
			closed[e.live] = true
		}
	}
	for _, q := range s.queries {
		if closed[q.live] {
			<-q.done
		} else {
			q.stop()
		}
	}
}

func (s *Session) stopQuery(src *ast.Source, st *ast.StopQuery) error {
	if st.ID < 1 || st.ID > len(s.queries) {
		return errAt(src, st.Span.Start, "no query %d (SHOW QUERIES lists them)", st.ID)
	}
	q := s.queries[st.ID-1]
	if state := q.State(); state != Running {
		return errAt(src, st.Span.Start, "query %d has %s", st.ID, state)
	}
	q.stop()
	return nil
}

func (s *Session) showQueries() {
	var rows [][]event.Value
	names := []string{"id", "stream", "state", "matches", "events", "query"}
	infos := s.Queries()
	grouped := slices.ContainsFunc(infos, func(q QueryInfo) bool { return q.Group != "" })
	if grouped {
		names = append(names, "group") // only then: a session without groups lists what it did
	}
	for _, q := range infos {
		row := []event.Value{
			event.IntValue(int64(q.ID)),
			event.StringValue(q.Stream),
			event.StringValue(q.State.String()),
			event.IntValue(q.Matches),
			event.IntValue(q.Events),
			event.StringValue(q.Text),
		}
		if grouped {
			row = append(row, event.StringValue(q.Group))
		}
		rows = append(rows, row)
	}
	s.listing(names, rows)
}
