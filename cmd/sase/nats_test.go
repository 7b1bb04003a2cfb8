package main_test

import (
	"strings"
	"testing"

	"github.com/sase-cep/sase/natsio/natsserver"
)

// TestNATS runs sase nats init, publish and cat against a server in this
// process, and a script that LISTENs to the stream.
func TestNATS(t *testing.T) {
	s, err := natsserver.Start("127.0.0.1", 0, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	url := s.ClientURL()
	csv := "type,ts,symbol,price\nstock,1,IBM,10\nstock,2,SUN,20\nstock,3,IBM,15\nstock,4,IBM,30\n"
	for _, c := range []struct {
		stdin  string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"", []string{"nats", "init", url, "--stream", "EVENTS", "--partitions", "4", "--key", "symbol"}, 0, "", "stored in 4 partitions"},
		// IBM and SUN share a partition: two lines a message (a minute's
		// linger sends none early).
		{csv, []string{"nats", "publish", url + "/EVENTS", "--key", "symbol", "--batch", "2", "--linger", "1m", "-"}, 0, "", "published 4 events in 2 messages to EVENTS"},
		{"", []string{"nats", "cat", url, "--stream", "EVENTS"}, 0, "stock,1,IBM,10\nstock,2,SUN,20\nstock,3,IBM,15\nstock,4,IBM,30\n", ""},
		{"", []string{"--no-stocks", "--format", "csv", "-c", "LISTEN '" + url + "/EVENTS' AS ev FORMAT csv WITH (until = 'now'); PATTERN SEQ(stock a, stock b) WHERE [symbol] AND b.price > a.price WITHIN 5"},
			// seq: the message's stream seq << 12 | the line's index in it.
			0, "a,b\n4096,8192\n8192,8193\n4096,8193\n", "query 1 ended: 3 matches"},
		{"", []string{"nats", "cat", url, "--stream", "NOPE"}, 1, "", "no stream NOPE on " + url},
		{"", []string{"nats", "init", "--stream", "X"}, 2, "", "the server URL comes first"},
		{"", []string{"nats", "publish", url}, 2, "", "--stream is missing"},
		{csv, []string{"nats", "publish", url, "--stream", "NOPE", "-"}, 1, "", "no stream NOPE (sase nats init creates one)"},
		{"", []string{"nats", "serve"}, 1, "", "built without a NATS server"},
		{"", []string{"nats", "frobnicate"}, 2, "", "unknown command nats frobnicate"},
	} {
		r := run(t, c.stdin, c.args...)
		if r.code != c.code || r.stdout != c.stdout || !strings.Contains(r.stderr, c.stderr) {
			t.Errorf("sase %s: exit %d, stdout %q, stderr %q; want %d, %q, %q", strings.Join(c.args, " "), r.code, r.stdout, r.stderr, c.code, c.stdout, c.stderr)
		}
	}
}
