package natsio_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sase-cep/sase/natsio"
)

// TestSubjects: partitioned streams share one server, each on its own
// subjects (by default its name's); a stream asking for subjects another
// has is told which one and what to do; publishers and a group follow a
// stream's subjects.
func TestSubjects(t *testing.T) {
	natsio.Parallel(t)
	server := startServer(t)
	_, js := connect(t, server)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range []struct {
		name, subjects string
		partitions     int
		want           string // its Subjects, or the error's words
	}{
		{"EVENTS", "site1.ticks.*", partitions, "site1.ticks"},
		{"ORDERS", "", 4, "orders"},
		{"AUDIT", "site1.ticks", 1, "creating stream AUDIT: stream EVENTS already stores site1.ticks.* (a subject belongs to one stream of a server): give AUDIT other subjects, --subjects audit say"},
		{"AUDIT", "site1.>", 1, `--subjects "site1.>": want tokens joined by dots with no wildcard or space`},
		{"AUDIT", "a..b", 1, `--subjects "a..b": want tokens`},
	} {
		st, err := natsio.InitStream(ctx, js, c.name, c.partitions, "symbol", c.subjects)
		switch {
		case err != nil && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s on %q: %v, want %q", c.name, c.subjects, err, c.want)
		case err == nil && natsio.Subjects(st) != c.want:
			t.Errorf("%s on %q: subjects %q, want %q", c.name, c.subjects, natsio.Subjects(st), c.want)
		}
	}
	orders := "type,ts,symbol,price\nstock,1,A,1\nstock,2,B,2\nstock,3,C,3\n"
	if _, err := natsio.Publish(ctx, js, strings.NewReader(orders), natsio.PublishConfig{Key: "symbol", Stream: "ORDERS"}); err != nil {
		t.Fatal(err)
	}
	csv := groupCSV(3000, 3)
	if _, err := natsio.Publish(ctx, js, strings.NewReader(csv), natsio.PublishConfig{Key: "symbol", Stream: "EVENTS"}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"ORDERS": 3, "EVENTS": strings.Count(csv, "\n") - 1} {
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx, jetstream.WithSubjectFilter("*."+natsio.Subjects(st)))
		if err != nil {
			t.Fatal(err)
		}
		var stored int
		for _, n := range info.State.Subjects {
			stored += int(n)
		}
		if stored != want || info.State.Msgs != uint64(want) {
			t.Errorf("%s holds %d messages, %d on its partitions' subjects %v; want %d", name, info.State.Msgs, stored, info.State.Subjects, want)
		}
	}
	// A group's consumers filter the stream's own partitions' subjects.
	want := expected(t, csv)
	mctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	member(t, mctx, &wg, server, "m0")
	awaitMatches(t, js, csv, want)
	stop()
	wg.Wait()
}
