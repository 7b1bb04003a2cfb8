package main_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sase-cep/sase/natsio"
	"github.com/sase-cep/sase/natsio/natsserver"
)

// TestNATS runs sase nats init, publish and cat against a server in this
// process, and a script that LISTENs to the stream.
func TestNATS(t *testing.T) {
	t.Parallel() // its own files, ports and servers: it overlaps the README's waits
	s, err := natsserver.Start("127.0.0.1", 0, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	url := s.ClientURL()
	csv := "type,ts,symbol,price\nstock,1,IBM,10\nstock,2,SUN,20\nstock,3,IBM,15\nstock,4,IBM,30\n"
	file := filepath.Join(t.TempDir(), "walk.csv")
	if err := os.WriteFile(file, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stdin  string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"", []string{"nats", "init", url, "--stream", "EVENTS", "--partitions", "4", "--key", "symbol"}, 0, "", "publish on events.<key>, stored in 4 partitions"},
		// A second partitioned stream takes its own subjects.
		{"", []string{"nats", "init", url, "--stream", "ORDERS", "--partitions", "2", "--key", "symbol"}, 0, "", "publish on orders.<key>, stored in 2 partitions"},
		{"", []string{"nats", "init", url, "--stream", "AUDIT", "--subjects", "orders"}, 1, "", "stream ORDERS already stores orders.* (a subject belongs to one stream of a server): give AUDIT other subjects, --subjects audit say"},
		// IBM and SUN share a partition: two lines a message (a minute's
		// linger sends none early).
		{csv, []string{"nats", "publish", url + "/EVENTS", "--key", "symbol", "--batch", "2", "--linger", "1m", "-"}, 0, "", "published 4 events in 2 messages to EVENTS"},
		{"", []string{"nats", "cat", url, "--stream", "EVENTS"}, 0, "stock,1,IBM,10\nstock,2,SUN,20\nstock,3,IBM,15\nstock,4,IBM,30\n", ""},
		{"", []string{"--no-stocks", "--format", "csv", "-c", "LISTEN '" + url + "/EVENTS' AS ev FORMAT csv WITH (until = 'now'); PATTERN SEQ(stock a, stock b) WHERE [symbol] AND b.price > a.price WITHIN 5"},
			// seq: the message's stream seq << 12 | the line's index in it.
			0, "a,b\n4096,8192\n8192,8193\n4096,8193\n", "query 1 ended: 3 matches"},
		// A file published twice is stored once: its Msg-Ids are its
		// identity and line numbers (stdin's, above, are random).
		{"", []string{"nats", "publish", url + "/EVENTS", "--key", "symbol", file}, 0, "", "published 4 events"},
		{"", []string{"nats", "publish", url + "/EVENTS", "--key", "symbol", file}, 0, "", "published 4 events"},
		{"", []string{"nats", "cat", url, "--stream", "EVENTS"}, 0, strings.Repeat("stock,1,IBM,10\nstock,2,SUN,20\nstock,3,IBM,15\nstock,4,IBM,30\n", 2), ""},
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

// TestNATSPublishSignal: `nats publish` stopped by SIGINT or SIGTERM
// says how many lines the server acknowledged and exits 130.
func TestNATSPublishSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			s, err := natsserver.Start("127.0.0.1", 0, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Shutdown()
			url := s.ClientURL()
			if r := run(t, "", "nats", "init", url, "--stream", "EVENTS"); r.code != 0 {
				t.Fatal(r.stderr)
			}
			cmd := exec.Command(sase, "nats", "publish", url+"/EVENTS", "-")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			io.WriteString(stdin, "type,ts\nA,1\nA,2\nA,3\n") // the input stays open
			_, js, err := natsio.Connect(context.Background(), url, t.Name())
			if err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if st, err := js.Stream(context.Background(), "EVENTS"); err == nil && st.CachedInfo().State.Msgs > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("nothing published in 10 s")
				}
			}
			cmd.Process.Signal(sig)
			err = cmd.Wait()
			stdin.Close()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), "interrupted: 3 events in 1 messages acknowledged") {
				t.Errorf("exit %v, stderr %q; want 130 and the events acknowledged", err, stderr.String())
			}
		})
	}
}
