package natsio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/source"
)

func init() {
	source.Register("nats", Open)
}

// schemeKeys are the WITH options a nats:// LISTEN takes besides the
// source's own (type_column, on_error, ...).
var schemeKeys = map[string]bool{"group": true, "until": true}

// Open is the nats scheme's source.Opener: LISTEN
// 'nats://host:port/STREAM'. The URL's query holds the statement's WITH
// options; FORMAT is jsonl unless given.
func Open(ctx context.Context, u *url.URL, c source.Config) (source.Source, error) {
	t, err := ParseURL(u)
	if err != nil {
		return nil, err
	}
	if err := sourceOptions(t.Query, &c); err != nil {
		return nil, err
	}
	until := t.Query.Get("until")
	if until != "" && until != "now" {
		return nil, fmt.Errorf("%s: until must be 'now' (read what the stream holds, then end), got %q", u.Redacted(), until)
	}
	if c.Name == "" {
		c.Name = source.DefaultName(t.Name)
	}
	if c.Format == "" {
		c.Format = "jsonl"
	}
	nc, js, err := Connect(ctx, t.Server, "sase "+c.Name)
	if err != nil {
		return nil, err
	}
	st, err := stream(ctx, js, t.Server, t.Name)
	if err != nil {
		nc.Close()
		return nil, err
	}
	if group := t.Query.Get("group"); group != "" {
		if until != "" {
			nc.Close()
			return nil, fmt.Errorf("%s: a group's stream has no end: until is for one instance", u.Redacted())
		}
		g, err := newGroupSource(u.Redacted(), t, group, st, c, nc)
		if err != nil {
			return nil, err
		}
		return g, nil
	}
	s := newNatsSource(&c)
	if until == "now" {
		s.last = int64(st.CachedInfo().State.LastSeq)
	}
	run := func(ctx context.Context, feed func(source.Producer) error) error {
		cons, err := js.OrderedConsumer(ctx, t.Name, jetstream.OrderedConsumerConfig{})
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		return s.consume(ctx, cons, c, feed)
	}
	s.Source, err = source.NewLineSource(u.Redacted(), c, run, nc.Close)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return s, nil
}

// sourceOptions reads the source's options from the URL's query (the
// scheme's own are left there), unless the caller gave Options.
func sourceOptions(q url.Values, c *source.Config) error {
	kv := map[string]string{}
	for k, vs := range q {
		if !schemeKeys[k] && len(vs) > 0 {
			kv[k] = vs[len(vs)-1]
		}
	}
	if len(kv) == 0 {
		return nil
	}
	opts, err := source.ParseOptions(kv)
	if err != nil {
		return err
	}
	c.Options = opts
	return nil
}

func typeColumn(o source.Options) string {
	if o.TypeColumn == "" {
		return "type"
	}
	return o.TypeColumn
}

func tsColumn(o source.Options) string {
	if o.TSColumn == "" {
		return "ts"
	}
	return o.TSColumn
}

// newNatsSource is the state that decodes a stream's messages in c's
// format; its Source is still to be set. It makes c.Errors name a bad
// message by its seq.
func newNatsSource(c *source.Config) *natsSource {
	s := &natsSource{last: -1, typeKey: []byte(strconv.Quote(typeColumn(c.Options))), tsKey: tsColumn(c.Options), csv: c.Format == "csv"}
	c.Errors = &seqErrors{w: c.Errors, s: s, prefix: c.Name + ":"}
	return s
}

// natsSource is a line source fed one message at a time, whose events
// are numbered by their stream sequence.
type natsSource struct {
	source.Source
	typeKey []byte // `"type"`
	tsKey   string
	csv     bool
	seq     int64 // the message being fed; set and read on the transport's goroutine
	last    int64 // with until = 'now', the last message to read; else -1
	ticks   atomic.Int64
	onTick  func(ts int64) // a group owner's: a tick moves its time on
}

func (s *natsSource) Read(ctx context.Context, emit func([]*event.Event) bool) error {
	return s.Source.Read(ctx, func(batch []*event.Event) bool {
		// A message is one line, so a batch is one event, of the
		// message being fed (emit runs within feed).
		for _, e := range batch {
			e.Seq = s.seq
		}
		return emit(batch)
	})
}

// Ticks counts the time-only messages read.
func (s *natsSource) Ticks() int64 { return s.ticks.Load() }

// consume feeds the messages of cons until ctx is done (or, with until =
// 'now', the last one is read).
func (s *natsSource) consume(ctx context.Context, cons jetstream.Consumer, c source.Config, feed func(source.Producer) error) error {
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	defer it.Stop()
	var fetched uint64 // the last message's seq
	next := func() (jetstream.Msg, error) {
		if s.last >= 0 && fetched >= uint64(s.last) {
			return nil, io.EOF
		}
		m, err := it.Next()
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			return nil, io.EOF
		}
		if err == nil {
			meta, merr := m.Metadata()
			if merr != nil {
				return nil, merr
			}
			fetched = meta.Sequence.Stream
		}
		return m, err
	}
	return s.feedAll(ctx, c, feed, next)
}

// feedAll feeds the messages next returns, one line each, to one producer
// while their CSV header stays the same, until next returns io.EOF or
// ctx is done.
func (s *natsSource) feedAll(ctx context.Context, c source.Config, feed func(source.Producer) error, next func() (jetstream.Msg, error)) error {
	r := &msgReader{s: s, c: c, next: next}
	for {
		r.header, r.headerDone = "", false
		ferr := feed(source.Producer{Name: c.Name, R: r})
		switch {
		case ctx.Err() != nil || ferr != nil && errors.Is(r.err, io.EOF):
			return nil // ended, or on_error = 'stop' ended the stream (Read returns its error)
		case r.err != nil && !errors.Is(r.err, io.EOF):
			return fmt.Errorf("%s: %w", c.Name, r.err)
		case r.held == nil: // the end
			return nil
		}
	}
}

// msgReader hands a producer one message per Read, so that a message's
// line is decoded and its event emitted before the next Read numbers the
// next event.
type msgReader struct {
	s          *natsSource
	c          source.Config
	next       func() (jetstream.Msg, error)
	rest       []byte
	buf        []byte
	held       jetstream.Msg // a CSV message with another header: the next producer's first
	header     string
	headerDone bool
	err        error
}

func (r *msgReader) Read(p []byte) (int, error) {
	for len(r.rest) == 0 {
		if r.err != nil {
			return 0, io.EOF
		}
		m := r.held
		r.held = nil
		if m == nil {
			if m, r.err = r.next(); r.err != nil {
				return 0, io.EOF
			}
		}
		meta, err := m.Metadata()
		if err != nil {
			r.err = err
			return 0, io.EOF
		}
		if !r.load(m, int64(meta.Sequence.Stream)) {
			return 0, io.EOF // a new CSV header: a new producer
		}
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// load makes m the next bytes to read, or returns false when m is CSV
// under another header than this producer's.
func (r *msgReader) load(m jetstream.Msg, seq int64) bool {
	s := r.s
	data := bytes.TrimRight(m.Data(), "\r\n")
	if s.csv {
		h := m.Headers().Get(HeaderCSV)
		if r.headerDone && h != r.header {
			r.held = m
			return false
		}
		if !r.headerDone {
			r.header, r.headerDone = h, true
			r.buf = append(append(r.buf[:0], h...), '\n')
		} else {
			r.buf = r.buf[:0]
		}
	} else {
		r.buf = r.buf[:0]
		if ts, ok := tickTS(data, s.typeKey, s.tsKey); ok {
			s.ticks.Add(1)
			if s.onTick != nil {
				s.onTick(ts)
			}
			return true
		}
	}
	if bytes.IndexByte(data, '\n') >= 0 {
		fmt.Fprintf(r.c.Errors, "%s seq %d: a message holds one event, this one has several lines (skipped)\n", r.c.Name, seq)
		return true
	}
	s.seq = seq
	r.buf = append(append(r.buf, data...), '\n')
	r.rest = r.buf
	return true
}

// tickTS is a tick's timestamp.
func tickTS(data, typeKey []byte, tsKey string) (int64, bool) {
	if bytes.Contains(data, typeKey) {
		return 0, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil || len(m) != 1 || m[tsKey] == nil {
		return 0, false
	}
	ts, err := strconv.ParseInt(string(m[tsKey]), 10, 64)
	return ts, err == nil
}

// seqErrors names a bad message by its stream sequence: the line source
// reports "name:line: ...", and a producer's lines are not the stream's.
type seqErrors struct {
	w      io.Writer
	s      *natsSource
	prefix string
}

func (e *seqErrors) Write(p []byte) (int, error) {
	rest, ok := bytes.CutPrefix(p, []byte(e.prefix))
	i := 0
	for i < len(rest) && '0' <= rest[i] && rest[i] <= '9' {
		i++
	}
	if !ok || i == 0 || i == len(rest) || rest[i] != ':' {
		return e.w.Write(p)
	}
	_, err := fmt.Fprintf(e.w, "%s seq %d%s", strings.TrimSuffix(e.prefix, ":"), e.s.seq, rest[i:])
	return len(p), err
}
