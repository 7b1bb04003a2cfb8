package natsio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/natsio"
	"github.com/sase-cep/sase/session"
)

// runScript runs a script in a new session to its end (its live queries
// included) and returns its stdout.
func runScript(t testing.TB, script string) string {
	t.Helper()
	stdout, stderr := &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
	s := session.New(stdout, stderr)
	s.Set("timing", "off")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := s.Exec(ctx, &ast.Source{Name: "<test>", Text: script}); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if err := s.Wait(ctx); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	return stdout.String()
}

// published reads every message of a matches stream: its lines, and
// the Msg-Ids seen more than once.
func published(t testing.TB, js jetstream.JetStream, name string) (lines []string, dupIDs []string) {
	t.Helper()
	return publishedOf(t, js, name, false)
}

// publishedOf is published; with byRule, each line is tagged with its
// subject's query (tagRule).
func publishedOf(t testing.TB, js jetstream.JetStream, name string, byRule bool) (lines []string, dupIDs []string) {
	t.Helper()
	seen := map[string]bool{}
	for seq, m := range storedMsgs(t, js, name) {
		if strings.HasPrefix(m.Subject, "sase_fence.") {
			continue // an owner's fence
		}
		id := m.Header.Get(jetstream.MsgIDHeader)
		if seen[id] {
			dupIDs = append(dupIDs, id)
		}
		seen[id] = true
		if m.Header.Get(natsio.HeaderPosition) == "" || !strings.HasPrefix(m.Subject, "matches.q") {
			t.Fatalf("match %d: subject %s, headers %v", seq, m.Subject, m.Header)
		}
		line := string(bytes.TrimSpace(m.Data))
		if byRule {
			line = tagRule(line, strings.Split(m.Subject, ".")[1])
		}
		lines = append(lines, line)
	}
	return lines, dupIDs
}

// tagRule adds a "rule" member to a match's JSON line: matches of several
// rules are compared as one multiset, each under its rule.
func tagRule(line, rule string) string {
	return `{"rule":"` + rule + `",` + strings.TrimPrefix(line, "{")
}

// storedMsgs yields every message stream holds, by sequence, as one
// ordered consumer delivers them: a request for each (GetMsg) was most
// of the package's CPU on streams of 20,000 events. A sequence missing
// up to the stream's last fails the test, as GetMsg would.
func storedMsgs(t testing.TB, js jetstream.JetStream, stream string) iter.Seq2[uint64, *jetstream.RawStreamMsg] {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	last := st.CachedInfo().State.LastSeq
	return func(yield func(uint64, *jetstream.RawStreamMsg) bool) {
		if last == 0 {
			return
		}
		c, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		for next := uint64(1); next <= last; {
			batch, err := c.Fetch(int(min(last-next+1, 1000)), jetstream.FetchMaxWait(testkit.Deadline))
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for m := range batch.Messages() {
				md, err := m.Metadata()
				if err != nil {
					t.Fatal(err)
				}
				if md.Sequence.Stream != next {
					t.Fatalf("stream %s: message %d, then %d: want every message up to %d", stream, next-1, md.Sequence.Stream, last)
				}
				got++
				raw := &jetstream.RawStreamMsg{Subject: m.Subject(), Sequence: next, Header: m.Headers(), Data: m.Data()}
				if next++; !yield(raw.Sequence, raw) {
					return
				}
			}
			if err := batch.Error(); err != nil || got == 0 {
				t.Fatalf("stream %s: read %d of %d messages: %v", stream, next-1, last, err)
			}
		}
	}
}

// renumber rewrites the "seq" keys of jsonl matches with seq (nil keeps
// them), and sorts them, one text per row: a file's matches (seqs from 0)
// compare with a stream's (seqs from its messages, fileSeqs).
func renumber(t testing.TB, lines []string, seq func(int64) int64) []string {
	t.Helper()
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		var row map[string]any
		dec := json.NewDecoder(strings.NewReader(l))
		dec.UseNumber()
		if err := dec.Decode(&row); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if seq != nil {
			setSeqs(row, seq)
		}
		b, _ := json.Marshal(row) // sorted keys: one text per row
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

func setSeqs(v any, seq func(int64) int64) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if n, ok := e.(json.Number); ok && k == "seq" {
				i, _ := n.Int64()
				x[k] = json.Number(fmt.Sprint(seq(i)))
				continue
			}
			setSeqs(e, seq)
		}
	case []any:
		for _, e := range x {
			setSeqs(e, seq)
		}
	}
}

// fileSeqs maps the seq of each event of csv loaded as a file (its row,
// from 0) to its seq in the stream it was published to (its message's
// stream sequence and its index there), by the row's text: the rows of
// the test streams are all different. A row not in the stream fails.
func fileSeqs(t testing.TB, js jetstream.JetStream, stream, csv string) func(int64) int64 {
	t.Helper()
	row := map[string]int64{}
	for i, l := range strings.Split(strings.TrimSpace(csv), "\n")[1:] {
		row[l] = int64(i)
	}
	seqs := make([]int64, len(row))
	for i := range seqs {
		seqs[i] = -1
	}
	for seq, m := range storedMsgs(t, js, stream) {
		for i, l := range strings.Split(strings.TrimSpace(string(m.Data)), "\n") {
			if r, ok := row[l]; ok {
				seqs[r] = natsio.EventSeq(int64(seq), i)
			}
		}
	}
	return func(s int64) int64 {
		if s < 0 || s >= int64(len(seqs)) || seqs[s] < 0 {
			t.Fatalf("event %d of the file is not in stream %s", s, stream)
		}
		return seqs[s]
	}
}

func lines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

// TestSessionSink runs a script that LISTENs on a NATS stream and
// publishes its matches to a matches stream: they are the script's
// matches on the file, each stored once, and a second run (a restart)
// stores none again.
func TestSessionSink(t *testing.T) {
	natsio.Parallel(t) // its own server
	server := startServer(t)
	_, js := connect(t, server)
	csv := walkCSV(2000, 11)
	publishCSV(t, js, "EVENTS", 1, csv)
	path := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	var qs strings.Builder
	for _, q := range queries[1:] { // W2's 100K matches would only slow this down
		qs.WriteString(q.text + ";\n")
	}
	want := renumber(t, lines(runScript(t, "SET format = jsonl; LOAD '"+path+"' AS ev;\n"+qs.String())), fileSeqs(t, js, "EVENTS", csv))

	stdout := runScript(t, "SET format = jsonl; LISTEN '"+streamURL(server, "EVENTS")+"' AS ev FORMAT csv WITH (until = 'now');\n"+qs.String())
	if got := renumber(t, lines(stdout), nil); !slices.Equal(got, want) {
		t.Errorf("stdout: %d matches over NATS, %d from the file: %s", len(got), len(want), firstDiff(got, want))
	}

	script := "LISTEN '" + streamURL(server, "EVENTS") + "' AS ev FORMAT csv WITH (until = 'now');\nSET output = '" + streamURL(server, "MATCHES") + "';\n" + qs.String()
	for run := range 2 {
		if out := runScript(t, script); out != "" {
			t.Errorf("run %d wrote to stdout with SET output: %q", run, out)
		}
		got, dups := published(t, js, "MATCHES")
		if len(dups) > 0 {
			t.Errorf("run %d: Msg-Ids stored twice: %v", run, dups[:min(3, len(dups))])
		}
		if got = renumber(t, got, nil); !slices.Equal(got, want) {
			t.Errorf("run %d: %d matches stored, %d from the file: %s", run, len(got), len(want), firstDiff(got, want))
		}
	}
}

// TestSetOutput: SET output takes a registered sink's URL or stdout, and
// a query on a group's stream needs a NATS one.
func TestSetOutput(t *testing.T) {
	natsio.Parallel(t) // its own server
	server := startServer(t)
	_, js := connect(t, server)
	publishCSV(t, js, "EVENTS", 2, "type,ts,symbol,price\nstock,1,IBM,500\n")
	for _, tt := range []struct{ stmts, err string }{
		{"SET output = 'kafka://x/M';", `output "kafka://x/M": not a sink URL (known: nats://)`},
		{"LISTEN '" + streamURL(server, "EVENTS") + "' AS ev; SET output = '" + streamURL(server, "M") + "'; PATTERN SEQ(stock a) WITHIN 5 RETURN a.price;", "RETURN a variable too"},
		{"SET output = 'nats://127.0.0.1:1/M'; SET output = 'stdout'; SHOW STREAMS;", ""},
		{"LISTEN '" + streamURL(server, "EVENTS") + "' AS ev WITH (group = 'g'); PATTERN SEQ(stock a) WITHIN 5;", "SET output = 'nats://host:port/MATCHES' first"},
		{"LISTEN '" + streamURL(server, "EVENTS") + "' AS ev WITH (group = 'g', until = 'now');", "a group's stream has no end"},
		{"LISTEN '" + streamURL(server, "EVENTS") + "' AS ev WITH (group = 'g'); SET output = 'nats://127.0.0.1:1/M'; PATTERN SEQ(stock a) WITHIN 5; EXPLAIN PATTERN SEQ(stock a) WITHIN 5;", "EXPLAIN needs a stream of this instance"},
	} {
		stderr := &testkit.SyncBuffer{}
		s := session.New(io.Discard, stderr)
		err := s.Exec(context.Background(), &ast.Source{Name: "<test>", Text: tt.stmts})
		if tt.err == "" && err != nil || tt.err != "" && !strings.Contains(stderr.String(), tt.err) {
			t.Errorf("%s: %v\n%s", tt.stmts, err, stderr)
		}
	}
}
