package natsio_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/compiler"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/natsio"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/session"
)

// bookRules are the rules a book's failover members run, each holding
// the key (one book in each partition): the negated end, whose matches
// wait on their window; a drop; and a rule without a window, which holds
// every event unacked, so that a takeover replays the partition whole.
var bookRules = []struct {
	name, text string
	window     int64
}{
	{"q1", groupQuery, 20},
	{"q2", "PATTERN SEQ(stock a, stock b) WHERE [symbol] AND b.price < a.price - 2 WITHIN 20", 20},
	{"q3", "PATTERN SEQ(halt a, end b) WHERE [symbol]", math.MaxInt64},
}

// bookConfig is groupConfig running bookRules as the book q1-q3.
func bookConfig(server, member string) natsio.GroupConfig {
	cfg := groupConfig(server, member)
	cfg.Query, cfg.Compile = "q1-q3", nil
	cfg.Book = &natsio.Book{Compile: compileBook}
	for _, r := range bookRules {
		cfg.Book.Rules = append(cfg.Book.Rules, &natsio.BookRule{Name: r.name})
	}
	return cfg
}

func compileBook(sc *event.Schema) (query.Rulebook, []natsio.Compiled, error) {
	var rules []query.Rule
	var cs []natsio.Compiled
	for _, r := range bookRules {
		c, err := compileOn(sc, r.text, r.window)
		if err != nil {
			return nil, nil, err
		}
		rules, cs = append(rules, query.Rule{Name: r.name, Query: c.Query}), append(cs, c)
	}
	return compiler.Compiler{}.Rulebook(sc, rules), cs, nil
}

// expectedByRule is each rule's matches on csv loaded, run alone, tagged
// with the rule's name.
func expectedByRule(t testing.TB, csv string, names, texts []string) []string {
	var want []string
	for i, text := range texts {
		for _, l := range expectedOf(t, csv, text) {
			want = append(want, tagRule(l, names[i]))
		}
	}
	return want
}

// bookMembers run bookRules as one book.
var bookMembers = members{env: []string{childBook + "=1"}, byRule: true, heldRules: 2, expected: func(t testing.TB, csv string) []string {
	var names, texts []string
	for _, r := range bookRules {
		names, texts = append(names, r.name), append(texts, r.text)
	}
	return expectedByRule(t, csv, names, texts)
}}

// TestGroupBookFailover runs a rulebook on two members over a partitioned
// stream and hits one mid-stream: killed, or stopped by itself between
// its ownership check and publishing matches of two rules at least (the
// matches stream's duplicate window shorter than the pause, so that only
// the book's fence keeps what it holds of each rule from being stored). Each rule's matches
// stored are, as a multiset with none twice, those it finds alone on the
// loaded stream.
func TestGroupBookFailover(t *testing.T) {
	t.Parallel() // its trials have their own servers
	t.Run("kill", func(t *testing.T) {
		natsio.Parallel(t)
		failoverOf(t, 30, false, nil, kill, bookMembers)
	})
	t.Run("held", func(t *testing.T) {
		natsio.Parallel(t)
		dup := time.Second
		failoverOf(t, 31, false, &dup, held, bookMembers)
	})
}

// TestGroupBookScript runs one script of four rules in two sessions, as
// two instances of a group: two rules hold the stream's key and one does
// not, and STOP QUERY stops the fourth (keyed) in both before any event.
// The keyed rules run as one book in each partition, the other as its own
// on the whole stream; each running rule's matches are its own alone, the
// stopped rule's none, and SHOW QUERIES lists each rule.
func TestGroupBookScript(t *testing.T) {
	natsio.Parallel(t)
	server := startServer(t)
	_, js := connect(t, server)
	csv := groupCSV(3000, 6)
	if _, err := natsio.InitStream(context.Background(), js, "EVENTS", partitions, "symbol", ""); err != nil {
		t.Fatal(err)
	}
	texts := []string{
		groupQuery,
		"PATTERN SEQ(stock a, stock b) WHERE [symbol] AND b.price < a.price - 2 WITHIN 20",
		"PATTERN SEQ(stock a, stock b) WHERE b.price > a.price + 8 WITHIN 3",
		"PATTERN SEQ(stock a, halt b) WHERE [symbol] WITHIN 20",
	}
	want := expectedByRule(t, csv, []string{"q1", "q2", "q3"}, texts[:3])
	script := "LISTEN '" + streamURL(server, "EVENTS") + "' AS ev FORMAT csv WITH (group = 'alerts');\n" +
		"SET output = '" + streamURL(server, "MATCHES") + "';\n"
	for i, text := range texts {
		script += fmt.Sprintf("RULE r%d: %s;\n", i+1, text)
	}
	script += "STOP QUERY 4;\n"
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var logs [2]*testkit.SyncBuffer
	var sessions [2]*session.Session
	for i := range 2 {
		logs[i] = &testkit.SyncBuffer{}
		s := session.New(&testkit.SyncBuffer{}, logs[i])
		sessions[i] = s
		if err := s.Exec(ctx, &ast.Source{Name: "<test>", Text: script}); err != nil {
			t.Fatalf("%v\n%s", err, logs[i])
		}
		wg.Go(func() {
			if err := s.Wait(ctx); err != context.Canceled {
				t.Errorf("Wait: %v\n%s", err, logs[i])
			}
		})
	}
	for _, l := range logs {
		for _, note := range []string{
			"query 1 (rule r1) started on ev, with the other instances of its group",
			"(query 4 stopped: 0 matches stored, 0 events read)",
		} {
			if !strings.Contains(l.String(), note) {
				t.Errorf("no note %q:\n%s", note, l)
			}
		}
	}
	// One event a message: the unkeyed rule reads the stream whole, in ts
	// order (TestGroupGlobal).
	publishBatched(t, js, "EVENTS", partitions, csv, 1)
	awaitMatchesOf(t, js, csv, want, true)
	// The keyed rules' book in each partition, the other rule on its own.
	for _, name := range []string{"alerts_q1-q4_0", "alerts_q3_global"} {
		if _, err := js.Consumer(ctx, "EVENTS", name); err != nil {
			t.Errorf("consumer %s: %v", name, err)
		}
	}
	checkRuleQueries(t, sessions[:], []int{
		len(expectedOf(t, csv, texts[0])), len(expectedOf(t, csv, texts[1])), len(expectedOf(t, csv, texts[2])), 0})
	cancel()
	wg.Wait()
	if t.Failed() {
		t.Logf("the instances' notes:\n%s\n%s", logs[0], logs[1])
	}
}

// ruleGroup is a book's rule's group column in SHOW QUERIES.
var ruleGroup = regexp.MustCompile(`^(standby|partitions (?:[0-7]( [0-7])*|global) of (8|1), lag \d+, \d+ pending acks), \d+ replayed \(messages\)$`)

// checkRuleQueries: SHOW QUERIES lists each rule with its state (the last
// stopped), its group column, and the matches the sessions stored of it,
// together matches[i].
func checkRuleQueries(t *testing.T, sessions []*session.Session, matches []int) {
	t.Helper()
	var problems []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		problems = problems[:0]
		for i, want := range matches {
			var stored int64
			for _, s := range sessions {
				info := s.Queries()[i]
				stored += info.Matches
				state := session.Running
				if want == 0 {
					state = session.Stopped
				}
				if info.State != state || !ruleGroup.MatchString(info.Group) || !strings.HasPrefix(info.Text, "RULE r") {
					problems = append(problems, fmt.Sprintf("query %d: %s, group %q, text %q", info.ID, info.State, info.Group, info.Text))
				}
			}
			if stored != int64(want) {
				problems = append(problems, fmt.Sprintf("query %d: the sessions list %d matches stored, want %d", i+1, stored, want))
			}
		}
		if len(problems) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, p := range slices.Compact(problems) {
		t.Error(p)
	}
}

// TestGroupBookAsAlone: each rule of a book publishes what it publishes
// as a group query of its own: the same messages, subject, Msg-Id,
// position and row each (a replay's floor is a rule's position, whether
// the owner before ran it in a book or alone).
func TestGroupBookAsAlone(t *testing.T) {
	natsio.Parallel(t)
	csv := groupCSV(3000, 9)
	want := len(bookMembers.expected(t, csv))
	run := func(cfgs ...natsio.GroupConfig) []string {
		server := startServer(t)
		_, js := connect(t, server)
		publishCSV(t, js, "EVENTS", partitions, csv)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		defer func() {
			cancel()
			wg.Wait()
		}()
		for _, cfg := range cfgs {
			cfg.Server = server
			wg.Go(func() {
				if err := natsio.RunGroup(ctx, cfg); err != nil {
					t.Error(err)
				}
			})
		}
		for deadline := time.Now().Add(testkit.Deadline); stored(t, js) < uint64(want); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d matches stored, want %d", stored(t, js), want)
			}
		}
		var msgs []string
		for _, m := range storedMsgs(t, js, "MATCHES") {
			if !strings.HasPrefix(m.Subject, "sase_fence.") {
				msgs = append(msgs, fmt.Sprintf("%s %s %s %s", m.Subject, m.Header.Get(jetstream.MsgIDHeader), m.Header.Get(natsio.HeaderPosition), m.Data))
			}
		}
		slices.Sort(msgs)
		return msgs
	}
	var alone []natsio.GroupConfig
	for _, r := range bookRules {
		cfg := groupConfig("", "m")
		cfg.Query = r.name
		cfg.Compile = func(sc *event.Schema) (natsio.Compiled, error) { return compileOn(sc, r.text, r.window) }
		alone = append(alone, cfg)
	}
	book, each := run(bookConfig("", "m")), run(alone...)
	if len(book) != want || !slices.Equal(book, each) {
		missing, extra := diff(each, book)
		t.Errorf("the book published %d messages, the rules alone %d (want %d): %d only alone %q, %d only in the book %q",
			len(book), len(each), want, len(missing), missing[:min(2, len(missing))], len(extra), extra[:min(2, len(extra))])
	}
}
