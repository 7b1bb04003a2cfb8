package serve_test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/natsio"
	"github.com/sase-cep/sase/natsio/natsserver"
	"github.com/sase-cep/sase/serve"
)

// TestGroupMetrics runs a query as the one instance of a NATS group on a
// stream of two partitions: /metrics has the group's partitions (both
// owned), each one's lag and pending acks as the server counts them for
// its consumer, and no replay or takeover (the instance is each
// partition's first owner).
func TestGroupMetrics(t *testing.T) {
	t.Parallel() // its own NATS server and sase server
	ns, err := natsserver.Start("127.0.0.1", 0, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	server := ns.ClientURL()
	ctx, cancel := context.WithTimeout(context.Background(), 2*testkit.Deadline)
	defer cancel()
	nc, js, err := natsio.Connect(ctx, server, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	const parts = 2
	st, err := natsio.InitStream(ctx, js, "EVENTS", parts, "symbol", "")
	if err != nil {
		t.Fatal(err)
	}
	// Per symbol, three rising prices (three matches) and an event past
	// the window: an owner acks a message once the window has passed its
	// events, so each partition keeps its end events unacked, one message
	// each (one line a message on a partitioned stream).
	var csv strings.Builder
	csv.WriteString("type,ts,symbol,price\n")
	ends := make([]int, parts)
	symbols := []string{"IBM", "SUN", "ORCL", "HP", "DELL"}
	for ts := 1; ts <= 3; ts++ {
		for _, s := range symbols {
			fmt.Fprintf(&csv, "stock,%d,%s,%d\n", ts, s, 10+ts)
		}
	}
	for _, s := range symbols {
		fmt.Fprintf(&csv, "end,1000,%s,0\n", s)
		ends[natsio.PartitionOf(s, parts)]++
	}
	if ends[0] == 0 || ends[1] == 0 {
		t.Fatalf("the symbols %v all go to one partition: %v", symbols, ends)
	}
	if _, err := natsio.Publish(ctx, js, strings.NewReader(csv.String()), natsio.PublishConfig{Key: "symbol", Stream: "EVENTS"}); err != nil {
		t.Fatal(err)
	}
	script := "LISTEN '" + server + "/EVENTS' AS ev FORMAT csv WITH (group = 'alerts');\n" +
		"SET output = '" + server + "/MATCHES';\n" +
		"PATTERN SEQ(stock a, stock b) WHERE [symbol] AND b.price > a.price WITHIN 20;\n"
	_, hs := start(t, serve.Config{Errors: io.Discard}, map[string]string{"group.sase": script})

	want := 3 * len(symbols)
	labels := []string{"query", "1", "stream", "ev", "group", "alerts"}
	part := func(p int) []string { return append(labels[:len(labels):len(labels)], "partition", strconv.Itoa(p)) }
	// Settled: every match stored, every stock message acked.
	var fams = scrape(t, hs)
	for deadline := time.Now().Add(testkit.Deadline); ; time.Sleep(20 * time.Millisecond) {
		fams = scrape(t, hs)
		matches, _ := lookup(fams, "sase_query_matches_total", "query", "1")
		settled := matches == float64(want)
		for p := range parts {
			acks, ok := lookup(fams, "sase_nats_group_pending_acks", part(p)...)
			settled = settled && ok && acks == float64(ends[p])
		}
		if settled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not settled: %d matches, pending acks want %v; /metrics:\n%s", int(matches), ends, do(t, "GET", hs.URL+"/metrics", "", "").body)
		}
	}
	value := func(name string, labels ...string) float64 {
		t.Helper()
		v, ok := lookup(fams, name, labels...)
		if !ok {
			t.Fatalf("no %s%v in /metrics", name, labels)
		}
		return v
	}
	for _, c := range []struct {
		name string
		want float64
	}{
		{"sase_nats_group_partitions_owned", parts},
		{"sase_nats_group_partitions", parts},
		{"sase_nats_group_replayed_messages_total", 0},
		{"sase_nats_group_takeovers_total", 0},
	} {
		if got := value(c.name, labels...); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	for p := range parts {
		// The server's own counts for the partition's consumer.
		cons, err := st.Consumer(ctx, "alerts_q1_"+strconv.Itoa(p))
		if err != nil {
			t.Fatal(err)
		}
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if lag := value("sase_nats_group_lag_messages", part(p)...); lag != float64(info.NumPending) || lag != 0 {
			t.Errorf("partition %d: lag %v, the server says %d pending, want 0", p, lag, info.NumPending)
		}
		if acks := value("sase_nats_group_pending_acks", part(p)...); acks != float64(info.NumAckPending) {
			t.Errorf("partition %d: %v pending acks, the server says %d", p, acks, info.NumAckPending)
		}
	}
}
