// Package serve runs a session as a service (sase serve): it runs scripts'
// statements, then answers an HTTP API (run a statement, list streams and
// queries, stop, EXPLAIN and follow a query), /healthz, /readyz and
// Prometheus /metrics. The API is in docs/SERVE.md.
//
// The session is not safe for concurrent use: the server runs one
// statement at a time and reads its lists under the same lock. Live
// queries run in the background and write their matches to the log (the
// process's standard output), and to each follower.
package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sase-cep/sase/ast"
	_ "github.com/sase-cep/sase/compiler" // the sessions' compiler (query.Registered)
	"github.com/sase-cep/sase/session"
)

// Config is a server's.
type Config struct {
	// Listen is the address to serve on, 127.0.0.1:8080 by default.
	Listen string
	// Token, when set, must come with every request as
	// "Authorization: Bearer TOKEN". A Listen that is not loopback needs
	// one.
	Token string
	// Data is the folder the API's statements may read and write files
	// in; "" (the default) allows none.
	Data string
	// Log is where live queries' matches go, Errors their summaries and
	// the server's messages.
	Log, Errors io.Writer
	// FollowBuffer is how many matches a follower may fall behind before
	// it is cut off (DefaultFollowBuffer when 0).
	FollowBuffer int
	// Session configures the session (settings, a preloaded stream).
	Session []session.Option
}

const (
	// DefaultListen is loopback: nothing outside the machine reaches it.
	DefaultListen = "127.0.0.1:8080"
	// DefaultFollowBuffer is a follower's bound, in matches.
	DefaultFollowBuffer = 1024
	// maxBody bounds a request's body, and so a statement's length.
	maxBody = 1 << 20
	// maxAnswer bounds what a request's statements write, their results
	// and their messages each: the answer is held in memory.
	maxAnswer = 32 << 20
)

// Server is a session behind an HTTP API.
type Server struct {
	cfg     Config
	mu      sync.Mutex // the session's
	s       *session.Session
	out     capture       // the running statement's results
	msgs    capture       // and messages
	errs    []error       // and errors (OnError), while it runs
	ready   atomic.Bool   // the scripts ran
	closed  chan struct{} // closed by Close: followers end
	once    sync.Once     // closes closed
	stopped sync.Once     // Close's
	reg     *prometheus.Registry
	delays  []*delays      // the live queries' match delays, under mu
	mux     *http.ServeMux // behind the token
	public  *http.ServeMux // the dashboard's static files
	answer  int            // maxAnswer; a test's server takes less
}

// capture is where the session writes a statement's own output: the
// request's buffer while it runs, else nowhere. Only the goroutine that
// runs a statement, under the server's lock, writes to it.
type capture struct{ w io.Writer }

func (c *capture) Write(p []byte) (int, error) {
	if c.w == nil {
		return len(p), nil
	}
	return c.w.Write(p)
}

// New checks cfg and makes a server; the API answers 503 until Ready.
func New(cfg Config) (*Server, error) {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.FollowBuffer <= 0 {
		cfg.FollowBuffer = DefaultFollowBuffer
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Errors == nil {
		cfg.Errors = io.Discard
	}
	loop, err := loopback(cfg.Listen)
	if err != nil {
		return nil, err
	}
	if !loop && cfg.Token == "" {
		return nil, fmt.Errorf("--listen %s is not a loopback address: give --token (or SASE_TOKEN), which every request must then send as Authorization: Bearer", cfg.Listen)
	}
	sv := &Server{cfg: cfg, closed: make(chan struct{}), mux: http.NewServeMux(), public: http.NewServeMux(), answer: maxAnswer}
	opts := append([]session.Option{
		session.WithBackground(cfg.Log, cfg.Errors),
		session.OnError(func(err error) { sv.errs = append(sv.errs, err) }),
		// Called as a statement starts a query: under mu.
		session.WithMatchDelay(func(id int, stream string) func(time.Duration) {
			d := &delays{query: strconv.Itoa(id), stream: stream}
			sv.delays = append(sv.delays, d)
			return d.observe
		}),
	}, cfg.Session...)
	sv.s = session.New(&sv.out, &sv.msgs, opts...)
	sv.reg = sv.registry()
	sv.routes()
	sv.dashboard()
	return sv, nil
}

// loopback reports whether addr (host:port) listens on loopback only.
func loopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--listen %s: %w", addr, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// RunScripts runs each script file's statements in order, as sase -f
// does (with the whole file system), then confines the API's statements
// to Config.Data, starts the live streams and makes the server ready. A
// statement that fails is reported on Config.Errors and fails it.
func (sv *Server) RunScripts(ctx context.Context, files []string) error {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.out.w, sv.msgs.w = sv.cfg.Log, sv.cfg.Errors
	defer func() { sv.out.w, sv.msgs.w, sv.errs = nil, nil, nil }()
	for _, f := range files {
		if err := sv.s.ExecFile(ctx, f); err != nil {
			if errors.Is(err, session.ErrFailed) {
				return fmt.Errorf("%s: a statement failed", f)
			}
			return err
		}
	}
	sv.s.LimitFiles(sv.cfg.Data)
	sv.s.StartLive()
	sv.ready.Store(true)
	return nil
}

// Close ends the followers and stops the live queries, each writing its
// matches and summary, once.
func (sv *Server) Close() {
	sv.endFollowers()
	sv.stopped.Do(func() {
		sv.mu.Lock()
		defer sv.mu.Unlock()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		sv.s.Wait(ctx) // cancelled: it stops them all
	})
}

// endFollowers ends the followers' streams, with event end.
func (sv *Server) endFollowers() { sv.once.Do(func() { close(sv.closed) }) }

// Handler is the server's HTTP handler: the dashboard's files, and the
// other routes behind the token check.
func (sv *Server) Handler() http.Handler {
	want := []byte("Bearer " + sv.cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := sv.public.Handler(r); pattern != "" {
			sv.public.ServeHTTP(w, r)
			return
		}
		if sv.cfg.Token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sase"`)
			writeError(w, http.StatusUnauthorized, "this server needs Authorization: Bearer TOKEN (its --token)")
			return
		}
		sv.mux.ServeHTTP(w, r)
	})
}

// exec runs text as the API's statements, returning their results,
// messages and errors; failed reports whether one failed.
func (sv *Server) exec(ctx context.Context, text string) (out, msgs string, errs []apiError, failed bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	o, m := &answer{max: sv.answer, full: cancel}, &answer{max: sv.answer, full: cancel}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.out.w, sv.msgs.w = o, m
	defer func() { sv.out.w, sv.msgs.w, sv.errs = nil, nil, nil }()
	err := sv.s.Exec(ctx, &ast.Source{Name: apiSource, Text: text})
	if o.cut || m.cut {
		full := answerFull(sv.answer)
		errs = append(errs, apiError{Message: full, Text: full})
	}
	for _, e := range sv.errs {
		errs = append(errs, errorsOf(e)...)
	}
	return o.String(), m.String(), errs, err != nil || o.cut || m.cut
}

// answerFull is the error of an answer cut at max bytes, whole MiB.
func answerFull(max int) string {
	return fmt.Sprintf("an answer holds at most %d MiB of results (and as much of messages): the statements were stopped there; SET limit, or follow a live query's matches", max>>20)
}

// answer is a request's results or messages, up to max bytes. A
// write past it is dropped and calls full, which cancels the request's
// statements: the writer reports no error, because the session's
// buffered output would keep it for every later request.
type answer struct {
	strings.Builder
	max  int
	full func()
	cut  bool
}

func (a *answer) Write(p []byte) (int, error) {
	if a.cut || a.Len()+len(p) > a.max {
		if !a.cut {
			a.cut = true
			a.full()
		}
		return len(p), nil
	}
	return a.Builder.Write(p)
}

// apiSource names the API's statements in error positions.
const apiSource = "<api>"
