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
	s := &natsSource{last: -1, typeKey: []byte(strconv.Quote(typeColumn(c.Options))), tsKey: tsColumn(c.Options), csv: c.Format == "csv"}
	if until == "now" {
		s.last = int64(st.CachedInfo().State.LastSeq)
	}
	if group := t.Query.Get("group"); group != "" {
		if until != "" {
			nc.Close()
			return nil, fmt.Errorf("%s: a group's stream has no end: until is for one instance", u.Redacted())
		}
		return newGroupSource(u.Redacted(), t, group, st, c, nc), nil
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

// consume feeds each message of cons as a producer of one line, until
// ctx is done.
func (s *natsSource) consume(ctx context.Context, cons jetstream.Consumer, c source.Config, feed func(source.Producer) error) error {
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	defer it.Stop()
	for s.last != 0 {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		meta, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		s.seq = int64(meta.Sequence.Stream)
		if err := s.feedMsg(msg, c, feed); err != nil && ctx.Err() != nil {
			return nil // on_error = 'stop' ended the stream; Read returns its error
		}
		if s.last > 0 && s.seq >= s.last {
			return nil
		}
	}
	return nil
}

// feedMsg hands one message over as a producer; its error has been
// reported.
func (s *natsSource) feedMsg(msg jetstream.Msg, c source.Config, feed func(source.Producer) error) error {
	data := bytes.TrimRight(msg.Data(), "\r\n")
	name := c.Name + " seq " + strconv.FormatInt(s.seq, 10)
	if bytes.IndexByte(data, '\n') >= 0 {
		fmt.Fprintf(c.Errors, "%s: a message holds one event, this one has several lines (skipped)\n", name)
		return nil
	}
	var r io.Reader = bytes.NewReader(data)
	if s.csv {
		r = io.MultiReader(bytes.NewReader([]byte(msg.Headers().Get(HeaderCSV)+"\n")), r)
	} else if isTick(data, s.typeKey, s.tsKey) {
		s.ticks.Add(1)
		return nil
	}
	return feed(source.Producer{Name: name, R: r})
}

// isTick reports whether a JSON Lines message holds the timestamp alone.
func isTick(data, typeKey []byte, tsKey string) bool {
	_, ok := tickTS(data, typeKey, tsKey)
	return ok
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

func (s *natsSource) tickTS(data []byte) (int64, bool) {
	if s.csv {
		return 0, false
	}
	return tickTS(bytes.TrimSpace(data), s.typeKey, s.tsKey)
}
