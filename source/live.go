package source

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"sync"

	"github.com/sase-cep/sase/event"
)

// maxBatch bounds the events handed to the queries at once. A batch ends
// earlier when no complete line is buffered: a quiet producer's event is
// delivered at once, a fast one's in batches that keep channel costs low.
const maxBatch = 512

// Live is a live stream (LOAD '-', LOAD 'path' FOLLOW, LISTEN): its
// producers' lines are decoded as they arrive, by the loaders' typing and
// ordering rules, and handed in batches to the subscribed queries. It keeps
// no events; the schema grows as types and attributes appear.
//
// A bad line (malformed, or a timestamp before the previous event's) is
// reported on the error writer with its line, counted and skipped, unless
// Options.StopOnError ends the stream there.
type Live struct {
	name, source, format string
	errs                 io.Writer
	run                  func(ctx context.Context) error // reads the producers until the input ends

	mu       sync.Mutex // guards b (so the schema) and the counters
	b        *builder
	read     int64 // event lines read (not blank lines and CSV headers)
	rejected int64

	order sync.Mutex // held from decoding a batch to publishing it, so batches keep seq order

	subsMu sync.Mutex
	subs   []*Subscription // replaced, never changed in place: publish iterates it unlocked
	ended  bool

	start  sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	err    error // why the input ended; nil at its end
}

func newLive(name, source, format string, opts Options, errs io.Writer) *Live {
	l := &Live{name: name, source: source, format: format, errs: errs, b: newBuilder(name, opts), done: make(chan struct{})}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l
}

// LiveReader is a live stream read from r, standard input: it ends when r
// does. format is as Load takes it, csv by default; errors name "stdin".
func LiveReader(name string, r io.Reader, format string, opts Options, errs io.Writer) (*Live, error) {
	format, err := formatOf("-", format)
	if err != nil {
		return nil, err
	}
	l := newLive(name, "-", format, opts, errs)
	l.run = func(context.Context) error { return l.feed("stdin", r) }
	return l, nil
}

// Name is the stream's name; Source where it comes from ("-", a path, or
// tcp://address with the port the listener got).
func (l *Live) Name() string   { return l.name }
func (l *Live) Source() string { return l.source }

// Start starts reading the input, once; the stream ends when the input
// does or at Close.
func (l *Live) Start() {
	l.start.Do(func() {
		go func() {
			err := l.run(l.ctx)
			l.order.Lock() // no batch is being published
			l.subsMu.Lock()
			l.err, l.ended = err, true
			close(l.done) // before the queries see the end
			for _, s := range l.subs {
				close(s.ch)
			}
			l.subs = nil
			l.subsMu.Unlock()
			l.order.Unlock()
		}()
	})
}

// Close stops following a file or listening; the stream then ends. It
// cannot interrupt a read of standard input.
func (l *Live) Close() { l.cancel() }

// Done is closed when the stream has ended; Err then says why (nil at the
// end of the input).
func (l *Live) Done() <-chan struct{} { return l.done }
func (l *Live) Err() error            { <-l.done; return l.err }

// Counts returns the event lines read so far, the events used (handed to
// the queries) and the lines rejected.
func (l *Live) Counts() (read, used, rejected int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.read, l.b.seq, l.rejected
}

// Update runs f on the growing schema, which the stream's producers change
// under the same lock: a query registers the names it reads with it.
func (l *Live) Update(f func(*event.Schema)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(l.b.schema)
}

// Snapshot returns the stream as it is now, for the planner: a copy of the
// schema (type ids and attribute slots are never renumbered, so a plan
// compiled against it reads later events correctly), no events, Live set.
func (l *Live) Snapshot() *event.Stream {
	l.mu.Lock()
	defer l.mu.Unlock()
	return &event.Stream{Name: l.name, Source: l.source, Schema: cloneSchema(l.b.schema), Unit: l.b.unit(), Live: true}
}

func cloneSchema(s *event.Schema) *event.Schema {
	c := event.NewSchema()
	for _, name := range s.Attrs {
		c.AddAttr(name)
	}
	for _, t := range s.Types {
		ct := c.Types[c.AddType(t.Name)]
		ct.Count = t.Count
		ct.Kinds = slices.Clone(t.Kinds)
		ct.Declared = slices.Clone(t.Declared)
		ct.Present = slices.Clone(t.Present)
	}
	return c
}

// Subscription is one query's view of a live stream: the events from the
// moment it subscribed on.
type Subscription struct {
	l    *Live
	ch   chan []*event.Event
	quit chan struct{}
	once sync.Once
}

// Subscribe starts a query's view of the stream. The stream does not start
// reading until Start.
func (l *Live) Subscribe() (*Subscription, error) {
	l.subsMu.Lock()
	defer l.subsMu.Unlock()
	if l.ended {
		return nil, fmt.Errorf("live stream %s has ended", l.name)
	}
	s := &Subscription{l: l, ch: make(chan []*event.Event, 8), quit: make(chan struct{})}
	l.subs = append(slices.Clip(l.subs), s)
	return s, nil
}

// Close ends the subscription: the stream stops waiting for this query.
func (s *Subscription) Close() {
	s.once.Do(func() {
		close(s.quit)
		l := s.l
		l.subsMu.Lock()
		if i := slices.Index(l.subs, s); i >= 0 {
			l.subs = slices.Delete(slices.Clone(l.subs), i, i+1)
		}
		l.subsMu.Unlock()
	})
}

// Events yields the stream's events until it ends or ctx is done. Before
// it waits for the producers it calls idle, so that a query can flush the
// matches it has so far.
func (s *Subscription) Events(ctx context.Context, idle func()) iter.Seq[*event.Event] {
	return func(yield func(*event.Event) bool) {
		for {
			var batch []*event.Event
			var ok bool
			select {
			case batch, ok = <-s.ch:
			default:
				idle()
				select {
				case batch, ok = <-s.ch:
				case <-ctx.Done():
					return
				}
			}
			if !ok {
				return
			}
			for _, e := range batch {
				if !yield(e) {
					return
				}
			}
		}
	}
}

// publish hands a batch to every subscriber; a slow query holds the
// producers back (bounded memory), a stopped one no longer does.
func (l *Live) publish(batch []*event.Event) {
	l.subsMu.Lock()
	subs := l.subs
	l.subsMu.Unlock()
	for _, s := range subs {
		select {
		case s.ch <- batch:
		case <-s.quit:
		}
	}
}

// stopError is a bad line that ends its producer: on_error = 'stop', or a
// CSV header that cannot be read.
type stopError struct{ err error }

func (e stopError) Error() string { return e.err.Error() }

// feed reads one producer's lines until its input ends, decoding each and
// publishing the events; name prefixes its errors ("name:line: ...").
func (l *Live) feed(name string, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	dec := l.decoder()
	var long []byte
	line := 0
	for {
		text, rerr := readLine(br, &long)
		if len(text) == 0 && rerr != nil {
			return endOf(rerr)
		}
		l.order.Lock()
		l.mu.Lock()
		batch := make([]*event.Event, 0, 16)
		var stop error
		for {
			line++
			var e *event.Event
			if e, stop = l.decode(dec, name, text, line); e != nil {
				batch = append(batch, e)
			}
			// Go on while the next line is already here.
			if stop != nil || rerr != nil || len(batch) == maxBatch || !lineReady(br) {
				break
			}
			if text, rerr = readLine(br, &long); len(text) == 0 {
				break
			}
		}
		l.mu.Unlock()
		if len(batch) > 0 {
			l.publish(batch)
		}
		l.order.Unlock()
		if stop != nil {
			return stop
		}
		if rerr != nil {
			return endOf(rerr)
		}
	}
}

func endOf(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// decode turns one line into an event (nil for a blank line or a header),
// counting and reporting a bad line; the error is set when the producer
// must stop. Called with l.mu held.
func (l *Live) decode(dec lineDecoder, name string, text []byte, line int) (*event.Event, error) {
	l.b.file = name
	e, err := dec.decode(l.b, text, line)
	if e != nil {
		l.read++
		l.b.number(e)
		return e, nil
	}
	if err == nil {
		return nil, nil
	}
	l.read++
	l.rejected++
	var stop stopError
	if errors.As(err, &stop) || l.b.opts.StopOnError {
		fmt.Fprintf(l.errs, "%v (stopped reading %s)\n", err, name)
		return nil, stopError{err}
	}
	fmt.Fprintf(l.errs, "%v (line skipped)\n", err)
	return nil, nil
}

// readLine reads a line with its '\n' (the last one may lack it). The
// result is valid until the next read; a long line is gathered in *long.
func readLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	text, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return text, err
	}
	*long = append((*long)[:0], text...)
	for errors.Is(err, bufio.ErrBufferFull) {
		text, err = br.ReadSlice('\n')
		*long = append(*long, text...)
		if len(*long) > maxLine {
			return nil, fmt.Errorf("a line is longer than %d MB", maxLine>>20)
		}
	}
	return *long, err
}

// lineReady reports whether a whole line is buffered, so reading it does
// not wait for the producer.
func lineReady(br *bufio.Reader) bool {
	buf, _ := br.Peek(br.Buffered())
	return bytes.IndexByte(buf, '\n') >= 0
}

// lineDecoder decodes one producer's lines; each producer has its own (a
// CSV producer sends its own header first).
type lineDecoder interface {
	decode(b *builder, text []byte, line int) (*event.Event, error)
}

func (l *Live) decoder() lineDecoder {
	if l.format == "jsonl" {
		return &jsonLines{}
	}
	d := &csvLines{}
	d.cr = csv.NewReader(&d.feed)
	d.cr.ReuseRecord = true
	return d
}

type jsonLines struct{ rec jsonRecord }

func (d *jsonLines) decode(b *builder, text []byte, line int) (*event.Event, error) {
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, nil
	}
	return d.rec.event(b, text, line) // untrimmed, so error columns count from the line's start
}

// csvLines parses each line on its own with encoding/csv, fed one line at
// a time: a bad line (an unterminated quote, say) cannot swallow the
// lines after it, as it would in a file.
type csvLines struct {
	feed   lineFeed
	cr     *csv.Reader
	layout *csvLayout
}

func (d *csvLines) decode(b *builder, text []byte, line int) (*event.Event, error) {
	d.feed.text = text
	rec, err := d.cr.Read()
	d.feed.text = nil
	if errors.Is(err, io.EOF) {
		return nil, nil // a blank line
	}
	if d.layout == nil {
		if err != nil {
			return nil, stopError{b.errorf(line, "bad CSV header: %v", csvMessage(err))}
		}
		if d.layout, err = newCSVLayout(b, rec, line); err != nil {
			return nil, stopError{err}
		}
		d.cr.FieldsPerRecord = d.layout.width
		return nil, nil
	}
	if errors.Is(err, csv.ErrFieldCount) {
		return nil, d.layout.fieldCount(b, rec, line)
	}
	if err != nil {
		return nil, b.errorf(line, "%v", csvMessage(err))
	}
	return d.layout.event(b, rec, line)
}

// csvMessage is encoding/csv's error without its own line numbers, which
// count the lines of one record here.
func csvMessage(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// lineFeed is the reader csvLines' csv.Reader reads: the current line,
// then io.EOF.
type lineFeed struct{ text []byte }

func (f *lineFeed) Read(p []byte) (int, error) {
	if len(f.text) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.text)
	f.text = f.text[n:]
	return n, nil
}
