// Package session runs sase's statements: it holds one user's streams (a
// catalogue of loaded and live streams), settings and the queries running
// in the background on live streams, and writes results and messages to
// the io.Writers it is given. It has no terminal of its own: the shell
// (package repl), `sase -f` and tests drive it alike.
//
// Statements are parsed, and queries compiled and run, through package
// query's interfaces, by the compiler a program links in (package
// compiler registers itself; without it each statement fails with
// query.ErrNoCompiler); results are written by package output.
package session

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/source"
)

// ErrFailed is what Exec returns when a statement failed. The statement's
// error has already been written to stderr.
var ErrFailed = errors.New("a statement failed")

// Session is one user's state: named streams, the current stream, settings
// and where output goes. It is not safe for concurrent use; the queries it
// starts on live streams run in the background and write through the same
// writers, a whole line at a time.
type Session struct {
	c      query.Compiler // the compiler linked in (query.Registered)
	noC    error          // why there is none: each statement fails with it
	outs   *outputs
	res    *results    // where results go: stdout, or \o's file
	rules  *rules      // a script's RULE statements waiting to run as one rulebook (rules.go)
	grules *groupRules // a script's RULE statements on a group's stream, waiting to start as one rulebook (rules_group.go)
	stdout io.Writer
	out    *bufio.Writer                                   // results, to res; flushed after each statement
	errw   io.Writer                                       // messages, summaries, errors
	bgRes  *results                                        // live queries' results when not res (WithBackground)
	bgErrw io.Writer                                       // background messages: live queries' and live sources'
	onErr  func(error)                                     // OnError's
	delay  func(id int, stream string) func(time.Duration) // WithMatchDelay's; nil: none
	root   *string                                         // LimitFiles' folder; nil: any file
	// startLive starts a live stream with its first query, as the shell
	// does (StartLive).
	startLive bool
	stdin     io.Reader // what LOAD '-' reads; nil if there is none
	style     Style
	width     func() int // the terminal's width for tables; nil: none
	prog      *progress  // nil unless TrackProgress

	cat  catalogue
	set  Settings
	quit bool

	queries []*liveQuery                 // started on live streams; query n is queries[n-1]
	groups  map[*source.Live]groupSource // the LISTENs a group shares (remote.go)
	orders  map[*source.Live]*lineOrder  // the order of the lines of each live stream's queries (order.go)
	books   map[*source.Live]*liveBook   // each live stream's running rulebook (rules_live.go)
	// interactive starts a live stream with its first query and prefixes
	// each query's lines with "[n] " (the shell); otherwise streams start
	// at Wait and output is the bare results (a script).
	interactive bool
	files       []script // the script files running, outermost first
	stmt        stmtBase // where the statement running is in its script
	bookFailed  bool     // a rule of the rulebook run before the statement failed: the script fails, as with the rule alone
}

// Style dresses text for a terminal (colour); a nil function leaves the
// text plain, as the zero Style does.
type Style struct {
	Error  func(string) string // the "ERROR:" before a message
	Header func(string) string // a table's column names
}

func (st Style) errorPrefix() string {
	if st.Error == nil {
		return "ERROR:"
	}
	return st.Error("ERROR:")
}

// Option configures a Session.
type Option func(*Session)

// WithStdin gives LOAD '-' a reader. Without it LOAD '-' is an error (in the
// shell and when the script itself comes from standard input).
func WithStdin(r io.Reader) Option { return func(s *Session) { s.stdin = r } }

// WithStyle colours errors and table headers.
func WithStyle(st Style) Option { return func(s *Session) { s.style = st } }

// WithSettings starts the session with set instead of DefaultSettings.
func WithSettings(set Settings) Option { return func(s *Session) { s.set = set } }

// WithBuiltinStream preloads a stream and makes it current until the user
// loads or generates one of their own.
func WithBuiltinStream(st *event.Stream) Option {
	return func(s *Session) {
		s.cat.add(&entry{name: st.Name, kind: Loaded, stream: st})
		s.cat.builtin = true
	}
}

// WithWidth fits tables to a terminal: width returns its current width
// in columns (0: do not fit), asked at the start of each query.
func WithWidth(width func() int) Option { return func(s *Session) { s.width = width } }

// Interactive makes the session a shell's: a live stream starts reading
// with its first query, and each background query's lines are prefixed
// with "[n] ". Without it (a script) the streams start at Wait and the
// output is the bare results.
func Interactive() Option { return func(s *Session) { s.interactive = true } }

// WithBackground sends what runs in the background (live queries'
// matches, their summaries and errors, a live source's bad lines) to
// stdout and stderr instead of the session's: a server answers each
// request with its statements' own output (package serve).
func WithBackground(stdout, stderr io.Writer) Option {
	return func(s *Session) {
		s.bgRes, s.bgErrw = (&results{w: stdout}).hold(), stderr
	}
}

// OnError calls report with each error the session reports (after
// writing it to stderr), so that a caller can see its position.
func OnError(report func(error)) Option { return func(s *Session) { s.onErr = report } }

// WithMatchDelay times the matches of the live queries started on the
// session's own streams: at the start of each such query it asks
// observer for the query's observe, then calls observe, on the query's
// goroutine, at each match the query writes with the time since the
// query read the latest event it had read by then (the event that
// completed or released the match). Without it no clock is read.
func WithMatchDelay(observer func(id int, stream string) func(time.Duration)) Option {
	return func(s *Session) { s.delay = observer }
}

// New returns a session writing results to stdout and messages to stderr.
func New(stdout, stderr io.Writer, opts ...Option) *Session {
	outs := &outputs{}
	res := (&results{w: stdout}).hold()
	s := &Session{
		outs:   outs,
		res:    res,
		stdout: stdout,
		out:    bufio.NewWriterSize(lockedWriter{outs, stdout}, 64<<10),
		errw:   lockedWriter{outs, stderr},
		cat:    catalogue{entries: map[string]*entry{}},
		set:    DefaultSettings(),
	}
	s.c, s.noC = query.Registered()
	for _, o := range opts {
		o(s)
	}
	if s.bgErrw == nil {
		s.bgErrw = s.errw
	} else {
		s.bgErrw = lockedWriter{outs, s.bgErrw}
	}
	return s
}

// Set changes a setting as SET does (keys: engine, format, limit, timing,
// expanded).
func (s *Session) Set(key, value string) error { return s.set.Set(key, value) }

// Current returns the current stream's name, "" when none is loaded.
func (s *Session) Current() string { return s.cat.current }

// Quit reports whether \q was given.
func (s *Session) Quit() bool { return s.quit }

// Exec runs the statements and backslash commands of src in order, but
// for a query that reads a derived stream a later statement of src makes:
// it waits until those producers have run (dependencies). A statement that
// fails is reported on stderr (with its position) and the next one runs;
// Exec then returns ErrFailed. Once ctx is cancelled (Ctrl-C during a
// query) the rest of src is skipped, and a note says from which line.
func (s *Session) Exec(ctx context.Context, src *ast.Source) error {
	if s.noC != nil {
		return s.noC
	}
	pieces := s.c.Split(src.Text)
	writers := s.producers(src, pieces)
	ran := make([]bool, len(pieces))
	failed := false
	run := func(i int) {
		ran[i] = true
		p, ok := pieces[i], true
		switch p.Kind {
		case query.Command:
			ok = s.command(ctx, src.Text[p.Start:p.End])
		case query.Statement, query.Unfinished:
			ok = s.statement(ctx, src, p.Start, writers.parsed[i])
		}
		failed = failed || !ok || s.bookFailed
		s.bookFailed = false
	}
	var waiting []waiter // in the order written
	ready := func(w waiter) bool {
		return !slices.ContainsFunc(w.after, func(j int) bool { return !ran[j] })
	}
	for i := range pieces {
		if s.quit || ctx.Err() != nil {
			break
		}
		if after := s.waitsFor(i, writers); len(after) > 0 {
			waiting = append(waiting, waiter{piece: i, after: after, set: s.set})
			continue
		}
		run(i)
		// The queries it was the last producer for, and theirs in turn.
		for k := 0; k < len(waiting) && !s.quit && ctx.Err() == nil; {
			if w := waiting[k]; ready(w) {
				waiting = slices.Delete(waiting, k, k+1)
				s.deferred(w, run)
				k = 0
				continue
			}
			k++
		}
	}
	// What still waits is in a cycle: in order, each reports its error.
	for _, w := range waiting {
		if s.quit || ctx.Err() != nil {
			break
		}
		s.deferred(w, run)
	}
	s.startGroupRules()
	if err := s.runRules(ctx); err != nil { // the script's last rules
		s.fail(err)
		failed = true
	}
	if ctx.Err() != nil {
		s.reportSkipped(src, pieces, ran)
	}
	if failed {
		return ErrFailed
	}
	return nil
}

// reportSkipped says which of a cancelled script's statements did not run, so
// that Ctrl-C between statements does not pass for the script's end.
func (s *Session) reportSkipped(src *ast.Source, pieces []query.Piece, ran []bool) {
	n, first := 0, -1
	for i, p := range pieces {
		if !ran[i] && p.Kind != query.OpenComment {
			if n++; first < 0 {
				first = p.Start
			}
		}
	}
	if n > 0 {
		line, _ := src.Position(first)
		s.note("(interrupted: %s of %s not run, from line %d)", plural(int64(n), "statement", "statements"), src.Name, line)
	}
}

// waiter is a query of a script that waits for the producers of the
// derived stream it reads, with the settings of its place in the script.
type waiter struct {
	piece int
	after []int // the pieces that write its stream
	set   Settings
}

// deferred runs a query that waited, under the settings of its place.
func (s *Session) deferred(w waiter, run func(int)) {
	set := s.set
	s.set = w.set
	run(w.piece)
	s.set = set
}

// producers parses a script's statements ahead, each alone, quietly (each
// reports its errors when it runs, from this parse: a script of 10,000
// rules parses once), for what Exec orders by: by piece, the stream each
// query reads with FROM, and the pieces whose INTO writes each stream.
func (s *Session) producers(src *ast.Source, pieces []query.Piece) scriptDeps {
	d := scriptDeps{from: make([]string, len(pieces)), into: map[string][]int{}, parsed: make([]parsed, len(pieces))}
	for i, p := range pieces {
		if p.Kind != query.Statement && p.Kind != query.Unfinished {
			continue
		}
		sub := &ast.Source{Name: src.Name, Text: src.Text[p.Start:p.End]}
		stmts, err := s.c.Parse(sub)
		d.parsed[i] = parsed{sub: sub, stmts: stmts, err: err}
		if err != nil {
			continue
		}
		for _, st := range stmts {
			if q, ok := st.(*ast.Query); ok {
				if q.From != nil {
					d.from[i] = q.From.Name
				}
				if q.Into != nil {
					d.into[q.Into.Name] = append(d.into[q.Into.Name], i)
				}
			}
		}
	}
	return d
}

// scriptDeps is what a script's queries read and write (producers).
type scriptDeps struct {
	from   []string         // by piece: the stream its query names in FROM, or ""
	into   map[string][]int // by stream: the pieces that write it with INTO
	parsed []parsed         // by piece: its statements
}

// parsed is a piece of a script parsed alone (sub is its text).
type parsed struct {
	sub   *ast.Source
	stmts []ast.Stmt
	err   error
}

// waitsFor returns the pieces piece i must wait for: when its query reads
// a stream that does not exist yet and later pieces write with INTO, all
// of those (docs/LANGUAGE.md, Decisions: dependency order).
func (s *Session) waitsFor(i int, d scriptDeps) []int {
	name := d.from[i]
	if name == "" || s.cat.entries[name] != nil {
		return nil
	}
	var after []int
	for _, j := range d.into[name] {
		if j > i {
			after = append(after, j)
		}
	}
	return after
}

// statement runs p, the piece of src at offset start parsed alone,
// reporting any error, even a panic: one broken statement must not end
// the session.
func (s *Session) statement(ctx context.Context, src *ast.Source, start int, p parsed) (ok bool) {
	sub, err := p.sub, p.err
	defer func() {
		if r := recover(); r != nil {
			s.fail(fmt.Errorf("internal error (a bug, please report): %v\nstatement: %s", r, strings.TrimSpace(sub.Text)))
			ok = false
		}
	}()
	// Parsed alone: error positions move back into src.
	s.stmt = stmtBase{sub: sub, src: src, start: start}
	for _, st := range p.stmts {
		if err != nil {
			break
		}
		err = s.run(ctx, sub, st)
		s.out.Flush()
	}
	if err != nil {
		rebase(err, sub, src, start)
		s.fail(err)
		return false
	}
	return true
}

// rebase moves the positions of err that are in sub, which is src.Text
// from offset start on, into src.
func rebase(err error, sub, src *ast.Source, start int) {
	move := func(e *ast.Error) {
		if e.Src == sub {
			e.Src, e.Offset = src, e.Offset+start
		}
	}
	var list ast.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			move(e)
		}
	}
	var one *ast.Error
	if errors.As(err, &one) {
		move(one)
	}
}

// run executes one parsed statement.
func (s *Session) run(ctx context.Context, src *ast.Source, st ast.Stmt) error {
	q, isQuery := st.(*ast.Query)
	if !isQuery || q.Rule == nil {
		s.startGroupRules() // the rules held for a group's stream start before it
	}
	if !isQuery || q.Rule == nil || s.rules.endsBefore(q, s.cat.current) {
		if err := s.runRules(ctx); err != nil { // the rules before it run first
			s.fail(err)
			s.bookFailed = true
		}
	}
	switch st := st.(type) {
	case *ast.Query:
		return s.query(ctx, src, st)
	case *ast.Load:
		return s.creating(s.load(ctx, src, st))
	case *ast.Generate:
		return s.creating(s.generate(ctx, src, st))
	case *ast.Use:
		return s.use(src, st)
	case *ast.Listen:
		return s.creating(s.listen(src, st))
	case *ast.ShowStreams:
		s.showStreams()
		return nil
	case *ast.ShowQueries:
		s.showQueries()
		return nil
	case *ast.ShowSettings:
		s.showSettings()
		return nil
	case *ast.StopQuery:
		return s.stopQuery(src, st)
	case *ast.ShowTypes:
		return s.showTypes(src, st)
	case *ast.Describe:
		return s.describe(src, st)
	case *ast.Set:
		return s.setStmt(src, st)
	case *ast.MatchRecognize:
		return s.matchRecognize(ctx, src, st)
	}
	panic(fmt.Sprintf("statement %T has no executor", st))
}

// fail reports an error on stderr.
func (s *Session) fail(err error) {
	s.out.Flush() // results so far come before the error
	fmt.Fprintf(s.errw, "%s %v\n", s.style.errorPrefix(), err)
	if s.onErr != nil {
		s.onErr(err)
	}
}

// note writes a message to stderr.
func (s *Session) note(format string, args ...any) {
	s.out.Flush()
	fmt.Fprintf(s.errw, format+"\n", args...)
}

// bgNote writes a message from a background goroutine, which must not
// touch the session's buffered output.
func (s *Session) bgNote(format string, args ...any) {
	fmt.Fprintf(s.bgErrw, format+"\n", args...)
}

// errAt makes an error at a position of src, rendered with a caret.
func errAt(src *ast.Source, offset int, format string, args ...any) error {
	return &ast.Error{Src: src, Offset: offset, Msg: fmt.Sprintf(format, args...)}
}
