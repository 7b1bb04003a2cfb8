package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/sase-cep/sase/event"
)

// maxBatch bounds the events handed over at once. A live batch ends
// earlier when no complete line is buffered: a quiet producer's event is
// delivered at once, a fast one's in batches that keep channel costs low.
const maxBatch = 512

// Producer is one input of a line-based source: standard input, a file, a
// connection, a subscription.
type Producer struct {
	Name string    // prefixes its messages: "stdin:12: ...", "feed/127.0.0.1:53412:3: ..."
	R    io.Reader // newline-delimited events; a CSV producer sends its header first
	// Cut says, once R has ended, why a last line without its newline is
	// incomplete ("the connection closed"), or "" when the end of R ends
	// the line (the end of a file). nil is always "".
	Cut func() string
	// Seq, if not nil, numbers the producer's events in place of the
	// source's count: the seq of the event on line n (a message's stream
	// sequence, stable across a replay).
	Seq func(line int) int64
	// Drop, if not nil, ends R from another goroutine (closes the
	// connection): the producer holding the oldest unfinished line when
	// the source's max_pending is passed is cut.
	Drop func()
}

// A Transport runs a line-based source's input: it calls feed for each
// producer, from as many goroutines as it likes (a call returns when that
// producer's input has ended), and returns when the input has ended or
// ctx is done. An error from feed has been reported; a transport with one
// producer returns it, one with many may go on with the others.
type Transport func(ctx context.Context, feed func(Producer) error) error

// lineSource is a source of newline-delimited events that a transport
// delivers: standard input, a followed file, TCP producers, or a JSON
// Lines file (finite).
type lineSource struct {
	decoding
	readOnce
	url, name, format string
	errs              io.Writer
	finite            bool // a bad line fails Read with its error, unreported
	report            reporter
	run               Transport
	pending           *pendingLines // max_pending, across the producers

	clock Clock // clock = 'wall'; its Now is nil without one

	order sync.Mutex // held from decoding a batch to emitting it, so batches keep seq order
	emit  func([]*event.Event) bool
	stop  func(error) // ends Read with an error (on_error = 'stop' on one of many producers)
}

// NewLineSource is a live source of newline-delimited events in c.Format
// (CSV unless jsonl) that run delivers; url is its URL, and release, if not
// nil, frees what the transport holds (it is called once, when Read ends
// or at Close). standard input, FOLLOW and tcp:// are built on it; a
// message-bus scheme can hand each message over as a producer's line.
// It has its reorder stage (c.Options' slack, late, clock), which also
// turns punctuation into ticks: a wrapper of it is not one Open gives it.
func NewLineSource(url string, c Config, run Transport, release func()) (Source, error) {
	s, err := newLineSource(url, c, run, release)
	if err != nil {
		return nil, err
	}
	return withTime(s, c)
}

func newLineSource(url string, c Config, run Transport, release func()) (*lineSource, error) {
	format, err := formatOf("-", c.Format)
	if err != nil {
		return nil, err
	}
	if c.Errors == nil {
		c.Errors = io.Discard
	}
	s := &lineSource{url: url, name: c.Name, format: format, errs: c.Errors, run: run}
	s.pending = newPendingLines(c.Name, c.Options.maxPending())
	s.b = newBuilder(c.Name, c.Options)
	s.b.notes = c.Errors
	s.release = release
	s.report = reporter{w: c.Errors, now: time.Now}
	return s, nil
}

func (s *lineSource) URL() string { return s.url }
func (s *lineSource) Live() bool  { return !s.finite }

// endError ends a producer (or, from Read, the stream) at an error that
// has been reported. badLine: a bad line, not a failed read.
type endError struct {
	err     error
	badLine bool
}

func (e *endError) Error() string { return e.err.Error() }
func (e *endError) Unwrap() error { return e.err }

func (s *lineSource) Read(ctx context.Context, emit func([]*event.Event) bool) error {
	ctx, ok, err := s.begin(ctx)
	if !ok {
		return err
	}
	defer s.end()
	var stopMu sync.Mutex
	var stopErr error
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.emit = func(b []*event.Event) bool {
		if !emit(b) {
			cancel()
			return false
		}
		return true
	}
	s.stop = func(err error) {
		stopMu.Lock()
		if stopErr == nil {
			stopErr = err
		}
		stopMu.Unlock()
		cancel()
	}
	var clock sync.WaitGroup
	clockCtx, stopClock := context.WithCancel(ctx)
	if s.clock.Now != nil {
		clock.Go(func() { s.follow(clockCtx) })
	}
	err = s.run(ctx, func(p Producer) error { return s.feed(ctx, p) })
	stopClock()
	clock.Wait() // nothing is emitted once Read returns
	// A live stream's end, its input's or Close's, releases the events a
	// slack holds: nothing follows them. A cancelled load is no stream.
	if err == nil && stopErr == nil && (parent.Err() == nil || !s.finite) {
		s.drain()
	}
	switch {
	case stopErr != nil:
		err = stopErr
	case err == nil && s.finite:
		err = parent.Err() // a load that was cancelled is not a stream
	}
	s.mu.Lock()
	s.report.finish(s.name, s.rejected)
	if s.b.ord != nil {
		s.b.ord.close()
	}
	s.mu.Unlock()
	return err
}

// wallPoll is how often a clock = 'wall' stream looks at the clock while
// no event arrives: an alert due on a quiet stream fires this late at
// most.
const wallPoll = 10 * time.Millisecond

// follow advances a clock = 'wall' stream's time with the clock until ctx
// is done, releasing the events and ticks it passes.
func (s *lineSource) follow(ctx context.Context) {
	ticks := s.clock.Ticks
	if ticks == nil {
		t := time.NewTicker(wallPoll)
		defer t.Stop()
		ticks = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		s.order.Lock()
		s.mu.Lock()
		batch := s.b.ord.release(s.b, nil)
		s.mu.Unlock()
		if len(batch) > 0 {
			s.emit(batch)
		}
		s.order.Unlock()
	}
}

// drain delivers what the reorder stage holds at the end of the input.
func (s *lineSource) drain() {
	if s.b.ord == nil {
		return
	}
	s.order.Lock()
	defer s.order.Unlock()
	s.mu.Lock()
	batch := s.b.ord.drain(s.b, nil)
	s.mu.Unlock()
	if len(batch) > 0 {
		s.emit(batch)
	}
}

// feed reads one producer's lines until its input ends, decoding them and
// emitting the events in batches.
func (s *lineSource) feed(ctx context.Context, p Producer) error {
	size := 64 << 10 // a live producer's lines come a few at a time
	if s.finite {
		size = csvReadSize // a file is read in large pieces, as a CSV file is
	}
	lr := newLineReader(p.R, p.Name, s.b.opts.maxLine(), size)
	lr.held = s.pending.line(p.Drop)
	defer lr.held.release()
	dec := s.decoder()
	run, _ := dec.(fastRunner)
	for {
		text, rerr := lr.next()
		if rerr != nil && ctx.Err() != nil {
			rerr = errClosed // the input failed because Close closed it
		}
		if len(text) == 0 && rerr != nil {
			return s.ended(ctx, p, rerr)
		}
		s.order.Lock()
		s.mu.Lock()
		batch := s.b.newBatch(s.batchCap())
		s.b.file = p.Name
		// A line a fast path reads whole is numbered here, as decode and
		// arrive would: no reorder stage, no seq of the producer's, a
		// line with its newline.
		direct := s.b.ord == nil && p.Seq == nil
		var stop error
		for {
			var e *event.Event
			ok, err := false, error(nil)
			if direct && rerr == nil {
				e, ok, err = dec.fast(s.b, text, lr.line)
			}
			if ok && err == nil {
				s.read++
				s.b.number(e)
				batch = append(batch, e)
			} else if e, stop = s.decode(dec, &p, text, lr.line, rerr); e != nil { // which finds a fast path's error again, and handles it
				batch = append(batch, e)
			}
			if s.b.ord != nil && s.b.ord.punctuated {
				batch = s.b.ord.release(s.b, batch)
			}
			// Go on while the next line is here already.
			if stop != nil || rerr != nil || len(batch) == maxBatch || !s.finite && !lr.ready() {
				break
			}
			if run != nil && direct {
				n := len(batch)
				batch = run.fastRun(s.b, lr, batch)
				s.read += int64(len(batch) - n)
				if len(batch) == maxBatch || !s.finite && !lr.ready() {
					break
				}
			}
			if text, rerr = lr.next(); rerr != nil && ctx.Err() != nil {
				rerr = errClosed
			}
			if len(text) == 0 {
				break
			}
		}
		s.b.giveBack()
		if s.b.ord != nil {
			batch = s.b.ord.release(s.b, batch)
		}
		s.mu.Unlock()
		more := true
		if len(batch) > 0 {
			more = s.emit(batch)
		}
		s.order.Unlock()
		switch {
		case stop != nil:
			var end *endError
			if errors.As(stop, &end) && end.badLine && s.b.opts.StopOnError {
				s.stop(stop) // on_error = 'stop' stops the stream, not just this producer
			}
			return stop
		case !more || ctx.Err() != nil:
			return nil
		case rerr != nil:
			return s.ended(ctx, p, rerr)
		}
	}
}

// batchCap is a new batch's capacity: a file's batches are full, a live
// one's mostly small.
func (s *lineSource) batchCap() int {
	if s.finite {
		return maxBatch
	}
	return 16
}

// ended is the error a producer's input ended with: nil at its end (or
// when Read was stopped), else the error, reported.
func (s *lineSource) ended(ctx context.Context, p Producer, err error) error {
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	if s.finite {
		return err
	}
	var long *lineTooLongError
	var cut *pendingCutError
	named := errors.As(err, &long) || errors.As(err, &cut)
	badLine := long != nil || cut != nil && cut.partial
	if !named {
		err = fmt.Errorf("%s: %w", p.Name, err)
	}
	s.mu.Lock()
	if badLine { // a line, rejected
		s.read++
		s.rejected++
	}
	fmt.Fprintf(s.errs, "%v (stopped reading %s)\n", err, p.Name)
	s.mu.Unlock()
	return &endError{err: err, badLine: badLine}
}

// decode turns one line into an event (nil for a blank line or a
// header), counting a bad line, and reporting it on a live stream; the
// error is set when the producer must stop. rerr is the input's error
// after this line: a line without its newline at the end of an input that
// cuts it off is incomplete. Called with s.mu held.
func (s *lineSource) decode(dec lineDecoder, p *Producer, text []byte, line int, rerr error) (*event.Event, error) {
	s.b.file = p.Name
	var e *event.Event
	var err error
	var cut string
	if rerr != nil { // only an input's last line can be cut off
		cut = cutReason(p, text, rerr)
	}
	if cut != "" {
		if len(bytes.TrimSpace(text)) == 0 {
			return nil, nil
		}
		err = s.b.errorf(line, "incomplete line: %s before its newline", cut)
	} else {
		e, err = dec.decode(s.b, text, line)
	}
	if e != nil && p.Seq != nil {
		e.Seq, s.b.presetSeq = p.Seq(line), true
	}
	if e != nil {
		if !e.IsTick() { // a punctuation is not an event line
			s.read++
		}
		if now, err := s.b.arrive(e, line, text, nil); now || err != nil {
			if err != nil {
				fmt.Fprintf(s.errs, "%v (stopped reading %s)\n", err, p.Name)
				return nil, &endError{err: err}
			}
			return e, nil
		}
		return nil, nil
	}
	if err == nil {
		return nil, nil
	}
	s.read++
	s.rejected++
	if s.finite && !s.b.opts.SkipBad {
		return nil, err
	}
	var hdr headerError
	if errors.As(err, &hdr) || s.b.opts.StopOnError {
		fmt.Fprintf(s.errs, "%v (stopped reading %s)\n", err, p.Name)
		return nil, &endError{err: err, badLine: true}
	}
	s.report.skipped(err, s.rejected)
	return nil, nil
}

// errClosed ends a producer's input that Close cut off (a connection it
// closed): its last line, without its newline, is incomplete.
var errClosed = errors.New("the stream was closed")

// cutReason is why text, a producer's last line, is incomplete, or "".
func cutReason(p *Producer, text []byte, rerr error) string {
	if rerr == nil || len(text) > 0 && text[len(text)-1] == '\n' {
		return ""
	}
	if rerr == errClosed {
		return "the stream was closed"
	}
	if !errors.Is(rerr, io.EOF) {
		return "the input failed (" + rerr.Error() + ")"
	}
	if p.Cut == nil {
		return ""
	}
	return p.Cut()
}

// lineDecoder decodes one producer's lines; each producer has its own (a
// CSV producer sends its own header first).
type lineDecoder interface {
	decode(b *builder, text []byte, line int) (*event.Event, error)
	// fast is the event of a line that a fast path reads whole, ok false
	// for any other (decode's).
	fast(b *builder, text []byte, line int) (_ *event.Event, ok bool, _ error)
}

// A fastRunner is a lineDecoder that reads lines straight from a line
// reader's buffer, framing them itself as it decodes them: a line source
// with no reorder stage and no seq of its producer's takes their events
// as they are, numbered.
type fastRunner interface {
	fastRun(b *builder, r *lineReader, batch []*event.Event) []*event.Event
}

func (s *lineSource) decoder() lineDecoder { return inputOf(s.format).lines() }
