package natsio

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sase-cep/sase/natsio/natsserver"
)

// TestAckSeqs reads both forms of a JetStream reply subject.
func TestAckSeqs(t *testing.T) {
	for _, c := range []struct {
		reply string
		want  ackInfo
		ok    bool
	}{
		{"$JS.ACK.EVENTS.alerts_q1_3.1.812.17.1764590000000000000.42", ackInfo{stream: 812, consumer: 17, pending: 42}, true},
		{"$JS.ACK._.AHASH.EVENTS.alerts_q1_3.2.812.17.1764590000000000000.0.x7Yz", ackInfo{stream: 812, consumer: 17}, true},
		{"$JS.ACK._.AHASH.EVENTS.c.1.5.6.7.8", ackInfo{stream: 5, consumer: 6, pending: 8}, true},
		{"_INBOX.abc", ackInfo{}, false},
		{"$JS.ACK.EVENTS.c.1.x.2.3.4", ackInfo{}, false}, // a bad number
		{"$JS.ACK.EVENTS.c.1.2", ackInfo{}, false},
	} {
		got, ok := ackSeqs(c.reply)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("ackSeqs(%q) = %+v, %v, want %+v, %v", c.reply, got, ok, c.want, c.ok)
		}
	}
}

// replyMsg is a message with a reply subject, all inOrder reads.
type replyMsg struct {
	jetstream.Msg
	reply string
}

func (m replyMsg) Reply() string { return m.reply }

// TestInOrder: an owner notices a gap in its consumer sequence (messages
// delivered it never received) and starts over from the ack floor.
func TestInOrder(t *testing.T) {
	o := &owner{}
	for i, c := range []struct {
		consumer string
		want     error
	}{
		{"7", nil}, // the first after a reset: any
		{"8", nil},
		{"9", nil},
		{"12", errGap}, // 10 and 11 went elsewhere
	} {
		m := replyMsg{reply: "$JS.ACK.EVENTS.c.1.100." + c.consumer + ".0.0"}
		if _, err := o.inOrder(m); !errors.Is(err, c.want) {
			t.Errorf("message %d (consumer seq %s): %v, want %v", i, c.consumer, err, c.want)
		}
	}
}

// infoConsumer is a consumer whose Info says what the server counts.
type infoConsumer struct {
	jetstream.Consumer
	info jetstream.ConsumerInfo
}

func (c infoConsumer) Info(context.Context) (*jetstream.ConsumerInfo, error) { return &c.info, nil }

// TestIdleLostDelivery: after a fetch that brought nothing, an owner
// holding fewer messages than the server counts as delivered and unacked
// lost some on their way, and starts over from the ack floor; holding as
// many, it goes on.
func TestIdleLostDelivery(t *testing.T) {
	for _, c := range []struct {
		held, serverPending int
		want                error
	}{
		{0, 0, nil},
		{2, 2, nil},
		{2, 3, errGap},
		{0, 1, errGap},
	} {
		o := &owner{cons: infoConsumer{info: jetstream.ConsumerInfo{NumAckPending: c.serverPending}}}
		o.pending = make([]delivered, c.held)
		if err := o.idle(context.Background()); !errors.Is(err, c.want) {
			t.Errorf("holding %d, the server counting %d: %v, want %v", c.held, c.serverPending, err, c.want)
		}
	}
}

// revKV is a checkpoint bucket whose keys are at revision rev.
type revKV struct {
	jetstream.KeyValue
	rev uint64
}

func (kv revKV) Update(ctx context.Context, _ string, _ []byte, last uint64) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if last != kv.rev {
		return 0, jetstream.ErrKeyExists // the server's wrong-last-sequence
	}
	return last + 1, nil
}

// TestGuard: an owner whose key another member has updated is fenced
// out and says so; one that was stopped is not, and says nothing.
func TestGuard(t *testing.T) {
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name     string
		ctx      context.Context
		ownRev   uint64
		want     error
		wantNote string
	}{
		{"owner", context.Background(), 5, nil, ""},
		{"fenced out", context.Background(), 4, errLost, "m0: lost partition 3\n"},
		{"stopped", stopped, 4, context.Canceled, ""},
	} {
		var notes strings.Builder
		g := &group{cfg: GroupConfig{Member: "m0", Errors: &notes}, checkpoints: revKV{rev: 5}}
		o := &owner{g: g, p: "3", key: "p3", rev: c.ownRev}
		if err := o.guard(c.ctx); !errors.Is(err, c.want) || notes.String() != c.wantNote {
			t.Errorf("%s: %v, noted %q; want %v, noted %q", c.name, err, notes.String(), c.want, c.wantNote)
		}
	}
}

// TestPublishAsyncLimit: a member owning every partition has each sink's
// maxInFlight matches unacknowledged at once (a slow or absent server)
// and the JetStream context accepts them all, where its default bound
// (4,000) failed the publish past it ("stalled"), retaking the partition.
func TestPublishAsyncLimit(t *testing.T) {
	const parts = 8
	s, err := natsserver.Start("127.0.0.1", 0, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	nc, _, err := Connect(context.Background(), s.ClientURL(), t.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(publishAsyncLimit(parts)))
	if err != nil {
		t.Fatal(err)
	}
	s.Shutdown() // nothing is acknowledged: every publish stays pending
	s.WaitForShutdown()
	for nc.IsConnected() { // publishes then wait in the reconnect buffer
		time.Sleep(time.Millisecond)
	}
	for p := range parts {
		for i := range maxInFlight {
			m := nats.NewMsg(MatchesSubject("q", strconv.Itoa(p)))
			m.Data = []byte(strconv.Itoa(i))
			if _, err := js.PublishMsgAsync(m); err != nil {
				t.Fatalf("partition %d, match %d: %v", p, i, err)
			}
		}
	}
}
