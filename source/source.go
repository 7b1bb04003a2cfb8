// Package source delivers event streams: files (CSV with a header row, or
// JSON Lines), standard input, a followed file, TCP producers, and SASE's
// generated stock stream, each typed and ordered by the same rules
// (docs/LANGUAGE.md: Events and streams, Statements).
//
// # Sources
//
// A [Source] decodes its input into events and delivers them in batches
// ([Source.Read]), with the schema they are typed by ([Source.Schema]).
// [Open] opens one by URL:
//
//	path, file:///path  a CSV or JSON Lines file (FORMAT, or the extension);
//	                    with Following, the file and what is appended to it
//	-                   standard input
//	tcp://host:port     a listener fed by the producers that connect
//
// A scheme is found in a registry: a package that adds one (say nats://)
// calls [Register] from its init, and builds its Source on
// [NewLineSource] when its input is newline-delimited events.
//
// # Finite and live
//
// [Source.Live] tells the two kinds apart. A finite source (a file) is read
// to its end and kept: [Collect] makes it an event.Stream, and its first bad
// line fails the read, so nothing is partially loaded (with on_error =
// 'skip' it is reported, counted and skipped instead). A live source
// (standard input, a followed file, a listener) delivers events as they
// arrive and may never end: a consumer reads it once, in the background, and
// shares each batch among its queries ([NewLive]). A bad line is reported,
// counted ([Source.Stats]) and skipped, or with on_error = 'stop' ends the
// stream; the error that stopped a stream is what Read returns
// ([Live.Err]), and it has been reported on the error writer.
//
// # Event time
//
// Every source goes through a reorder stage (reorder.go) between its
// decoder and delivery when it has a slack, sort = true or a wall clock,
// or is live: the stage releases events in stable ts order, decides which
// are late (docs/LANGUAGE.md, Event time), numbers them (seq counts the
// released order) and on a live stream follows each release with a tick
// (event.Tick) at the stream's time, so that matches waiting on a negated
// end or a trailing closure come out on a quiet stream. A line with a ts
// and no type is a punctuation: a live stream's time reaches its ts; a
// loaded stream drops it. A batch LOAD without those options has no
// stage: its decoders number the events as today.
//
// # Lines
//
// A line is at most Options.MaxLine bytes (the max_line option, 256 MB by
// default): a longer one is an error naming the input and the line, in
// every loader and live source. The last line of a file or of standard
// input is whole without its newline, as cat gives it; one that a TCP
// connection's end cuts off is incomplete, and rejected. Invalid UTF-8 in a
// CSV cell or header, as in a JSON string, becomes U+FFFD, one per invalid
// byte (as encoding/json does).
package source

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/sase-cep/sase/event"
)

// Source is a stream's input: a file, standard input, TCP producers, or a
// registered scheme's. It is read once.
type Source interface {
	// URL says where the events come from: a path, "-", or
	// tcp://host:port with the port a listener got.
	URL() string
	// Live reports whether the events arrive over time with no end known
	// in advance (see the package doc).
	Live() bool
	// Read decodes the input and calls emit with each batch of events in
	// stream order (seq 0, 1, ...), never concurrently, until the input
	// ends, ctx is done or emit returns false; it then returns nil. It
	// returns the error that stopped it otherwise: a finite source's
	// first bad line, a live one's under on_error = 'stop', a line over
	// Options.MaxLine, a failed read. A batch and its events are the
	// consumer's to keep.
	Read(ctx context.Context, emit func(batch []*event.Event) bool) error
	// Schema calls f with the schema the events are typed by, under the
	// lock the decoder holds while it adds names: f may read it, or add
	// names (a query registering what it reads before its first event),
	// and must not keep it while Read runs.
	Schema(f func(*event.Schema))
	// Unit is the duration of one timestamp tick (event.Stream.Unit):
	// the time_unit option, or milliseconds once an RFC 3339 timestamp
	// has been read.
	Unit() time.Duration
	// Stats counts what has been read so far.
	Stats() Stats
	// Close stops a live source: Read returns soon (not in the middle of
	// a read of standard input, which cannot be interrupted). Before Read
	// it releases what Open took (a file, a listener).
	Close() error
}

// Stats count a source's lines.
type Stats struct {
	Read     int64 // event lines read: not blank lines, CSV headers nor punctuation
	Used     int64 // events delivered
	Late     int64 // events late (docs/LANGUAGE.md, Event time), not used
	Rejected int64 // lines rejected (each reported, unless rate-limited)
	// Held counts the events a slack holds back, read and not yet used:
	// at the end of a stream that could not be stopped (standard input),
	// those it discards. Read = Used + Late + Rejected + Held.
	Held int64
	// Behind counts the punctuation lines whose ts was below the stream's
	// time, reported and ignored (they are not among the lines read).
	Behind int64
	// The stream's time and the largest ts, when a reorder stage keeps
	// them (a live stream, or one with a slack); HasTime says so.
	Time, MaxTS int64
	HasTime     bool
}

// Config is what Open hands a scheme's Opener.
type Config struct {
	Name    string // the stream's name, for messages; by default a path's DefaultName, or listen for tcp://
	Format  string // csv or jsonl (or a synonym); "" for the scheme's default
	Options Options
	Follow  bool      // a file: read what is appended to it too (live)
	Errors  io.Writer // where a live source reports bad lines; never nil
	Stdin   io.Reader // standard input, for "-"
	Clock   Clock     // the wall clock, for clock = 'wall'
}

// Clock is the wall clock a clock = 'wall' stream follows: Now, and Ticks,
// on which the stream looks at Now again while no event arrives (nil: a
// ticker every wallPoll).
type Clock struct {
	Now   func() time.Time
	Ticks <-chan time.Time
}

// WithClock sets the wall clock (tests inject one).
func WithClock(now func() time.Time, ticks <-chan time.Time) OpenOption {
	return func(c *Config) { c.Clock = Clock{Now: now, Ticks: ticks} }
}

// An OpenOption sets what Open passes on in its Config.
type OpenOption func(*Config)

// WithName names the stream in messages.
func WithName(name string) OpenOption { return func(c *Config) { c.Name = name } }

// WithFormat gives the format (LOAD's FORMAT): csv, jsonl, ndjson or json.
func WithFormat(format string) OpenOption { return func(c *Config) { c.Format = format } }

// WithOptions gives LOAD's or LISTEN's WITH options.
func WithOptions(o Options) OpenOption { return func(c *Config) { c.Options = o } }

// Following makes a file a live source that reads what is appended to it
// (LOAD ... FOLLOW).
func Following() OpenOption { return func(c *Config) { c.Follow = true } }

// WithErrors sets where a live source reports bad lines and notes; by
// default they are discarded.
func WithErrors(w io.Writer) OpenOption { return func(c *Config) { c.Errors = w } }

// WithStdin sets what "-" reads instead of os.Stdin.
func WithStdin(r io.Reader) OpenOption { return func(c *Config) { c.Stdin = r } }

// An Opener opens the source a URL of its scheme names.
type Opener func(ctx context.Context, u *url.URL, c Config) (Source, error)

var (
	schemesMu sync.RWMutex
	schemes   = map[string]Opener{}
)

func init() {
	Register("file", openFileURL)
	Register("tcp", openTCP)
}

// Register makes Open hand URLs of scheme (case-insensitive, without
// "://") to open. It panics if the scheme is registered already, as
// database/sql.Register does: two packages claiming one scheme is a bug.
func Register(scheme string, open Opener) {
	scheme = strings.ToLower(scheme)
	schemesMu.Lock()
	defer schemesMu.Unlock()
	if _, dup := schemes[scheme]; dup || open == nil || scheme == "" {
		panic("source: Register of " + scheme + ":// twice, or without an Opener")
	}
	schemes[scheme] = open
}

// Open opens the source rawURL names: "-", a path, or scheme://... (see
// the package doc). Whatever it cannot open (a missing file, a port in
// use) is its error, so that a statement fails at once.
func Open(ctx context.Context, rawURL string, opts ...OpenOption) (Source, error) {
	c := newConfig(opts...)
	scheme, _, ok := strings.Cut(rawURL, "://")
	if rawURL == "-" || !ok || !isScheme(scheme) {
		if c.Name == "" {
			c.Name = DefaultName(rawURL)
		}
		return timedOpen(openPath(rawURL, c))(c)
	}
	schemesMu.RLock()
	open := schemes[strings.ToLower(scheme)]
	schemesMu.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("unknown source scheme %s:// in %q (known: %s; a path needs none)", scheme, rawURL, knownSchemes())
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err // names the URL
	}
	return timedOpen(open(ctx, u, c))(c)
}

func newConfig(opts ...OpenOption) Config {
	c := Config{Errors: io.Discard, Stdin: os.Stdin, Clock: Clock{Now: time.Now}}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// timedOpen gives what an opener returned its reorder stage (withTime).
func timedOpen(src Source, err error) func(Config) (Source, error) {
	return func(c Config) (Source, error) {
		if err != nil {
			return nil, err
		}
		return withTime(src, c)
	}
}

// isScheme reports whether s is a URL scheme (RFC 3986), so that a path
// such as "data://x" is not taken for one by accident.
func isScheme(s string) bool {
	for i, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		case i > 0 && ('0' <= r && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return s != ""
}

func knownSchemes() string {
	schemesMu.RLock()
	defer schemesMu.RUnlock()
	names := make([]string, 0, len(schemes))
	for s := range schemes {
		names = append(names, s+"://")
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// openFileURL opens file:///path, or file://localhost/path.
func openFileURL(_ context.Context, u *url.URL, c Config) (Source, error) {
	path, err := fileURLPath(u)
	if err != nil {
		return nil, err
	}
	if c.Name == "" {
		c.Name = DefaultName(path)
	}
	return openPath(path, c)
}

func fileURLPath(u *url.URL) (string, error) {
	if u.Host != "" && u.Host != "localhost" || u.Path == "" {
		return "", fmt.Errorf("%s: a file URL names an absolute path on this machine (file:///path); for a relative path, write the path alone", u)
	}
	return u.Path, nil
}

// localPath is the path a LOAD names: a path, or a file:// URL's.
func localPath(p string) (string, error) {
	scheme, _, ok := strings.Cut(p, "://")
	if !ok || !strings.EqualFold(scheme, "file") {
		return p, nil
	}
	u, err := url.Parse(p)
	if err != nil {
		return "", err
	}
	return fileURLPath(u)
}

// What a loaded event takes, as Collect counts it: the event, its pointer
// in the stream, and its values (strings aside: their text is the
// input's, which max_line bounds a line of).
const (
	heldEventBytes = int64(unsafe.Sizeof(event.Event{}) + unsafe.Sizeof(&event.Event{}))
	heldValueBytes = int64(unsafe.Sizeof(event.Value{}))
)

// Collect reads a source to its end and keeps its events, as a loaded
// stream whose Source is the URL (the caller names it). On any error the
// stream is nil: nothing is partially loaded. It closes the source.
func Collect(ctx context.Context, src Source) (*event.Stream, error) {
	defer src.Close() // and so src, whose arena keeps the events of batches not scanned, lives until the copy below is done
	if t, ok := src.(timed); ok {
		t.decodingOf().collect()
	}
	// The batches are kept and joined at the end: one copy into a slice
	// of the exact length, not a growing one copied at each growth.
	var batches [][]*event.Event
	n := 0
	limit, says, bounded := MemoryLimit()
	var held int64 // the bytes of the events and their values so far
	var full error
	err := src.Read(ctx, func(batch []*event.Event) bool {
		batches = append(batches, batch)
		n += len(batch)
		if !bounded {
			return true
		}
		for _, e := range batch {
			held += heldEventBytes + int64(len(e.Attrs))*heldValueBytes
		}
		if held > limit {
			full = fmt.Errorf("the stream would take more than %s: its first %d events take about %s (an event holds a value for each of the stream's attributes up to the last one it has)",
				says, n, FormatBytes(held))
			return false
		}
		return true
	})
	if err == nil {
		err = full
	}
	if err == nil {
		err = ctx.Err() // a source stops at a cancel without an error
	}
	if err != nil {
		return nil, err
	}
	events := event.Pointers(n)
	for _, b := range batches {
		events = append(events, b...)
	}
	// A loaded stream, even from a live source.
	s := &event.Stream{Source: src.URL(), Events: events, Unit: src.Unit()}
	// Read has returned: nothing changes the schema now.
	src.Schema(func(sc *event.Schema) { s.Schema = sc })
	return s, nil
}

// readOnce is the lifecycle of a source that is read once: Close before
// Read releases what Open took; Close during Read cancels it; a Read after
// Close reads nothing.
type readOnce struct {
	lifeMu  sync.Mutex
	started bool
	closed  bool
	cancel  context.CancelFunc
	release func() // what Open took; run once, by Close or at the end of Read
}

// begin starts Read: it returns the context Read runs under, or false when
// the source was closed first.
func (o *readOnce) begin(ctx context.Context) (context.Context, bool, error) {
	o.lifeMu.Lock()
	defer o.lifeMu.Unlock()
	if o.started {
		return nil, false, fmt.Errorf("a source is read once")
	}
	o.started = true
	if o.closed {
		return nil, false, nil
	}
	ctx, o.cancel = context.WithCancel(ctx)
	return ctx, true, nil
}

// end finishes Read.
func (o *readOnce) end() {
	o.lifeMu.Lock()
	defer o.lifeMu.Unlock()
	o.cancel()
	o.free()
}

func (o *readOnce) Close() error {
	o.lifeMu.Lock()
	defer o.lifeMu.Unlock()
	o.closed = true
	if o.cancel != nil {
		o.cancel() // Read frees what it holds as it returns
	} else {
		o.free()
	}
	return nil
}

func (o *readOnce) free() {
	if o.release != nil {
		o.release()
		o.release = nil
	}
}
