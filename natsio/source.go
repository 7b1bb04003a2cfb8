package natsio

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"

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
		if c.Options.Slack > 0 || c.Options.Clock != "" {
			nc.Close()
			return nil, fmt.Errorf("%s: %w", u.Redacted(), errGroupSlack)
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

// natsSource is a line source fed the messages of a stream, whose events
// are numbered by their stream sequence.
type natsSource struct {
	source.Source
	typeKey []byte // `"type"`
	tsKey   string
	csv     bool
	lines   lineSeqs      // the current producer's; used on the transport's goroutine
	seq     int64         // the last message loaded
	pending atomic.Uint64 // the consumer's messages still to deliver after it
	last    int64         // with until = 'now', the last message to read; else -1
}

// An event's seq is its message's stream sequence and its index among
// the message's lines, stream<<SeqIndexBits | index: stable across a
// replay, and in stream order. A message holds at most MaxBatch lines.
const (
	SeqIndexBits = 12
	MaxBatch     = 1 << SeqIndexBits
)

// EventSeq is the seq of line index of the message at stream sequence
// stream.
func EventSeq(stream int64, index int) int64 { return stream<<SeqIndexBits | int64(index) }

// SplitSeq is EventSeq's inverse.
func SplitSeq(seq int64) (stream int64, index int) {
	return seq >> SeqIndexBits, int(seq & (MaxBatch - 1))
}

// lineSeqs maps a producer's line numbers to the seqs of their events: a
// Read hands the line source many messages, which it numbers
// (Producer.Seq) as it decodes them, in order.
type lineSeqs struct {
	first int // the line of seqs[head]
	head  int // seqs[:head] are forgotten
	seqs  []lineSeq
}

// lineSeq is a line's event seq; batch says its message holds several
// (an error names its index).
type lineSeq struct {
	seq   int64
	batch bool
}

func (l *lineSeqs) reset() { l.first, l.head, l.seqs = 1, 0, l.seqs[:0] }

// add numbers the next line, reusing the room of those forgotten.
func (l *lineSeqs) add(s lineSeq) {
	if l.head > 0 && l.head >= len(l.seqs)/2 {
		l.seqs = l.seqs[:copy(l.seqs, l.seqs[l.head:])]
		l.head = 0
	}
	l.seqs = append(l.seqs, s)
}

// at is line n's, forgetting the lines before it; seq -1 if unknown.
func (l *lineSeqs) at(n int) lineSeq {
	i := l.head + n - l.first
	if i < l.head || i >= len(l.seqs) {
		return lineSeq{seq: -1}
	}
	l.head, l.first = i, n
	return l.seqs[i]
}

func (l *lineSeqs) seq(n int) int64 { return l.at(n).seq }

// nextFunc returns a partition's next message. With wait, it may block
// for one, and every message returned before has been run; without, it
// returns nil when none is at hand. io.EOF ends the input.
type nextFunc func(wait bool) (jetstream.Msg, error)

// consumeBuffer is how many messages a consumer has delivered ahead of
// the query.
const consumeBuffer = 4096

// consume feeds the messages of cons until ctx is done (or, with until =
// 'now', the last one is read).
func (s *natsSource) consume(ctx context.Context, cons jetstream.Consumer, c source.Config, feed func(source.Producer) error) error {
	msgs := make(chan jetstream.Msg, consumeBuffer)
	done := make(chan struct{})
	cc, err := cons.Consume(func(m jetstream.Msg) {
		select {
		case msgs <- m:
		case <-done:
		}
	}, jetstream.PullMaxMessages(consumeBuffer))
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	defer cc.Stop()
	defer close(done)
	next := func(wait bool) (jetstream.Msg, error) {
		if s.last >= 0 && s.seq >= s.last {
			return nil, io.EOF
		}
		if !wait {
			select {
			case m := <-msgs:
				return m, nil
			default:
				return nil, nil
			}
		}
		select {
		case m := <-msgs:
			return m, nil
		case <-ctx.Done():
			return nil, io.EOF
		}
	}
	return s.feedAll(ctx, c, feed, next)
}

// feedAll feeds the messages next returns, one line each, to one producer
// while their CSV header stays the same, until next returns io.EOF or
// ctx is done.
func (s *natsSource) feedAll(ctx context.Context, c source.Config, feed func(source.Producer) error, next nextFunc) error {
	r := &msgReader{s: s, c: c, next: next}
	for {
		r.header, r.headerDone = "", false
		s.lines.reset()
		ferr := feed(source.Producer{Name: c.Name, R: r, Seq: s.lines.seq})
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

// msgReader hands a producer the messages at hand, a line each: the line
// source's reader asks for more once it has run every line before, and
// gathers what one Read gives into batches.
type msgReader struct {
	s          *natsSource
	c          source.Config
	next       nextFunc
	rest       []byte
	buf        []byte
	held       jetstream.Msg // a CSV message with another header: the next producer's first
	header     string
	headerDone bool
	err        error
}

func (r *msgReader) Read(p []byte) (int, error) {
	n := 0
	for {
		c := copy(p[n:], r.rest)
		r.rest, n = r.rest[c:], n+c
		if n == len(p) || r.err != nil {
			break
		}
		m := r.held
		r.held = nil
		if m == nil {
			// Wait only for the first: the rest are those at hand.
			if m, r.err = r.next(n == 0); r.err != nil || m == nil {
				break
			}
		}
		if !r.load(m) {
			break // a new CSV header: a new producer
		}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// load makes m the next bytes to read, or returns false when m is CSV
// under another header than this producer's.
func (r *msgReader) load(m jetstream.Msg) bool {
	s := r.s
	a, ok := ackSeqs(m.Reply())
	if !ok {
		r.err = fmt.Errorf("a message with no JetStream reply subject (%q)", m.Reply())
		return true
	}
	seq := a.stream
	s.seq = seq
	s.pending.Store(a.pending)
	data := bytes.TrimRight(m.Data(), "\r\n")
	r.buf = r.buf[:0]
	var h string
	if v := m.Headers()[HeaderCSV]; s.csv && len(v) > 0 { // canonical already: no Get
		h = v[0]
	}
	n := bytes.Count(data, []byte{'\n'}) + 1
	// A tick is JSON in either format: a CSV stream's has no header. It is
	// the query's punctuation, numbered as an event: a CSV one becomes a
	// punctuation row under the producer's header, or before any a
	// header of its own (the stream's time moves on a replay that starts
	// at a tick as it did the first time).
	tick := false
	if n == 1 && h == "" {
		var ts int64
		if ts, tick = tickTS(data, s.typeKey, s.tsKey); tick {
			if s.csv {
				if !r.headerDone {
					r.setHeader(r.tickHeader())
				}
				data = r.punctuation(ts)
			}
		}
	}
	if s.csv && !tick && h == "" {
		return r.skip(seq, n, "a CSV message carries its header row in its "+HeaderCSV+" header, and this one has none")
	}
	if s.csv && !tick {
		if r.headerDone && h != r.header {
			r.held = m
			return false
		}
		if !r.headerDone {
			r.setHeader(h)
		}
	}
	if n > MaxBatch {
		return r.skip(seq, n, fmt.Sprintf("a message holds at most %d events, this one has %d lines", MaxBatch, n))
	}
	for i := range n {
		r.s.lines.add(lineSeq{seq: EventSeq(seq, i), batch: n > 1})
	}
	r.buf = append(append(r.buf, data...), '\n')
	r.rest = r.buf
	return true
}

// skip reports message seq, of n lines, as why says, and counts its
// lines read and rejected; the producer's lines before it stay.
func (r *msgReader) skip(seq int64, n int, why string) bool {
	fmt.Fprintf(r.c.Errors, "%s seq %d: %s (skipped: %d lines rejected)\n", r.c.Name, seq, why, n)
	if rej, ok := r.s.Source.(source.Rejecter); ok {
		rej.Reject(int64(n))
	}
	r.rest = r.buf
	return true
}

// setHeader starts the producer's lines with its CSV header.
func (r *msgReader) setHeader(h string) {
	r.header, r.headerDone = h, true
	r.buf = append(append(r.buf, h...), '\n')
	r.s.lines.add(lineSeq{seq: -1})
}

// tickHeader is the CSV header of a tick that comes before any header:
// the type and ts columns.
func (r *msgReader) tickHeader() string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	if r.c.Options.Delimiter != 0 {
		w.Comma = r.c.Options.Delimiter
	}
	w.Write([]string{typeColumn(r.c.Options), tsColumn(r.c.Options)}) // into a Builder: cannot fail
	w.Flush()
	return strings.TrimSuffix(b.String(), "\n")
}

// punctuation is a CSV tick at ts: a row under the producer's header
// whose only cell is its ts (an empty type cell makes it a punctuation).
func (r *msgReader) punctuation(ts int64) []byte {
	cr := csv.NewReader(strings.NewReader(r.header))
	if r.c.Options.Delimiter != 0 {
		cr.Comma = r.c.Options.Delimiter
	}
	cols, err := cr.Read()
	at := slices.Index(cols, tsColumn(r.c.Options))
	if err != nil || at < 0 {
		return nil // a bad header, which the producer's first line reports
	}
	row := make([]byte, 0, len(cols)+20)
	for i := range cols {
		if i > 0 {
			row = utf8.AppendRune(row, cr.Comma)
		}
		if i == at {
			row = strconv.AppendInt(row, ts, 10)
		}
	}
	return row
}

// ackInfo is what a JetStream message's reply subject says of it.
type ackInfo struct {
	stream   int64  // its stream seq
	consumer uint64 // its delivery's consumer seq
	pending  uint64 // the consumer's messages still to deliver after it
}

// ackSeqs reads a JetStream message's reply subject, as Metadata does
// but without allocating: $JS.ACK.<stream>.<consumer>.<delivered>.
// <sseq>.<cseq>.<tm>.<pending>, or with <domain>.<account hash> after
// $JS.ACK and a last token.
func ackSeqs(reply string) (ackInfo, bool) {
	rest, ok := strings.CutPrefix(reply, "$JS.ACK.")
	if !ok {
		return ackInfo{}, false
	}
	var tok [10]string
	n := 0
	for n < len(tok) {
		var more bool
		tok[n], rest, more = strings.Cut(rest, ".")
		n++
		if !more {
			break
		}
	}
	at := 0 // v1: 7 tokens after $JS.ACK
	switch {
	case n == 7:
	case n >= 9: // v2
		at = 2
	default:
		return ackInfo{}, false
	}
	s, err1 := strconv.ParseUint(tok[at+3], 10, 64)
	c, err2 := strconv.ParseUint(tok[at+4], 10, 64)
	p, err3 := strconv.ParseUint(tok[at+6], 10, 64)
	return ackInfo{stream: int64(s), consumer: c, pending: p}, err1 == nil && err2 == nil && err3 == nil
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
	line, _ := strconv.Atoi(string(rest[:i]))
	at := e.s.lines.at(line)
	if at.seq < 0 {
		return e.w.Write(p)
	}
	msg, index := SplitSeq(at.seq)
	name := strings.TrimSuffix(e.prefix, ":")
	var err error
	if at.batch {
		_, err = fmt.Fprintf(e.w, "%s seq %d index %d%s", name, msg, index, rest[i:])
	} else {
		_, err = fmt.Fprintf(e.w, "%s seq %d%s", name, msg, rest[i:])
	}
	return len(p), err
}
