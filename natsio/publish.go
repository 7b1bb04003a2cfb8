package natsio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// EventsPrefix is the subject prefix producers publish on when no
// stream is named: events.<key>, stream EVENTS's (DefaultSubjects).
const EventsPrefix = "events"

// DefaultSubjects is the subject prefix InitStream gives a stream named
// name when none is asked for: its name in lower case, so that streams
// of one server have their own (stream EVENTS takes events.*).
func DefaultSubjects(name string) string { return strings.ToLower(name) }

// InitStream creates an events stream that stores subjects.<key> as
// <p>.subjects, p the key's partition of partitions (at least 1), so that
// each partition can be consumed in order by one consumer with one
// filter subject (a consumer filtering many distinct subjects is much
// slower). subjects is a prefix of one or more tokens ("" is
// DefaultSubjects(name)); a stream of the server that stores them
// already is named in the error. key, the attribute producers key by,
// is kept in the stream's metadata: a group runs a query per partition
// when it holds [key].
func InitStream(ctx context.Context, js jetstream.JetStream, name string, partitions int, key, subjects string) (jetstream.Stream, error) {
	if partitions < 1 {
		return nil, fmt.Errorf("--partitions must be at least 1, got %d", partitions)
	}
	if subjects == "" {
		subjects = DefaultSubjects(name)
	}
	subjects = strings.TrimSuffix(subjects, ".*")
	if err := checkSubjects(subjects); err != nil {
		return nil, err
	}
	cfg := jetstream.StreamConfig{
		Name:       name,
		Metadata:   map[string]string{metaKey: key},
		Subjects:   []string{subjects + ".*"},
		Duplicates: DuplicateWindow,
		SubjectTransform: &jetstream.SubjectTransformConfig{
			Source:      subjects + ".*",
			Destination: "{{partition(" + strconv.Itoa(partitions) + ",1)}}." + subjects,
		},
	}
	st, err := js.CreateStream(ctx, cfg)
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeSubjectOverlap {
		other := "another stream"
		if o, err := js.StreamNameBySubject(ctx, subjects+"._"); err == nil {
			other = "stream " + o
		}
		return nil, fmt.Errorf("creating stream %s: %s already stores %s.* (a subject belongs to one stream of a server): give %s other subjects, --subjects %s say (%w)",
			name, other, subjects, name, suggestSubjects(name, subjects), err)
	}
	if err != nil {
		return nil, fmt.Errorf("creating stream %s: %w", name, err)
	}
	return st, nil
}

// errCodeSubjectOverlap is the server's "subjects overlap with an
// existing stream" (the client names no constant for it).
const errCodeSubjectOverlap jetstream.ErrorCode = 10065

// suggestSubjects is a prefix for stream name other than taken.
func suggestSubjects(name, taken string) string {
	if s := DefaultSubjects(name); s != taken {
		return s
	}
	return taken + "_" + strings.ToLower(nuid.Next()[18:])
}

// checkSubjects refuses a prefix that is no literal subject: publishers
// add the key's token, the stream's transform the partition's.
func checkSubjects(subjects string) error {
	for tok := range strings.SplitSeq(subjects, ".") {
		if tok == "" || strings.ContainsAny(tok, "*> \t\r\n") {
			return fmt.Errorf("--subjects %q: want tokens joined by dots with no wildcard or space, as orders or site1.orders (the stream then stores orders.*)", subjects)
		}
	}
	return nil
}

// Subjects is the prefix of the subjects st stores (InitStream's
// subjects): producers publish on <prefix>.<key>, and partition p is
// stored on <p>.<prefix>.
func Subjects(st jetstream.Stream) string {
	if t := st.CachedInfo().Config.SubjectTransform; t != nil && strings.HasSuffix(t.Source, ".*") {
		return strings.TrimSuffix(t.Source, ".*")
	}
	if subs := st.CachedInfo().Config.Subjects; len(subs) == 1 && strings.HasSuffix(subs[0], ".*") {
		return strings.TrimSuffix(subs[0], ".*")
	}
	return EventsPrefix
}

// metaKey is the stream metadata entry holding the key attribute.
const metaKey = "sase_key"

// StreamKey reads the key attribute InitStream recorded ("" if none).
func StreamKey(st jetstream.Stream) string { return st.CachedInfo().Config.Metadata[metaKey] }

// Partitions reads the number of partitions InitStream gave a stream.
func Partitions(st jetstream.Stream) int {
	t := st.CachedInfo().Config.SubjectTransform
	if t == nil {
		return 1
	}
	var n int
	if _, err := fmt.Sscanf(t.Destination, "{{partition(%d,", &n); err != nil || n < 1 {
		return 1
	}
	return n
}

// PublishConfig says how Publish reads and sends lines.
type PublishConfig struct {
	Key    string        // the attribute whose value is the subject's last token; "" publishes on events._
	Format string        // csv or jsonl; "" tells them apart by the first line
	Tick   time.Duration // while no line arrives for this long, publish a tick
	// TickUnit is the duration of one timestamp tick of the stream: a tick
	// carries the time now in it.
	TickUnit time.Duration
	// Batch is the most lines one message carries, at most MaxBatch; 1
	// publishes each line as its own message. 0 is DefaultBatch on a
	// stream of one partition and 1 on a partitioned one: a batch holds
	// one partition, so batches interleave the partitions, and a query
	// that reads the whole stream would see its timestamps out of order.
	Batch int
	// Linger is the longest a line waits for its batch to fill
	// (DefaultLinger if 0): a slow feed is not held back.
	Linger time.Duration
	// Stream is the stream the lines go to, on its subjects
	// (<prefix>.<key>), in batches that follow its partitions; "" is the
	// one that stores events.*.
	Stream string
	// ID is the input's identity (a file's path, size and time, say): a
	// message's Nats-Msg-Id is ID and the line number of its first line,
	// so publishing the same input again within the stream's duplicate
	// window stores nothing twice. "" is a random one per Publish.
	ID string
}

// Batching: a message carries up to Batch lines of one partition, and
// flushes when full, when its first line has waited Linger, before a
// tick, and at the end of the input. Its bytes stay under
// maxBatchBytes, well within the server's default max_payload (1 MB).
const (
	DefaultBatch  = 256
	DefaultLinger = 5 * time.Millisecond
	maxBatchBytes = 256 << 10
)

// Published is what Publish sent.
type Published struct {
	Events, Messages int64
}

// Publish sends the lines of r to <prefix>.<key> (Subjects), CSV rows with their
// header row in the Sase-Csv-Header header, several lines of one
// partition in a message (PublishConfig.Batch), and waits until the
// server has stored them all. The messages the server refused (a stream
// full under DiscardNew, say) are counted in its error, with the first
// refusal's reason.
func Publish(ctx context.Context, js jetstream.JetStream, r io.Reader, c PublishConfig) (Published, error) {
	if c.Batch < 0 || c.Batch > MaxBatch {
		return Published{}, fmt.Errorf("--batch must be 1 to %d, got %d", MaxBatch, c.Batch)
	}
	if c.Linger <= 0 {
		c.Linger = DefaultLinger
	}
	parts, subjects, err := publishStream(ctx, js, c.Stream)
	if err != nil {
		return Published{}, err
	}
	if c.Batch == 0 {
		c.Batch = DefaultBatch
		if parts > 1 {
			c.Batch = 1
		}
	}
	if c.ID == "" {
		c.ID = nuid.Next()
	}
	p := publisher{ctx: ctx, js: js, cfg: c, keyCol: -1, id: c.ID + ".", subjects: subjects}
	if c.Batch > 1 {
		p.parts = make([]outBatch, parts)
	}
	lines := make(chan []byte, 256)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 256<<20)
		for sc.Scan() {
			select {
			case lines <- bytes.Clone(sc.Bytes()):
			case <-ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
	}()
	var tick <-chan time.Time
	if c.Tick > 0 {
		t := time.NewTicker(c.Tick)
		defer t.Stop()
		tick = t.C
	}
	linger := time.NewTimer(c.Linger)
	linger.Stop()
	defer linger.Stop()
	lingering := false
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				if err := <-readErr; err != nil {
					return p.done, err
				}
				if err := p.flushAll(); err != nil {
					return p.done, err
				}
				return p.done, p.wait()
			}
			if err := p.line(line); err != nil {
				return p.done, err
			}
			if !lingering && len(p.order) > 0 {
				linger.Reset(c.Linger)
				lingering = true
			}
		case <-linger.C:
			lingering = false
			if err := p.flushAll(); err != nil {
				return p.done, err
			}
		case now := <-tick:
			if err := p.flushAll(); err != nil {
				return p.done, err
			}
			if err := p.tick(now); err != nil {
				return p.done, err
			}
		case <-ctx.Done():
			return p.stopped()
		}
	}
}

// stopped is Publish's end when ctx is done: it waits a moment for the
// acknowledgements of what was sent, and says what the server stored.
func (p *publisher) stopped() (Published, error) {
	err := p.ctx.Err()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p.ctx = ctx
	p.drain()
	for _, a := range p.acks { // not acknowledged in time: not counted
		p.refused.Messages++
		p.refused.Events += a.events
	}
	acked := Published{Events: p.done.Events - p.refused.Events, Messages: p.done.Messages - p.refused.Messages}
	return acked, fmt.Errorf("stopped after line %d: %w", p.lineNo, err)
}

// publishStream is the number of partitions and the subject prefix of
// the stream name, or of the one the server says stores events.* if
// name is "". A server that has just restarted may not answer at once
// (no JetStream yet, or a request lost on the way): the lookup is tried
// again as a publish is.
func publishStream(ctx context.Context, js jetstream.JetStream, name string) (partitions int, subjects string, err error) {
	end := time.Now().Add(publishRetries * publishRetryWait)
	for {
		st, err := lookupStream(ctx, js, name)
		if err == nil {
			return Partitions(st), Subjects(st), nil
		}
		if errors.Is(err, jetstream.ErrStreamNotFound) || ctx.Err() != nil || time.Now().After(end) {
			return 0, "", err
		}
		pause(ctx, publishRetryWait)
	}
}

func lookupStream(ctx context.Context, js jetstream.JetStream, name string) (jetstream.Stream, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*publishRetryWait)
	defer cancel()
	if name == "" {
		var err error
		if name, err = js.StreamNameBySubject(ctx, EventsPrefix+"._"); err != nil {
			return nil, fmt.Errorf("no stream stores %s.* (sase nats init creates one): %w", EventsPrefix, err)
		}
	}
	st, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("no stream %s (sase nats init creates one): %w", name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", name, err)
	}
	return st, nil
}

type publisher struct {
	ctx      context.Context
	js       jetstream.JetStream
	cfg      PublishConfig
	subjects string // the stream's prefix (Subjects)
	header   string // CSV
	keyCol   int
	lineNo   int
	sent     int64     // messages sent
	done     Published // stored, or sent and not refused yet
	id       string    // this Publish's messages' Nats-Msg-Id prefix
	acks     []pending // sent, not yet seen acknowledged; oldest first
	refused  Published
	first    error // the first refusal

	parts []outBatch // by partition; nil with Batch 1
	order []int      // the partitions with lines, by their first line
}

// outBatch is the lines of a partition not yet sent.
type outBatch struct {
	line  int    // the first line's number
	token string // the first line's key, the subject's last token
	data  []byte
	lines int
}

// pending is a message sent, its events, and how often it was sent again.
type pending struct {
	f      jetstream.PubAckFuture
	events int64
	resent int
}

// A server that has just restarted has no JetStream for a moment: a
// message published then gets no responders, is stored by none, and is
// sent again, for publishRetries*publishRetryWait at most. A reconnect
// fails the acknowledgements still awaited (whether or not the message
// was stored); such a message is sent again, its Nats-Msg-Id making the
// stream's duplicate window drop it if it was.
const (
	publishRetryWait = 250 * time.Millisecond
	publishRetries   = 40
	publishResends   = 10
)

func (p *publisher) line(line []byte) error {
	p.lineNo++
	line = bytes.TrimRight(line, "\r")
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	if p.cfg.Format == "" {
		p.cfg.Format = "csv"
		if line[0] == '{' {
			p.cfg.Format = "jsonl"
		}
	}
	if p.cfg.Format == "csv" && p.header == "" {
		return p.csvHeader(line)
	}
	key, err := p.key(line)
	if err != nil {
		return err
	}
	token := SubjectToken(key)
	if p.parts == nil {
		return p.send(p.message(token, line), 1, p.lineNo)
	}
	part := PartitionOf(token, len(p.parts))
	b := &p.parts[part]
	if b.lines > 0 && len(b.data)+1+len(line) > maxBatchBytes {
		if err := p.flush(part); err != nil {
			return err
		}
	}
	if b.lines == 0 {
		b.token, b.line = token, p.lineNo
		p.order = append(p.order, part)
	} else {
		b.data = append(b.data, '\n')
	}
	b.data = append(b.data, line...)
	if b.lines++; b.lines == p.cfg.Batch {
		return p.flush(part)
	}
	return nil
}

// csvHeader takes the header row, and finds the key's column in it.
func (p *publisher) csvHeader(line []byte) error {
	p.header = string(line)
	cols, err := csv.NewReader(strings.NewReader(p.header)).Read()
	if err != nil {
		return fmt.Errorf("line %d: the CSV header: %w", p.lineNo, err)
	}
	for i, c := range cols {
		if c == p.cfg.Key {
			p.keyCol = i
		}
	}
	if p.cfg.Key != "" && p.keyCol < 0 {
		return fmt.Errorf("line %d: the CSV header has no column %q (--key)", p.lineNo, p.cfg.Key)
	}
	return nil
}

// key is a line's value of the key attribute.
func (p *publisher) key(line []byte) (string, error) {
	switch {
	case p.cfg.Format == "csv" && p.keyCol >= 0:
		if bytes.IndexByte(line, '"') < 0 { // no quote: the cell lies between commas
			rest := line
			for range p.keyCol {
				if _, rest, _ = bytes.Cut(rest, []byte{','}); rest == nil {
					return "", fmt.Errorf("line %d: no %s cell", p.lineNo, p.cfg.Key)
				}
			}
			cell, _, _ := bytes.Cut(rest, []byte{','})
			return string(cell), nil
		}
		cells, err := csv.NewReader(bytes.NewReader(line)).Read()
		if err != nil || p.keyCol >= len(cells) {
			return "", fmt.Errorf("line %d: no %s cell: %v", p.lineNo, p.cfg.Key, err)
		}
		return cells[p.keyCol], nil
	case p.cfg.Format != "csv" && p.cfg.Key != "":
		var obj map[string]any
		if err := json.Unmarshal(line, &obj); err != nil {
			return "", fmt.Errorf("line %d: %w", p.lineNo, err)
		}
		v, ok := obj[p.cfg.Key]
		if !ok {
			return "", fmt.Errorf("line %d: no key %q (--key)", p.lineNo, p.cfg.Key)
		}
		return fmt.Sprint(v), nil
	}
	return "", nil
}

// message is data on <subjects>.<token>, with the CSV header.
func (p *publisher) message(token string, data []byte) *nats.Msg {
	m := nats.NewMsg(p.subjects + "." + token)
	if p.header != "" {
		m.Header.Set(HeaderCSV, p.header)
	}
	m.Data = data
	return m
}

// flush sends partition part's lines as one message, on the subject of
// its first line's key, which the stream's transform maps to part.
func (p *publisher) flush(part int) error {
	b := &p.parts[part]
	if b.lines == 0 {
		return nil
	}
	m := p.message(b.token, b.data)
	n, first := b.lines, b.line
	*b = outBatch{}
	p.order = slices.DeleteFunc(p.order, func(q int) bool { return q == part })
	return p.send(m, int64(n), first)
}

// flushAll sends every partition's lines, oldest first.
func (p *publisher) flushAll() error {
	for len(p.order) > 0 {
		if err := p.flush(p.order[0]); err != nil {
			return err
		}
	}
	return nil
}

// tick publishes {"ts": now} in the stream's time unit.
func (p *publisher) tick(now time.Time) error {
	unit := p.cfg.TickUnit
	if unit <= 0 {
		unit = time.Millisecond
	}
	m := nats.NewMsg(p.subjects + "." + SubjectToken(""))
	m.Data = []byte(`{"ts":` + strconv.FormatInt(now.UnixNano()/int64(unit), 10) + `}`)
	return p.send(m, 0, 0)
}

// send publishes m, whose first line is line (0: a tick, which needs no
// Msg-Id: a second one says the same).
func (p *publisher) send(m *nats.Msg, events int64, line int) error {
	if line > 0 {
		m.Header.Set(nats.MsgIdHdr, p.id+strconv.Itoa(line))
	}
	f, err := p.publish(m)
	if err != nil {
		return fmt.Errorf("line %d: %w", p.lineNo, err)
	}
	p.sent++
	p.done.Messages++
	p.done.Events += events
	p.acks = append(p.acks, pending{f: f, events: events})
	if err := p.settle(); err != nil {
		return err
	}
	// The client fails a publish past its own bound (4000 unacknowledged)
	// after a short stall: a slow server is waited for here instead.
	if len(p.acks) >= publishInFlight {
		return p.drain()
	}
	return nil
}

// publishInFlight bounds the messages sent and not yet acknowledged.
const publishInFlight = 1024

func (p *publisher) publish(m *nats.Msg) (jetstream.PubAckFuture, error) {
	return p.js.PublishMsgAsync(m, jetstream.WithRetryWait(publishRetryWait), jetstream.WithRetryAttempts(publishRetries))
}

// settle drops the acknowledgements that have arrived from the front of
// p.acks, sending again what a reconnect failed and counting the
// refusals, which Publish's error reports: the one place they are seen.
func (p *publisher) settle() error {
	i := 0
	for ; i < len(p.acks); i++ {
		a := p.acks[i]
		select {
		case <-a.f.Ok():
		case err := <-a.f.Err():
			if errors.Is(err, nats.ErrDisconnected) && a.resent < publishResends {
				f, perr := p.publish(a.f.Msg())
				if perr != nil {
					return perr
				}
				p.acks = append(p.acks, pending{f: f, events: a.events, resent: a.resent + 1})
				continue
			}
			p.refused.Messages++
			p.refused.Events += a.events
			if p.first == nil {
				p.first = err
			}
		default:
			p.acks = p.acks[:copy(p.acks, p.acks[i:])]
			return nil
		}
	}
	p.acks = p.acks[:0]
	return nil
}

// drain waits until every message sent is acknowledged (or refused).
func (p *publisher) drain() error {
	for len(p.acks) > 0 {
		select {
		case <-p.js.PublishAsyncComplete():
		case <-p.ctx.Done():
			return p.ctx.Err()
		case <-time.After(30 * time.Second):
			return fmt.Errorf("the server did not acknowledge %d messages in 30 s", p.js.PublishAsyncPending())
		}
		if err := p.settle(); err != nil {
			return err
		}
	}
	return nil
}

func (p *publisher) wait() error {
	if err := p.drain(); err != nil {
		return err
	}
	if p.refused.Messages > 0 {
		return fmt.Errorf("the server refused %d of %d messages (%d of %d events): %w", p.refused.Messages, p.done.Messages, p.refused.Events, p.done.Events, p.first)
	}
	return nil
}

// PartitionOf is the partition of partitions that the stream's subject
// transform {{partition(P,1)}} stores events.<token> in: nats-server's
// hash, FNV-1a (32 bits) of the token, modulo P.
func PartitionOf(token string, partitions int) int {
	if partitions <= 1 {
		return 0
	}
	h := uint32(2166136261)
	for i := range len(token) {
		h = (h ^ uint32(token[i])) * 16777619
	}
	return int(h % uint32(partitions))
}

// SubjectToken makes a key value one subject token: the characters a
// token cannot hold become '_', and an empty key is "_".
func SubjectToken(key string) string {
	if key == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '.', '*', '>', ' ', '\t', '\r', '\n':
			return '_'
		}
		return r
	}, key)
}

// Cat writes the data of each message a stream holds now, one line
// each, in stream order.
func Cat(ctx context.Context, js jetstream.JetStream, server, name string, w io.Writer) error {
	st, err := stream(ctx, js, server, name)
	if err != nil {
		return err
	}
	last := st.CachedInfo().State.LastSeq
	if last == 0 {
		return nil
	}
	cons, err := js.OrderedConsumer(ctx, name, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	bw := bufio.NewWriter(w)
	for {
		m, err := it.Next()
		if err != nil {
			return err
		}
		if !strings.HasPrefix(m.Subject(), fencePrefix+".") { // an owner's fence, not a match
			bw.Write(bytes.TrimRight(m.Data(), "\n"))
			bw.WriteByte('\n')
		}
		if meta, err := m.Metadata(); err != nil || meta.Sequence.Stream >= last {
			if err == nil {
				err = bw.Flush()
			}
			return err
		}
	}
}
