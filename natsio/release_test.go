package natsio

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/compiler"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/natsio/natsserver"
	"github.com/sase-cep/sase/output"
)

// racingMatches is a matches stream on which another owner writes its
// fence just after this one has read the last: this one's fence then
// fails, as when two members take a partition at once.
type racingMatches struct {
	jetstream.Stream
	js   jetstream.JetStream
	once sync.Once
}

func (s *racingMatches) GetLastMsgForSubject(ctx context.Context, subject string) (*jetstream.RawStreamMsg, error) {
	m, err := s.Stream.GetLastMsgForSubject(ctx, subject)
	if strings.HasPrefix(subject, fencePrefix+".") {
		s.once.Do(func() {
			if _, err := s.js.Publish(ctx, subject, []byte("y")); err != nil {
				panic(err)
			}
		})
	}
	return m, err
}

// embedded starts a server for one test and connects to it; ctx is the
// test's, 20 s long; shutdown stops the server early. opts configure the
// client (Connect's).
func embedded(t *testing.T, opts ...jetstream.JetStreamOpt) (shutdown func(), ctx context.Context, js jetstream.JetStream) {
	t.Helper()
	s, err := natsserver.Start("127.0.0.1", 0, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	nc, js, err := Connect(ctx, s.ClientURL(), t.Name(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return s.Shutdown, ctx, js
}

// TestReleaseOnEnd: an owner whose run ends while it holds the
// partition's key (lost at the fence to a member that then lost its own
// check, or a run-time error) clears the key, so that the member ranked
// first finds the partition orphaned at once, though this member lives
// and nothing is left to fetch. A key another member has claimed since
// stays theirs. On a loaded machine a key left naming a live member that
// no longer ranked first left its partition with no owner (TestGroupScript).
func TestReleaseOnEnd(t *testing.T) {
	Parallel(t) // its own server
	_, ctx, js := embedded(t)
	events, err := InitStream(ctx, js, "EVENTS", 1, "symbol", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := ensureMatches(ctx, js, Target{Name: "MATCHES"}); err != nil {
		t.Fatal(err)
	}
	matches, err := js.Stream(ctx, "MATCHES")
	if err != nil {
		t.Fatal(err)
	}
	compile := func(sc *event.Schema) (Compiled, error) {
		q, err := sase.Compile("PATTERN SEQ(stock a, stock b) WITHIN 5", &event.Stream{Schema: sc})
		return Compiled{Query: compiler.Of(q), Schema: output.Schema{Columns: []output.Column{{Name: "a", Kind: output.Event}}}, Window: 5}, err
	}
	errBroken := errors.New("broken")
	for i, c := range []struct {
		name    string
		racing  bool
		compile func(*group) error // run when the owner compiles its query
		want    error
		key     string // the partition's key after the run
	}{
		{"lost at the fence", true, nil, errLost, ""},
		{"a run-time error", false, func(*group) error { return errBroken }, errBroken, ""},
		{"claimed since", false, func(g *group) error {
			y := &group{cfg: GroupConfig{Member: "y"}, checkpoints: g.checkpoints}
			_, _, err := y.claim(ctx, "p0")
			return errors.Join(err, errBroken)
		}, errBroken, "y"},
	} {
		cfg := GroupConfig{Stream: "EVENTS", Group: "g", Matches: "MATCHES", Query: "q" + string(rune('a'+i)), Member: "x",
			PinTTL: time.Second, Errors: &strings.Builder{}, Stats: &GroupStats{}, Format: "csv"}
		g := &group{cfg: cfg, js: js, events: events, matches: matches, running: map[string]bool{}, window: 5, alive: []string{"x", "y"}}
		if c.racing {
			g.matches = &racingMatches{Stream: matches, js: js}
		}
		g.cfg.Compile = func(sc *event.Schema) (Compiled, error) {
			if c.compile != nil {
				return Compiled{}, c.compile(g)
			}
			return compile(sc)
		}
		if g.checkpoints, err = keyValue(ctx, js, bucketName(cfg, "checkpoints"), 0); err != nil {
			t.Fatal(err)
		}
		cons, err := g.consumer(ctx, "0")
		if err != nil {
			t.Fatal(err)
		}
		err = g.own(ctx, "0", cons, 0)
		var key string
		if e, err := g.checkpoints.Get(ctx, "p0"); err == nil {
			key = string(e.Value())
		}
		if !errors.Is(err, c.want) || key != c.key {
			t.Errorf("%s: %v, the key then %q; want %v, %q", c.name, err, key, c.want, c.key)
		}
	}
}

// TestGuardOutage is issue 30 item 9's outage note: an owner that cannot
// reach the server to check its ownership says so, and does not say
// that another member took its partition (nobody did); one whose key
// another member did take says it lost it.
func TestGuardOutage(t *testing.T) {
	Parallel(t)
	// The client's request timeout, 5 s by default, ends the check with
	// the server down: a second does as well.
	shutdown, ctx, js := embedded(t, jetstream.WithDefaultTimeout(time.Second))
	var err error
	cfg := GroupConfig{Stream: "EVENTS", Group: "g", Matches: "MATCHES", Query: "q1", Member: "x", Errors: &strings.Builder{}}
	g := &group{cfg: cfg, js: js}
	if g.checkpoints, err = keyValue(ctx, js, bucketName(cfg, "checkpoints"), 0); err != nil {
		t.Fatal(err)
	}
	owned := func(key string) *owner {
		rev, _, err := g.claim(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return &owner{g: g, p: key, key: key, rev: rev}
	}
	taken, out := owned("p0"), owned("p1")
	if _, err := g.checkpoints.Put(ctx, "p0", []byte("y")); err != nil { // y takes it
		t.Fatal(err)
	}
	if err := taken.guard(ctx); !errors.Is(err, errLost) || !strings.Contains(cfg.Errors.(*strings.Builder).String(), "x: lost partition p0\n") {
		t.Errorf("a key taken by y: %v, noted %q; want errLost and the note", err, cfg.Errors)
	}
	shutdown()
	cfg.Errors.(*strings.Builder).Reset()
	// A context with no deadline, as an owner's: the client's own
	// request timeout ends the check.
	err = out.guard(context.Background())
	if err == nil || errors.Is(err, errLost) || !strings.Contains(err.Error(), "cannot check the partition's ownership") {
		t.Errorf("the server down: %v; want the ownership check's failure, not errLost", err)
	}
	if note := cfg.Errors.(*strings.Builder).String(); strings.Contains(note, "lost partition") {
		t.Errorf("the server down: noted %q", note)
	}
}
