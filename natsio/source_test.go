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
	"github.com/sase-cep/sase/compiler"
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
// match as the seqs of its events (mapped by seq, if not nil), sorted.
func matches(t *testing.T, text string, stream *event.Stream, seq func(int64) int64) []string {
	t.Helper()
	q, err := sase.Compile(text, stream)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	_, err = q.Run(context.Background(), stream.All(), func(row []sase.Cell) bool {
		var b []byte
		add := func(s int64) {
			if seq != nil {
				s = seq(s)
			}
			b = strconv.AppendInt(append(b, ' '), s, 10)
		}
		for _, c := range row {
			if c.Event != nil {
				add(c.Event.Seq)
			}
			for _, e := range c.List {
				add(e.Seq)
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
// numbered by their message's stream sequence and their index in it,
// and every query finds the same matches in them: published in batches,
// one event a message, and both mixed.
func TestOneInstance(t *testing.T) {
	t.Parallel() // its trials have their own servers
	csv := walkCSV(3000, 7)
	rows := strings.SplitAfter(csv, "\n")
	header, rows := rows[0], rows[1:len(rows)-1]
	for _, c := range []struct {
		name    string
		publish func(t *testing.T, js jetstream.JetStream)
	}{
		{"batches", func(t *testing.T, js jetstream.JetStream) { publishBatched(t, js, "EVENTS", 1, csv, 0) }},
		{"one event a message", func(t *testing.T, js jetstream.JetStream) { publishBatched(t, js, "EVENTS", 1, csv, 1) }},
		// Publish's default on a partitioned stream is a line a message,
		// which keeps the input's order across the partitions.
		{"partitioned", func(t *testing.T, js jetstream.JetStream) {
			publishBatched(t, js, "EVENTS", 4, csv, 0)
			if st, err := js.Stream(context.Background(), "EVENTS"); err != nil || st.CachedInfo().State.Msgs != uint64(len(rows)) {
				t.Fatalf("%v: the default batch on a partitioned stream is not 1 line", err)
			}
		}},
		// Chunks of rows alternately as batches and as messages of one
		// event each that a plain NATS client publishes, and ticks.
		{"mixed", func(t *testing.T, js jetstream.JetStream) {
			ctx := context.Background()
			if _, err := natsio.InitStream(ctx, js, "EVENTS", 1, "symbol", ""); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(rows); i += 300 {
				chunk := rows[i:min(i+300, len(rows))]
				if i%600 == 0 {
					if _, err := natsio.Publish(ctx, js, strings.NewReader(header+strings.Join(chunk, "")), natsio.PublishConfig{Key: "symbol", Batch: 64}); err != nil {
						t.Fatal(err)
					}
					continue
				}
				// A tick (JSON, no CSV header) between them: counted, no event.
				if _, err := js.Publish(ctx, "events._", []byte(`{"ts": 1}`)); err != nil {
					t.Fatal(err)
				}
				for _, r := range chunk {
					m := nats.NewMsg("events.x")
					m.Header.Set(natsio.HeaderCSV, strings.TrimSuffix(header, "\n"))
					m.Data = []byte(strings.TrimSuffix(r, "\n"))
					if _, err := js.PublishMsg(ctx, m); err != nil {
						t.Fatal(err)
					}
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			natsio.Parallel(t)
			server := startServer(t)
			_, js := connect(t, server)
			c.publish(t, js)
			oneInstance(t, server, js, csv)
		})
	}
}

func oneInstance(t *testing.T, server string, js jetstream.JetStream, csv string) {
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
	if st := src.Stats(); st.Rejected > 0 {
		t.Errorf("%d lines rejected", st.Rejected)
	}
	seq := fileSeqs(t, js, "EVENTS", csv)
	batches := 0
	for i, e := range bus.Events {
		f := file.Events[i]
		if e.Seq != seq(f.Seq) || e.TS != f.TS || bus.Schema.Types[e.Type].Name != file.Schema.Types[f.Type].Name || fmt.Sprint(e.Attrs) != fmt.Sprint(f.Attrs) {
			t.Fatalf("event %d: %+v over NATS, %+v in the file (seq %d)", i, e, f, seq(f.Seq))
		}
		if _, index := natsio.SplitSeq(e.Seq); index > 0 {
			batches++
		}
	}
	t.Logf("%d of %d events in a batch after its first", batches, len(bus.Events))
	for _, q := range queries {
		t.Run(q.name, func(t *testing.T) {
			want := matches(t, q.text, file, seq)
			got := matches(t, q.text, bus, nil)
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
	natsio.Parallel(t) // its own server
	server := startServer(t)
	_, js := connect(t, server)
	publishCSV(t, js, "EVENTS", 1, "type,ts,symbol,price\nstock,1,IBM,500\n")
	for _, tt := range []struct{ url, err string }{
		{"nats://127.0.0.1:1/EVENTS", "cannot reach the NATS server nats://127.0.0.1:1"},
		{streamURL(server, "NOPE"), "no stream NOPE on " + server + " (sase nats init creates one)"},
		{"nats://127.0.0.1:4222/", "a NATS URL names a server and a stream"},
		{streamURL(server, "EVENTS") + "?until=later", "until must be 'now'"},
		{streamURL(server, "EVENTS") + "?colour=red", `unknown LOAD option "colour"`},
		{streamURL(server, "EVENTS") + "?group=g&slack=5", "slack and clock = 'wall' are for one instance"},
	} {
		_, err := source.Open(context.Background(), tt.url)
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: error %v, want %q", tt.url, err, tt.err)
		}
	}

	// Messages 2..4: a bad one, a tick, a good one; 5: a batch with a bad
	// line; 6: a batch of too many lines.
	good := func(ts int) string { return fmt.Sprintf(`{"type":"stock","ts":%d,"symbol":"IBM","price":501}`, ts) }
	for _, data := range []string{
		`{"type":"stock","ts":"soon"}`, `{"ts": 3}`, good(4),
		good(5) + "\n" + `{"type":"stock","ts":"soon"}` + "\n" + good(6),
		strings.Repeat(good(7)+"\n", natsio.MaxBatch+1),
	} {
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
	got, err := readSeqs(ctx, src)
	// Message 1 is CSV, which a jsonl LISTEN rejects too; message 3's
	// tick is the query's, with the message's seq.
	if want := []string{"3.0@3 tick", "4.0@4", "5.0@5", "5.2@6"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("%v: events %v, want %v", err, got, want)
	}
	for _, want := range []string{"ev seq 1: ", "ev seq 2: ", "ev seq 5 index 1: ", "ev seq 6: a message holds at most 4096 events, this one has 4097 lines (skipped: 4097 lines rejected)"} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("errors lack %q:\n%s", want, errs)
		}
	}
	// The skipped message's lines are read and rejected: the totals add up.
	if st := src.Stats(); st.Rejected != 3+natsio.MaxBatch+1 || st.Read != st.Used+st.Rejected+st.Late {
		t.Errorf("stats %+v, want %d rejected, and read = used + rejected + late", st, 3+natsio.MaxBatch+1)
	}
}

// readSeqs reads src to its end: its events as "msg.index@ts", a tick's
// with " tick".
func readSeqs(ctx context.Context, src source.Source) ([]string, error) {
	var got []string
	err := src.Read(ctx, func(b []*event.Event) bool {
		for _, e := range b {
			msg, index := natsio.SplitSeq(e.Seq)
			got = append(got, fmt.Sprintf("%d.%d@%d", msg, index, e.TS))
			if e.IsTick() {
				got[len(got)-1] += " tick"
			}
		}
		return true
	})
	return got, err
}

// TestSourceCSVNoHeader: a CSV message without its Sase-Csv-Header is
// said to lack it, at its seq, and skipped, its lines counted rejected;
// the stream reads on.
func TestSourceCSVNoHeader(t *testing.T) {
	natsio.Parallel(t) // its own server
	server, js, ctx := oneStream(t)
	bare := &nats.Msg{Subject: "events.IBM", Data: []byte("stock,1,IBM,500\nstock,2,IBM,501")}
	headed := &nats.Msg{Subject: "events.IBM", Header: nats.Header{natsio.HeaderCSV: {"type,ts,symbol,price"}}, Data: []byte("stock,3,IBM,502")}
	for _, m := range []*nats.Msg{bare, headed, bare, headed} {
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	errs := &testkit.SyncBuffer{}
	src, err := source.Open(ctx, streamURL(server, "EVENTS")+"?until=now", source.WithErrors(errs), source.WithName("ev"), source.WithFormat("csv"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readSeqs(ctx, src)
	if want := []string{"2.0@3", "4.0@3"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("%v: events %v, want %v", err, got, want)
	}
	const note = "ev seq %d: a CSV message carries its header row in its Sase-Csv-Header header, and this one has none (skipped: 2 lines rejected)\n"
	if want := fmt.Sprintf(note, 1) + fmt.Sprintf(note, 3); errs.String() != want {
		t.Errorf("errors:\n%s\nwant:\n%s", errs, want)
	}
	if st := src.Stats(); st.Rejected != 4 || st.Read != 6 || st.Used != 2 {
		t.Errorf("stats %+v, want 6 read, 2 used, 4 rejected", st)
	}
}

// TestReconnect restarts the server while a source reads: the source
// reconnects and goes on from the event it had reached, nothing lost or
// read twice. It does not run in parallel: the port it restarts the
// server on would be free for another test's server meanwhile.
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
	// The first two events are one message's; each later one its own.
	want := []int64{natsio.EventSeq(1, 0), natsio.EventSeq(1, 1), natsio.EventSeq(2, 0), natsio.EventSeq(3, 0), natsio.EventSeq(4, 0)}
	next := 0
	expect := func(n int) {
		for ; next < n; next++ {
			select {
			case seq := <-got:
				if seq != want[next] {
					t.Fatalf("event seq %d, want %d", seq, want[next])
				}
			case <-ctx.Done():
				t.Fatalf("no event %d", want[next])
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
	natsio.Parallel(t)
	server := startServer(t)
	_, js := connect(t, server)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FULL", Subjects: []string{natsio.EventsPrefix + ".*"}, MaxMsgs: 3, Discard: jetstream.DiscardNew}); err != nil {
		t.Fatal(err)
	}
	csv := walkCSV(5, 1)
	n, err := natsio.Publish(ctx, js, strings.NewReader(csv), natsio.PublishConfig{Key: "symbol", Batch: 1})
	if n.Messages != 5 || err == nil || !strings.Contains(err.Error(), "the server refused 2 of 5 messages (2 of 5 events): ") || !strings.Contains(err.Error(), "maximum messages exceeded") {
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

// TestTickReleasesMatch: a tick message is the query's punctuation, with
// its message's seq: a match waiting on a negated end comes out at the
// tick, with no later event, in either format.
func TestTickReleasesMatch(t *testing.T) {
	t.Parallel() // its own server
	for _, c := range []struct{ format, events string }{
		{"csv", "type,ts,symbol,price\nstock,1,IBM,500\nstock,2,IBM,510\n"},
		{"jsonl", `{"type":"stock","ts":1,"symbol":"IBM","price":500}` + "\n" + `{"type":"stock","ts":2,"symbol":"IBM","price":510}` + "\n"},
	} {
		t.Run(c.format, func(t *testing.T) {
			natsio.Parallel(t)
			server, js, ctx := oneStream(t)
			if _, err := natsio.Publish(ctx, js, strings.NewReader(c.events), natsio.PublishConfig{Key: "symbol", Format: c.format}); err != nil {
				t.Fatal(err)
			}
			src, err := source.Open(ctx, streamURL(server, "EVENTS"), source.WithFormat(c.format))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			var q natsio.Compiled
			src.Schema(func(sc *event.Schema) { q, err = compileOn(sc, queries[1].text, 20) })
			if err != nil {
				t.Fatal(err)
			}
			seen, rows := make(chan *event.Event, 16), make(chan []int64, 16)
			events := func(yield func(*event.Event) bool) {
				src.Read(ctx, func(b []*event.Event) bool {
					for _, e := range b {
						seen <- e
						if !yield(e) {
							return false
						}
					}
					return true
				})
			}
			go compiler.Facade(q.Query).Run(ctx, events, func(row []sase.Cell) bool {
				rows <- []int64{row[0].Event.Seq, row[1].Event.Seq}
				return true
			})
			next := func() *event.Event {
				select {
				case e := <-seen:
					return e
				case <-ctx.Done():
					t.Fatal("no event")
					return nil
				}
			}
			for i := range 2 {
				if e := next(); e.IsTick() || e.Seq != natsio.EventSeq(1, i) {
					t.Fatalf("item %d: %+v, want the batch's event %d", i, e, i)
				}
			}
			select {
			case r := <-rows:
				t.Fatalf("match %v before its window closed", r)
			case <-time.After(200 * time.Millisecond):
			}
			if _, err := js.Publish(ctx, "events._", []byte(`{"ts": 100}`)); err != nil {
				t.Fatal(err)
			}
			if e := next(); !e.IsTick() || e.TS != 100 || e.Seq != natsio.EventSeq(2, 0) {
				t.Fatalf("after the tick message: %+v, want a tick at 100 with seq %d", e, natsio.EventSeq(2, 0))
			}
			select {
			case r := <-rows:
				if want := []int64{natsio.EventSeq(1, 0), natsio.EventSeq(1, 1)}; !slices.Equal(r, want) {
					t.Errorf("match %v, want %v", r, want)
				}
			case <-ctx.Done():
				t.Fatal("the tick did not release the match")
			}
		})
	}
}

// TestTickBeforeHeader: a tick that comes before any CSV message (a
// replay may start at one) moves the stream's time all the same: the
// event below it is late, as it was when the tick came after a header.
func TestTickBeforeHeader(t *testing.T) {
	natsio.Parallel(t)
	server, js, ctx := oneStream(t)
	if _, err := js.Publish(ctx, "events._", []byte(`{"ts": 100}`)); err != nil {
		t.Fatal(err)
	}
	for _, ts := range []int{1, 200} {
		if _, err := natsio.Publish(ctx, js, strings.NewReader(fmt.Sprintf("type,ts,symbol,price\nstock,%d,IBM,500\n", ts)), natsio.PublishConfig{Key: "symbol"}); err != nil {
			t.Fatal(err)
		}
	}
	src, err := source.Open(ctx, streamURL(server, "EVENTS")+"?until=now", source.WithFormat("csv"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readSeqs(ctx, src)
	if want := []string{"1.0@100 tick", "3.0@200"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("%v: read %v, want %v", err, got, want)
	}
	if st := src.Stats(); st.Late != 1 || st.Rejected != 0 {
		t.Errorf("stats %+v, want 1 late, none rejected", st)
	}
}
