package natsio_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/natsio"
	"github.com/sase-cep/sase/natsio/natsserver"
	"github.com/sase-cep/sase/source"
)

// queries are the shapes the NATS tests run: W2, a negated end, a
// trailing closure, a strategy.
var queries = []struct{ name, text string }{
	{"w2", "PATTERN SEQ(stock a, stock b, stock c) WHERE [symbol] AND a.price > 500 AND b.price > a.price AND c.price > b.price WITHIN 120"},
	{"negated-end", "PATTERN SEQ(stock a, stock b, !halt h) WHERE [symbol] AND b.price > a.price + 4 WITHIN 20"},
	{"trailing-closure", "PATTERN SEQ(stock a, stock+ b[]) WHERE [symbol] AND skip-till-next-match AND a.price > 505 AND b[i].price > b[i-1].price WITHIN 10"},
	{"strategy", "PATTERN SEQ(stock a, stock b) WHERE [symbol] AND partition-contiguity AND b.price < a.price - 2 WITHIN 30"},
}

// matches runs text over stream through the facade and returns each
// match as the seqs of its events (shifted by shift), sorted.
func matches(t *testing.T, text string, stream *event.Stream, shift int64) []string {
	t.Helper()
	q, err := sase.Compile(text, stream)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	_, err = q.Run(context.Background(), stream.All(), func(row []sase.Cell) bool {
		var b []byte
		for _, c := range row {
			if c.Event != nil {
				b = strconv.AppendInt(append(b, ' '), c.Event.Seq+shift, 10)
			}
			for _, e := range c.List {
				b = strconv.AppendInt(append(b, ' '), e.Seq+shift, 10)
			}
		}
		out = append(out, string(b))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestOneInstance: the events read from a NATS stream are the file's,
// numbered by stream sequence (the file's seq + 1), and every query
// finds the same matches in them.
func TestOneInstance(t *testing.T) {
	server := startServer(t)
	_, js := connect(t, server)
	csv := walkCSV(3000, 7)
	publishCSV(t, js, "EVENTS", 1, csv)
	path := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := source.Load(path, "", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.Open(context.Background(), streamURL(server, "EVENTS")+"?until=now", source.WithFormat("csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !src.Live() {
		t.Error("a NATS source is not live")
	}
	bus, err := source.Collect(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if len(bus.Events) != len(file.Events) {
		t.Fatalf("%d events over NATS, %d in the file", len(bus.Events), len(file.Events))
	}
	for i, e := range bus.Events {
		f := file.Events[i]
		if e.Seq != f.Seq+1 || e.TS != f.TS || bus.Schema.Types[e.Type].Name != file.Schema.Types[f.Type].Name || fmt.Sprint(e.Attrs) != fmt.Sprint(f.Attrs) {
			t.Fatalf("event %d: %+v over NATS, %+v in the file", i, e, f)
		}
	}
	for _, q := range queries {
		t.Run(q.name, func(t *testing.T) {
			want := matches(t, q.text, file, 1)
			got := matches(t, q.text, bus, 0)
			if len(want) == 0 {
				t.Fatal("no matches in the file: the test stream does not exercise the query")
			}
			if !slices.Equal(got, want) {
				t.Errorf("%d matches over NATS, %d from the file; first differences:\n%s", len(got), len(want), firstDiff(got, want))
			}
		})
	}
}

func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("got %q, want %q at %d", got[i], want[i], i)
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(got), len(want))
}

// TestSourceErrors: what cannot be read is said clearly, and a bad
// message is reported with its stream sequence and skipped.
func TestSourceErrors(t *testing.T) {
	server := startServer(t)
	_, js := connect(t, server)
	publishCSV(t, js, "EVENTS", 1, "type,ts,symbol,price\nstock,1,IBM,500\n")
	for _, tt := range []struct{ url, err string }{
		{"nats://127.0.0.1:1/EVENTS", "cannot reach the NATS server nats://127.0.0.1:1"},
		{streamURL(server, "NOPE"), "no stream NOPE on " + server + " (sase nats init creates one)"},
		{"nats://127.0.0.1:4222/", "a NATS URL names a server and a stream"},
		{streamURL(server, "EVENTS") + "?until=later", "until must be 'now'"},
		{streamURL(server, "EVENTS") + "?colour=red", `unknown LOAD option "colour"`},
	} {
		_, err := source.Open(context.Background(), tt.url)
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: error %v, want %q", tt.url, err, tt.err)
		}
	}

	// Messages 2..4: a bad one, a tick, a good one.
	for _, data := range []string{`{"type":"stock","ts":"soon"}`, `{"ts": 3}`, `{"type":"stock","ts":4,"symbol":"IBM","price":501}`} {
		if _, err := js.PublishMsg(context.Background(), &nats.Msg{Subject: "events.IBM", Data: []byte(data)}); err != nil {
			t.Fatal(err)
		}
	}
	errs := &testkit.SyncBuffer{}
	src, err := source.Open(context.Background(), streamURL(server, "EVENTS")+"?until=now", source.WithErrors(errs), source.WithName("ev"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []string
	err = src.Read(ctx, func(b []*event.Event) bool {
		for _, e := range b {
			got = append(got, fmt.Sprintf("%d@%d", e.Seq, e.TS))
		}
		return true
	})
	// Message 1 is CSV, which a jsonl LISTEN rejects too.
	if err != nil || !slices.Equal(got, []string{"4@4"}) {
		t.Errorf("%v: events %v, want [4@4]", err, got)
	}
	for _, want := range []string{"ev seq 1: ", "ev seq 2: "} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("errors lack %q:\n%s", want, errs)
		}
	}
	if st := src.Stats(); st.Rejected != 2 || st.Used+st.Read == 0 {
		t.Errorf("stats %+v, want 2 rejected", st)
	}
}

// TestReconnect restarts the server while a source reads: the source
// reconnects and goes on from the event it had reached, nothing lost or
// read twice.
func TestReconnect(t *testing.T) {
	dir := t.TempDir()
	s, err := natsserver.Start("127.0.0.1", 0, dir)
	if err != nil {
		t.Fatal(err)
	}
	server := s.ClientURL()
	nc, js := connect(t, server)
	publishCSV(t, js, "EVENTS", 1, "type,ts,symbol,price\nstock,1,IBM,1\nstock,2,IBM,2\n")
	src, err := source.Open(context.Background(), streamURL(server, "EVENTS"), source.WithFormat("csv"))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan int64, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	go src.Read(ctx, func(b []*event.Event) bool {
		for _, e := range b {
			got <- e.Seq
		}
		return true
	})
	want := int64(1)
	expect := func(n int64) {
		for ; want <= n; want++ {
			select {
			case seq := <-got:
				if seq != want {
					t.Fatalf("event seq %d, want %d", seq, want)
				}
			case <-ctx.Done():
				t.Fatalf("no event %d", want)
			}
		}
	}
	expect(2)
	s.Shutdown()
	s.WaitForShutdown()
	p, _ := strconv.Atoi(server[strings.LastIndexByte(server, ':')+1:])
	s, err = natsserver.Start("127.0.0.1", p, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	for end := time.Now().Add(testkit.Deadline); !nc.IsConnected(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the client did not reconnect")
		}
	}
	for i := range 3 {
		if _, err := natsio.Publish(ctx, js, strings.NewReader(fmt.Sprintf("type,ts,symbol,price\nstock,%d,IBM,3\n", 3+i)), natsio.PublishConfig{Key: "symbol"}); err != nil {
			t.Fatal(err)
		}
	}
	expect(5)
	src.Close()
}

// TestPublishRefused: a message the server refuses (its stream is full,
// discarding new ones) is counted in Publish's error with the reason,
// not passed unseen.
func TestPublishRefused(t *testing.T) {
	t.Parallel()
	server := startServer(t)
	_, js := connect(t, server)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FULL", Subjects: []string{natsio.EventsPrefix + ".*"}, MaxMsgs: 3, Discard: jetstream.DiscardNew}); err != nil {
		t.Fatal(err)
	}
	csv := walkCSV(5, 1)
	n, err := natsio.Publish(ctx, js, strings.NewReader(csv), natsio.PublishConfig{Key: "symbol"})
	if n != 5 || err == nil || !strings.Contains(err.Error(), "the server refused 2 of 5 messages: ") || !strings.Contains(err.Error(), "maximum messages exceeded") {
		t.Errorf("Publish = %d, %v", n, err)
	}
	st, err := js.Stream(ctx, "FULL")
	if err != nil {
		t.Fatal(err)
	}
	if got := st.CachedInfo().State.Msgs; got != 3 {
		t.Errorf("the stream holds %d messages, want 3", got)
	}
}
