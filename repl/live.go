package repl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/source"
)

// A query on a live stream runs in the background: the statement starts it
// as query n and returns, its matches are written as they complete (flushed
// whenever the query waits for input), and it ends with its stream, at
// STOP QUERY n, or when Wait is cancelled. In a script the streams start
// reading once the script has run (Wait), so that every query of the
// script sees the whole stream; in the shell a stream starts with its
// first query.

// liveQuery is one query started on a live stream.
type liveQuery struct {
	id      int
	stream  string
	text    string
	cancel  context.CancelFunc
	done    chan struct{}
	matches atomic.Int64
	state   atomic.Value // string: running, ended, ended at the limit, stopped, failed
}

// terminal serializes the writes of the session and of its background
// queries to stdout and stderr. Background queries write whole lines (see
// lineSink); the session's own results are written as its buffer fills.
type terminal struct {
	mu       sync.Mutex
	out, err io.Writer
}

// lockedWriter writes to the terminal's stdout or stderr under its lock.
type lockedWriter struct {
	t      *terminal
	stderr bool
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.t.mu.Lock()
	defer w.t.mu.Unlock()
	if w.stderr {
		return w.t.err.Write(p)
	}
	return w.t.out.Write(p)
}

// lineSink passes a background query's output to the terminal in whole
// lines, so that two queries' lines never mix; each line gets prefix (the
// shell's "[n] "). A partial line waits for its end.
type lineSink struct {
	t      *terminal
	prefix []byte
	tail   []byte // a partial line
	buf    []byte
}

func (s *lineSink) Write(p []byte) (int, error) {
	end := bytes.LastIndexByte(p, '\n') + 1
	if end == 0 {
		s.tail = append(s.tail, p...)
		return len(p), nil
	}
	head, lines := s.tail, p[:end]
	if len(s.prefix) > 0 {
		b := s.buf[:0]
		for _, part := range [][]byte{s.tail, lines} {
			for len(part) > 0 {
				if len(b) == 0 || b[len(b)-1] == '\n' {
					b = append(b, s.prefix...)
				}
				nl := bytes.IndexByte(part, '\n') + 1
				if nl == 0 {
					nl = len(part)
				}
				b = append(b, part[:nl]...)
				part = part[nl:]
			}
		}
		s.buf, head, lines = b, nil, b
	}
	s.t.mu.Lock()
	var err error
	if len(head) > 0 {
		_, err = s.t.out.Write(head)
	}
	if err == nil {
		_, err = s.t.out.Write(lines)
	}
	s.t.mu.Unlock()
	s.tail = append(s.tail[:0], p[end:]...)
	return len(p), err
}

// close writes a last line that has no line break.
func (s *lineSink) close() {
	if len(s.tail) > 0 {
		s.Write([]byte{'\n'})
	}
}

// addLive registers a live stream under its name; text says what it is.
func (s *Session) addLive(l *source.Live, text string) {
	s.lives[l.Name()] = l
	st := &event.Stream{Name: l.Name(), Source: l.Source(), Live: true}
	text += " (live: queries on it run in the background as events arrive)"
	if s.addStream(st) {
		text += ", the current stream"
	}
	s.note("%s", text)
	if s.startLive {
		go func() {
			<-l.Done()
			s.streamSummary(l)
		}()
	}
}

// bgNote writes a message from a background goroutine, which must not
// touch the session's buffered output.
func (s *Session) bgNote(format string, args ...any) {
	fmt.Fprintf(s.errw, format+"\n", args...)
}

// streamSummary says how much of a live stream was read, used and
// rejected, and why it ended if it failed.
func (s *Session) streamSummary(l *source.Live) {
	read, used, rejected := l.Counts()
	state := "ended"
	select {
	case <-l.Done():
		if l.Err() != nil {
			state = "stopped at an error" // reported when it happened
		}
	default:
		state = "stopped"
	}
	s.bgNote("(stream %s %s: %s read, %s used, %s rejected)", l.Name(), state,
		plural(read, "line", "lines"), plural(used, "event", "events"), plural(rejected, "line", "lines"))
}

// loadLive opens LOAD '-' and LOAD 'path' FOLLOW.
func (s *Session) loadLive(st *ast.Load, opts source.Options) error {
	name := source.DefaultName(st.Path)
	if st.Name != nil {
		name = st.Name.Name
	}
	if err := s.replaceable(name); err != nil {
		return err
	}
	errs := lockedWriter{s.term, true}
	if st.Follow {
		l, err := source.Follow(name, st.Path, st.Format, opts, errs)
		if err != nil {
			return err
		}
		s.addLive(l, "following "+st.Path+" as "+name)
		return nil
	}
	if s.stdin == nil {
		return errors.New("LOAD '-': standard input is not available here (it is the script, or the terminal)")
	}
	l, err := source.LiveReader(name, s.stdin, st.Format, opts, errs)
	if err != nil {
		return err
	}
	s.stdin = nil // it is read once, by this stream
	s.addLive(l, "reading "+name+" from standard input")
	return nil
}

func (s *Session) listen(src *ast.Source, st *ast.Listen) error {
	opts, err := loadOptions(src, st.Options)
	if err != nil {
		return err
	}
	name := "listen"
	if st.Name != nil {
		name = st.Name.Name
	}
	if err := s.replaceable(name); err != nil {
		return err
	}
	l, err := source.Listen(name, st.Addr, st.Format, opts, lockedWriter{s.term, true})
	if err != nil {
		return err
	}
	s.addLive(l, "listening on "+l.Source()+" as "+name)
	return nil
}

// replaceable refuses to replace a live stream that queries still read.
func (s *Session) replaceable(name string) error {
	for _, q := range s.queries {
		if q.stream == name && q.state.Load() == "running" {
			return fmt.Errorf("stream %s has running queries (STOP QUERY %d first)", name, q.id)
		}
	}
	if l, ok := s.lives[name]; ok {
		l.Close()
		delete(s.lives, name)
	}
	return nil
}

// liveQuery compiles a query on a live stream and starts it.
func (s *Session) liveQuery(src *ast.Source, q *ast.Query, l *source.Live) error {
	if q.Analyze {
		return errAt(src, q.Span.Start, "EXPLAIN ANALYZE needs a loaded stream; %s is live", l.Name())
	}
	var unseen []string
	l.Update(func(sc *event.Schema) { unseen = register(sc, q) })
	stream := l.Snapshot()
	cq, err := sase.CompileAST(q, src, stream, sase.WithEngine(s.set.engine))
	if err != nil {
		return err
	}
	if q.Explain {
		s.out.WriteString(cq.Explain())
		return nil
	}
	if !cq.Bounded() {
		// Its state would grow with the stream.
		return errAt(src, q.Span.Start, "engine %s does not bound its state by the window, which a live stream needs: SET engine = auto", s.set.engine.Name)
	}
	sub, err := l.Subscribe()
	if err != nil {
		return err
	}
	id := len(s.queries) + 1
	ctx, cancel := context.WithCancel(context.Background())
	lq := &liveQuery{id: id, stream: l.Name(), text: strings.TrimSpace(q.String()), cancel: cancel, done: make(chan struct{})}
	lq.state.Store("running")
	s.queries = append(s.queries, lq)
	text := fmt.Sprintf("query %d started on %s", id, l.Name())
	if len(unseen) > 0 {
		text += " (not seen yet: " + strings.Join(unseen, ", ") + ")"
	}
	s.note("%s", text)

	sink := &lineSink{t: s.term}
	if s.startLive {
		sink.prefix = []byte("[" + strconv.Itoa(id) + "] ")
	}
	bw := bufio.NewWriterSize(sink, 32<<10)
	w := newResultWriter(s.set.format, bw, cq.Columns(), stream.Schema, l.Update, s.paint.header)
	limit := s.set.limit
	emit := func(row []sase.Cell) bool {
		if ctx.Err() != nil {
			// Stopped: the run's end would release matches whose window
			// is still open, which are not complete.
			return false
		}
		w.row(row)
		n := lq.matches.Add(1)
		return limit == 0 || n < limit
	}
	idle := func() {
		w.sync()
		bw.Flush()
	}
	go func() {
		defer close(lq.done)
		defer cancel()
		stats, err := cq.Run(ctx, sub.Events(ctx, idle), emit)
		sub.Close()
		w.finish()
		bw.Flush()
		sink.close()
		state := "ended"
		switch {
		case ctx.Err() != nil: // STOP QUERY or Wait's cancellation, not the end of the stream
			state, err = "stopped", nil
		case err != nil:
			state = "failed"
		case limit > 0 && lq.matches.Load() >= limit:
			state = "ended at the limit"
		}
		lq.state.Store(state)
		if err != nil {
			s.bgNote("%s query %d: %v", s.paint.err.Sprint("ERROR:"), id, err)
		}
		s.bgNote("(query %d %s: %s)", id, state, s.counts(lq.matches.Load(), stats))
	}()
	if s.startLive {
		l.Start()
	}
	return nil
}

// register prepares a live stream's schema for a query, so that it
// compiles before the events it reads have appeared: it adds the query's
// type names (their ids are then fixed), and declares each attribute the
// query reads on its component's types when none of them has it yet. It
// returns what the stream has not seen, for a note: a misspelled name
// there cannot be caught, it only never matches (or reads as absent).
func register(sc *event.Schema, q *ast.Query) (unseen []string) {
	types := map[string][]string{} // variable -> its type names
	var all []string
	for _, c := range q.Pattern.Components {
		for _, t := range c.Types {
			if _, ok := sc.TypeID(t.Name); !ok {
				sc.AddType(t.Name)
				unseen = append(unseen, "type "+t.Name)
			}
			types[c.VarName()] = append(types[c.VarName()], t.Name)
			all = append(all, t.Name)
		}
	}
	declare := func(attr string, on []string) {
		if attr == "ts" || attr == "timestamp" || attr == "seq" {
			return // built-ins
		}
		slot := sc.AddAttr(attr)
		for _, t := range on {
			if id, _ := sc.TypeID(t); sc.Types[id].Has(slot) {
				return
			}
		}
		for _, t := range on {
			id, _ := sc.TypeID(t)
			sc.Declare(id, slot)
		}
		if !slices.Contains(unseen, "attribute "+attr) {
			unseen = append(unseen, "attribute "+attr)
		}
	}
	visit := func(e ast.Expr) bool {
		switch x := e.(type) {
		case *ast.AttrRef:
			declare(x.Attr.Name, types[x.Var.Name])
		case *ast.ListRef:
			if x.Attr != nil {
				declare(x.Attr.Name, types[x.Var.Name])
			}
		case *ast.Equivalence:
			for _, a := range x.Attrs {
				declare(a.Attr.Name, all)
			}
		}
		return true
	}
	ast.Inspect(q.Where, visit)
	if q.Return != nil {
		for _, it := range q.Return.Items {
			ast.Inspect(it.Expr, visit)
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
	started := map[string]bool{}
	for _, q := range s.queries {
		if l := s.lives[q.stream]; l != nil && !started[q.stream] {
			l.Start()
			started[q.stream] = true
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
		for _, q := range s.queries {
			q.cancel()
			<-q.done
		}
		break
	}
	for _, name := range s.order {
		if !started[name] {
			continue
		}
		l := s.lives[name]
		if !s.startLive {
			s.streamSummary(l)
		}
		select {
		case <-l.Done():
			if l.Err() != nil && err == nil {
				err = ErrFailed
			}
		default:
		}
	}
	for _, q := range s.queries {
		if q.state.Load() == "failed" && err == nil {
			err = ErrFailed
		}
	}
	return err
}

func (s *Session) stopQuery(src *ast.Source, st *ast.StopQuery) error {
	if st.ID < 1 || st.ID > len(s.queries) {
		return errAt(src, st.Span.Start, "no query %d (SHOW QUERIES lists them)", st.ID)
	}
	q := s.queries[st.ID-1]
	if q.state.Load() != "running" {
		return errAt(src, st.Span.Start, "query %d has %s", st.ID, q.state.Load())
	}
	q.cancel()
	<-q.done // it has written its matches and summary
	return nil
}

func (s *Session) showQueries() {
	var rows [][]event.Value
	for _, q := range s.queries {
		rows = append(rows, []event.Value{
			event.IntValue(int64(q.id)),
			event.StringValue(q.stream),
			event.StringValue(q.state.Load().(string)),
			event.IntValue(q.matches.Load()),
			event.StringValue(q.text),
		})
	}
	s.listing([]string{"id", "stream", "state", "matches", "query"}, rows)
}
