package natsio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/output"
)

func init() {
	output.RegisterSink("nats", OpenSink)
}

// DuplicateWindow is how long a matches stream that the sink creates
// remembers Msg-Ids: a replay after a takeover republishes within it.
const DuplicateWindow = 2 * time.Minute

// maxInFlight bounds the matches published and not yet acknowledged.
const maxInFlight = 1024

// GlobalPartition is the partition of a query run by one instance on the
// whole stream.
const GlobalPartition = "global"

// OpenSink is the nats scheme's output.SinkOpener: SET output =
// 'nats://host:port/MATCHES'. It creates the stream (subjects
// matches.>) if there is none.
func OpenSink(ctx context.Context, u *url.URL, c output.SinkConfig) (output.Writer, error) {
	t, err := ParseURL(u)
	if err != nil {
		return nil, err
	}
	if !namesEvents(c.Schema) {
		return nil, fmt.Errorf("%s: %w", u.Redacted(), errNoEvents)
	}
	nc, js, err := Connect(ctx, t.Server, "sase sink "+c.Query)
	if err != nil {
		return nil, err
	}
	if err := ensureMatches(ctx, js, t); err != nil {
		nc.Close()
		return nil, err
	}
	w := newSinkWriter(js, c, GlobalPartition)
	w.nc = nc
	return w, nil
}

var errNoEvents = errors.New("a match is published once by the seqs of its events, and this query's RETURN names none: RETURN a variable too")

// namesEvents reports whether rows of sc hold events (their seqs make
// the Msg-Id).
func namesEvents(sc output.Schema) bool {
	for _, c := range sc.Columns {
		if c.Kind == output.Event || c.Kind == output.List {
			return true
		}
	}
	return false
}

// newSinkWriter publishes c.Query's matches of partition on
// matches.<query>.<partition>.
func newSinkWriter(js jetstream.JetStream, c output.SinkConfig, partition string) *sinkWriter {
	w := &sinkWriter{js: js, query: c.Query, pos: -1, subject: MatchesSubject(c.Query, partition)}
	w.enc = output.New(output.JSONL, lineFunc(w.publish), c.Schema)
	return w
}

// MatchesSubject is where a query's matches of a partition are published.
func MatchesSubject(query, partition string) string {
	return "matches." + query + "." + partition
}

func ensureMatches(ctx context.Context, js jetstream.JetStream, t Target) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, t.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: t.Name, Subjects: []string{"matches.>", fencePrefix + ".>"}, Duplicates: DuplicateWindow})
	} else if err == nil && !slices.Contains(st.CachedInfo().Config.Subjects, fencePrefix+".>") {
		// A stream made before fences: its owners' fences go there too.
		cfg := st.CachedInfo().Config
		cfg.Subjects = append(cfg.Subjects, fencePrefix+".>")
		_, err = js.UpdateStream(ctx, cfg)
	}
	if err != nil {
		return fmt.Errorf("matches stream %s on %s: %w", t.Name, t.Server, err)
	}
	return nil
}

// Fences. A group's owner takes a partition by compare-and-set of its
// checkpoint key, and then writes a fence message on the partition's
// FenceSubject in the matches stream; each match it publishes carries
// Nats-Expected-Last-Subject-Sequence (-Subject) naming that message, so
// the server refuses it once another owner has written its own fence. An
// owner paused for any time (SIGSTOP, a stalled VM) past its pin, whose
// partition was taken meanwhile, thus writes nothing when it resumes,
// even with matches already on the wire: its checkpoint's compare-and-set
// happens once per batch, its publishes are asynchronous, and the
// duplicate window is only minutes long.
const fencePrefix = "sase_fence"

// FenceSubject is where owners of a query's partition write their
// fences, in the matches stream.
func FenceSubject(query, partition string) string {
	return fencePrefix + "." + query + "." + partition
}

// errFenced is a match refused because another owner has fenced the
// partition.
var errFenced = errors.New("the server refused a match: another member has fenced the partition")

// casConflict reports whether err is the server refusing a compare-and-set
// (a wrong last sequence): another writer came first. Other errors (a
// server out of reach) say nothing about who owns what.
func casConflict(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && (api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// lineFunc is an io.Writer that hands each write to f: one line, as the
// sink syncs its encoder after each row.
type lineFunc func([]byte) error

func (f lineFunc) Write(p []byte) (int, error) {
	if err := f(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// sinkWriter publishes each row as a JSON Lines message. A group's
// writer holds its rows until the partition's owner has checked it still
// owns it (release), and drops those a replay regenerates at or below
// the last position published before.
type sinkWriter struct {
	nc      *nats.Conn // closed by Finish; nil when shared
	js      jetstream.JetStream
	enc     output.Writer
	query   string
	subject string

	id       []byte // the current row's Msg-Id
	pos      int64  // the current row's completing seq
	index    int    // its index among the rows pos completed
	inFlight []jetstream.PubAckFuture
	err      error

	hold   bool
	held   []*nats.Msg
	sent   int           // rows of held sent, not yet settled
	stored *atomic.Int64 // if not nil, counts the rows released and stored
	// trigger, if not nil, is the seq of the event being run: a row's
	// position is the event whose arrival released it, not the latest of
	// its own. A match that waits on its window (a negated end) is
	// released after later ones are complete, so completing seqs are not
	// in the order rows are published, and a replay suppressing up to
	// the last one published would drop some never published; arrival
	// seqs are, and a replay from the ack floor releases a match on the
	// same event.
	trigger *int64
	// fence, if not "", is the partition's fence subject and fenceSeq the
	// seq of this owner's fence message there: the server stores a match
	// only while that is the subject's last message (FenceSubject).
	fence    string
	fenceSeq uint64
	floor    position // with floorSet, rows at or below it were published before
	floorSet bool
}

// position is a match's place in its partition: the seq of the event
// that completed (or released) it, and its index among that event's
// matches.
type position struct {
	seq   int64
	index int
}

func (p position) after(q position) bool {
	return p.seq > q.seq || p.seq == q.seq && p.index > q.index
}

// parsePosition reads a Sase-Position header.
func parsePosition(h string) (position, error) {
	seq, index, ok := strings.Cut(h, ".")
	s, err1 := strconv.ParseInt(seq, 10, 64)
	i, err2 := strconv.Atoi(index)
	if !ok || err1 != nil || err2 != nil {
		return position{}, fmt.Errorf("bad %s header %q", HeaderPosition, h)
	}
	return position{s, i}, nil
}

func (w *sinkWriter) Row(cells []sase.Cell) error {
	if w.err != nil {
		return w.err
	}
	w.identify(cells)
	// Sync hands the row's line to publish now, while id and pos are its:
	// the encoder otherwise gathers rows into large writes.
	if err := w.enc.Row(cells); err != nil && w.err == nil {
		w.err = err
	}
	if err := w.enc.Sync(); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

// identify sets the row's Msg-Id (the query and its events' seqs) and
// position (the latest seq, which completed the match).
func (w *sinkWriter) identify(cells []sase.Cell) {
	id := append(w.id[:0], w.query...)
	last := int64(-1)
	add := func(seq int64) {
		id = append(id, ':')
		id = strconv.AppendInt(id, seq, 10)
		last = max(last, seq)
	}
	for _, c := range cells {
		if c.Event != nil {
			add(c.Event.Seq)
		}
		for _, e := range c.List {
			add(e.Seq)
		}
	}
	if len(id) > 128 { // a long closure: its digest, which is as unique
		sum := sha256.Sum256(id)
		id = append(append(id[:0], w.query...), ':')
		id = hex.AppendEncode(id, sum[:])
	}
	w.id = id
	if w.trigger != nil {
		last = *w.trigger
	}
	if last == w.pos {
		w.index++
	} else {
		w.pos, w.index = last, 0
	}
}

func (w *sinkWriter) publish(line []byte) error {
	if w.floorSet && !(position{w.pos, w.index}).after(w.floor) {
		return nil // published before this replay
	}
	m := nats.NewMsg(w.subject)
	m.Data = append([]byte(nil), line...)
	m.Header.Set(jetstream.MsgIDHeader, string(w.id))
	m.Header.Set(HeaderPosition, strconv.FormatInt(w.pos, 10)+"."+strconv.Itoa(w.index))
	if w.fence != "" {
		m.Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, w.fence)
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(w.fenceSeq, 10))
	}
	if w.hold {
		w.held = append(w.held, m)
		return nil
	}
	return w.send(m)
}

// sendHeld publishes the rows held; settle waits until they are stored:
// an owner sends every rule's before it waits.
func (w *sinkWriter) sendHeld() error {
	w.sent += len(w.held)
	for i, m := range w.held {
		if err := w.send(m); err != nil {
			w.held = w.held[:0]
			return err
		}
		w.held[i] = nil
	}
	w.held = w.held[:0]
	return nil
}

// settle waits until the rows sent are stored, and counts them.
func (w *sinkWriter) settle() error {
	if err := w.confirm(); err != nil {
		return err
	}
	if w.stored != nil {
		w.stored.Add(int64(w.sent))
	}
	w.sent = 0
	return nil
}

func (w *sinkWriter) send(m *nats.Msg) error {
	f, err := w.js.PublishMsgAsync(m)
	if err != nil {
		return fmt.Errorf("publishing a match on %s: %w", w.subject, err)
	}
	w.inFlight = append(w.inFlight, f)
	if len(w.inFlight) >= maxInFlight {
		return w.confirm()
	}
	return nil
}

// confirm waits until the server has stored every match published.
func (w *sinkWriter) confirm() error {
	for _, f := range w.inFlight {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			w.inFlight = w.inFlight[:0]
			if w.fence != "" && casConflict(err) {
				return errFenced
			}
			return fmt.Errorf("publishing a match on %s: %w", w.subject, err)
		}
	}
	w.inFlight = w.inFlight[:0]
	return nil
}

// Sync confirms what was published: a live query calls it when it waits
// for input.
func (w *sinkWriter) Sync() error {
	if w.err == nil {
		w.err = w.confirm()
	}
	return w.err
}

// Finish confirms what was published and closes the connection.
func (w *sinkWriter) Finish() error {
	if w.err == nil {
		w.err = w.enc.Finish()
	}
	w.Sync()
	if w.nc != nil {
		w.nc.Close()
	}
	return w.err
}
