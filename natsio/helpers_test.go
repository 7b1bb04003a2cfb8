package natsio_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sase-cep/sase/natsio"
	"github.com/sase-cep/sase/natsio/natsserver"
)

// startServer runs a NATS server with JetStream for the test, on
// 127.0.0.1 and a free port, and returns its URL.
func startServer(t testing.TB) string {
	t.Helper()
	s, err := natsserver.Start("127.0.0.1", 0, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s.ClientURL()
}

// connect returns a JetStream context on server, closed at the test's end.
func connect(t testing.TB, server string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, js, err := natsio.Connect(context.Background(), server, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, js
}

// symbols are walkCSV's: enough for each partition of eight to have some.
var symbols = []string{"IBM", "SUN", "ORCL", "HP", "DELL", "SAP", "ACME", "INTC", "AMD", "ARM", "TI", "NXP"}

// walkCSV is a random walk of stock prices per symbol, with a halt event
// now and then (for negations): n events, one per tick.
func walkCSV(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, seed))
	price := map[string]int{}
	for _, s := range symbols {
		price[s] = 490 + r.IntN(20)
	}
	var b strings.Builder
	b.WriteString("type,ts,symbol,price\n")
	for i := range n {
		s := symbols[r.IntN(len(symbols))]
		if r.IntN(20) == 0 {
			fmt.Fprintf(&b, "halt,%d,%s,0\n", i, s)
			continue
		}
		price[s] += r.IntN(7) - 3
		fmt.Fprintf(&b, "stock,%d,%s,%d\n", i, s, price[s])
	}
	return b.String()
}

// publishCSV creates stream name (partitions of it) and publishes csv to
// it, keyed by symbol, in batches.
func publishCSV(t testing.TB, js jetstream.JetStream, name string, partitions int, csv string) {
	t.Helper()
	publishBatched(t, js, name, partitions, csv, 0)
}

// publishBatched is publishCSV with batch lines a message at most
// (0: Publish's default).
func publishBatched(t testing.TB, js jetstream.JetStream, name string, partitions int, csv string, batch int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := natsio.InitStream(ctx, js, name, partitions, "symbol", ""); err != nil {
		t.Fatal(err)
	}
	n, err := natsio.Publish(ctx, js, strings.NewReader(csv), natsio.PublishConfig{Key: "symbol", Batch: batch, Stream: name})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(strings.Count(csv, "\n") - 1); n.Events != want || batch == 1 && n.Messages != want {
		t.Fatalf("published %d events in %d messages, want %d", n.Events, n.Messages, want)
	}
}

// oneStream starts a server holding stream EVENTS, of one partition
// keyed by symbol; ctx ends with the test, or after 20 s.
func oneStream(t testing.TB) (server string, js jetstream.JetStream, ctx context.Context) {
	t.Helper()
	server = startServer(t)
	_, js = connect(t, server)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	if _, err := natsio.InitStream(ctx, js, "EVENTS", 1, "symbol", ""); err != nil {
		t.Fatal(err)
	}
	return server, js, ctx
}

// streamURL is nats://host:port/name.
func streamURL(server, name string) string { return server + "/" + name }

// TestPartitionOf: the partition the publisher computes for a key is the
// one the stream's subject transform stores it in, for many keys.
func TestPartitionOf(t *testing.T) {
	natsio.Parallel(t)
	server := startServer(t)
	_, js := connect(t, server)
	ctx := context.Background()
	const parts = 13
	_, err := natsio.InitStream(ctx, js, "EVENTS", parts, "symbol", "")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var keys []string
	for i := range 1500 {
		k := fmt.Sprintf("k%d", i)
		if i%3 == 0 { // longer, and with every byte value a token may hold
			b := make([]byte, 1+r.IntN(40))
			for j := range b {
				b[j] = byte(33 + r.IntN(94))
			}
			k = natsio.SubjectToken(string(b))
		}
		keys = append(keys, k)
		js.PublishAsync(natsio.EventsPrefix+"."+k, []byte(k))
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(20 * time.Second):
		t.Fatal("not stored in 20 s")
	}
	stored := 0
	for seq, m := range storedMsgs(t, js, "EVENTS") {
		if seq > uint64(len(keys)) {
			t.Fatalf("message %d: only %d were published", seq, len(keys))
		}
		stored++
		k := keys[seq-1]
		if want := fmt.Sprintf("%d.%s", natsio.PartitionOf(k, parts), natsio.EventsPrefix); string(m.Data) != k || m.Subject != want {
			t.Fatalf("key %q (message %q) stored on %s, PartitionOf says %s", k, m.Data, m.Subject, want)
		}
	}
	if stored != len(keys) {
		t.Fatalf("%d messages stored, %d published", stored, len(keys))
	}
}
