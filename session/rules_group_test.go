package session_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/session"
	"github.com/sase-cep/sase/source"
)

// fakeGroup is a group's stream (LISTEN 'fakegroup://...') that records
// what the session asks it to run: each query alone, by name, and each
// rulebook as its rules' names with, for each, whether it holds the key.
type fakeGroup struct {
	source.Source
	mu      sync.Mutex
	runs    []string
	stops   []string
	windows []int64 // each query's alone, as compiled for a partition
}

var groups = struct {
	sync.Mutex
	byName map[string]*fakeGroup
}{byName: map[string]*fakeGroup{}}

func init() {
	// SET output names a registered sink; a group's queries publish
	// through their group, not through it.
	output.RegisterSink("nats", func(context.Context, *url.URL, output.SinkConfig) (output.Writer, error) {
		return nil, errors.New("a group's query opened SET output")
	})
	source.Register("fakegroup", func(ctx context.Context, u *url.URL, c source.Config) (source.Source, error) {
		g := &fakeGroup{}
		kv := map[string]string{} // WITH's options, as natsio's source reads them
		for k, v := range u.Query() {
			kv[k] = v[0]
		}
		var err error
		if c.Options, err = source.ParseOptions(kv); err != nil {
			return nil, err
		}
		g.Source, err = source.NewLineSource(u.String(), c, func(ctx context.Context, _ func(source.Producer) error) error {
			<-ctx.Done()
			return nil
		}, nil)
		groups.Lock()
		groups.byName[u.Host] = g
		groups.Unlock()
		return g, err
	})
}

func (g *fakeGroup) note(s string, list *[]string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	*list = append(*list, s)
}

func (g *fakeGroup) RunGroupQuery(ctx context.Context, query, _ string, _ func(string) bool,
	compile func(*event.Schema) (query.Query, output.Schema, int64, error)) error {
	_, _, w, err := compile(event.NewSchema())
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.windows = append(g.windows, w)
	g.mu.Unlock()
	g.note(query, &g.runs)
	<-ctx.Done()
	return nil
}

func (g *fakeGroup) RunGroupBook(ctx context.Context, rules []string, _ string, partitionedBy func(int, string) bool,
	compile func(int, *event.Schema) (query.Query, output.Schema, error),
	rulebook func(*event.Schema, []query.Rule) query.Rulebook, stop <-chan int) error {
	book := make([]string, len(rules))
	for i, r := range rules {
		if _, _, err := compile(i, event.NewSchema()); err != nil {
			return err
		}
		book[i] = r
		if partitionedBy(i, "symbol") {
			book[i] += "[symbol]"
		}
	}
	g.note("book "+strings.Join(book, " "), &g.runs)
	for {
		select {
		case <-ctx.Done():
			for { // the stops sent before the end
				select {
				case i := <-stop:
					g.note(rules[i], &g.stops)
				default:
					return nil
				}
			}
		case i := <-stop:
			g.note(rules[i], &g.stops)
		}
	}
}

// stopped waits until g's books have received n stops, and returns them;
// ran until g has been asked to run n queries or books.
func (g *fakeGroup) stopped(n int) []string { return g.await(&g.stops, n) }

func (g *fakeGroup) ran(n int) []string { return g.await(&g.runs, n) }

// await waits until list holds n entries (or a deadline), and returns it.
func (g *fakeGroup) await(list *[]string, n int) []string {
	for deadline := time.Now().Add(testkit.Deadline); ; time.Sleep(5 * time.Millisecond) {
		g.mu.Lock()
		got := slices.Clone(*list)
		g.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
	}
}

func (g *fakeGroup) GroupStats(string) source.GroupStats {
	return source.GroupStats{Group: "g", Status: "standby"}
}

func (g *fakeGroup) GroupSummary(string) string { return "0 matches stored" }

// TestGroupRules: a script's consecutive RULE statements on a group's
// stream start as one rulebook when the run of rules ends (at a statement
// that is not a rule, a rule on another stream, or the script's end);
// each rule is a query of its own, whose STOP QUERY stops it alone in its
// book, and the book ends with its last rule.
func TestGroupRules(t *testing.T) {
	const (
		keyed = "PATTERN SEQ(stock a, stock b) WHERE [symbol] AND b.price > a.price WITHIN 5"
		other = "PATTERN SEQ(stock a, stock b) WHERE b.price > a.price WITHIN 5"
	)
	for _, c := range []struct {
		name, script string
		runs         []string // on stream g (h's rule: q2 in the last)
		rules        []string // g's rules: each is sent to its book as STOP QUERY stops it (2, 1, 3)
	}{
		{"one run", "RULE a: " + keyed + "; RULE b: " + other + "; RULE c: " + keyed + ";",
			[]string{"book q1[symbol] q2 q3[symbol]"}, []string{"q1", "q2", "q3"}},
		{"a query ends the run", "RULE a: " + keyed + "; " + keyed + "; RULE c: " + other + ";",
			[]string{"book q1[symbol]", "book q3", "q2"}, []string{"q1", "q3"}},
		{"SHOW ends the run", "RULE a: " + keyed + "; RULE b: " + keyed + "; SHOW QUERIES; RULE c: " + keyed + ";",
			[]string{"book q1[symbol] q2[symbol]", "book q3[symbol]"}, []string{"q1", "q2", "q3"}},
		{"a rule on another stream ends the run", "RULE a: " + keyed + "; RULE x: PATTERN SEQ(stock a, stock b) FROM h WHERE [symbol] WITHIN 5; RULE b: " + keyed + ";",
			[]string{"book q1[symbol]", "book q3[symbol]"}, []string{"q1", "q3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			host := strings.ReplaceAll(c.name, " ", "-")
			stderr := &testkit.SyncBuffer{}
			s := session.New(&testkit.SyncBuffer{}, stderr)
			script := fmt.Sprintf("LISTEN 'fakegroup://%s/' AS g; LISTEN 'fakegroup://%s-h/' AS h; SET output = 'nats://x/M';\n%s\n", host, host, c.script)
			if err := s.Exec(context.Background(), &ast.Source{Name: "<test>", Text: script}); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			groups.Lock()
			g, h := groups.byName[host], groups.byName[host+"-h"]
			groups.Unlock()
			if !strings.Contains(stderr.String(), "query 1 (rule a) started on g, with the other instances of its group") {
				t.Errorf("stderr:\n%s", stderr)
			}
			runs := g.ran(len(c.runs))
			slices.Sort(runs)
			if !slices.Equal(runs, c.runs) {
				t.Errorf("ran %q, want %q", runs, c.runs)
			}
			// Each rule a query: STOP QUERY stops it alone; every query
			// stopped ends every book (its run returns).
			var want []string // g's rules in the order they are stopped
			for _, id := range []int{2, 1, 3} {
				if err := s.Exec(context.Background(), &ast.Source{Name: "<test>", Text: fmt.Sprintf("STOP QUERY %d;", id)}); err != nil {
					t.Fatalf("%v\n%s", err, stderr)
				}
				if name := fmt.Sprint("q", id); slices.Contains(c.rules, name) {
					want = append(want, name)
					g.stopped(len(want)) // each book records its stops in its own goroutine
				}
			}
			for _, q := range s.Queries() {
				if q.State != session.Stopped || q.Group != "standby" {
					t.Errorf("query %d: %s, group %q", q.ID, q.State, q.Group)
				}
			}
			if h := h.ran(0); strings.Contains(c.script, "FROM h") != slices.Equal(h, []string{"book q2[symbol]"}) {
				t.Errorf("ran on h: %q", h)
			}
			if stops := g.stopped(len(want)); !slices.Equal(stops, want) {
				t.Errorf("stops sent %q, want %q", stops, want)
			}
			if !strings.Contains(stderr.String(), "(query 2 stopped: 0 matches stored)") {
				t.Errorf("no summary of query 2:\n%s", stderr)
			}
		})
	}
}

// TestGroupQueryWindow: a query on a group's stream is a live stream's
// query: one event needs no WITHIN and its window is 0 (an owner acks an
// event once a later one has come), a longer pattern needs WITHIN, whose
// window an owner keeps its events unacked for, in the stream's ticks
// (WITHIN 5 s on a stream of milliseconds: 5000); without it the
// statement fails, as on any live stream, where a group once ran it with
// a window of 0 and acked events that a match still to come would read
// (lost on a takeover).
func TestGroupQueryWindow(t *testing.T) {
	stderr := &testkit.SyncBuffer{}
	s := session.New(&testkit.SyncBuffer{}, stderr)
	for _, c := range []struct {
		group, script string
		windows       []int64 // sorted
	}{
		{"window", "LISTEN 'fakegroup://window/' AS g; SET output = 'nats://x/M';" +
			"PATTERN stock a WHERE a.price > 99; PATTERN SEQ(stock a, stock b) WITHIN 7;", []int64{0, 7}},
		// A WITHIN with a unit, on a stream loaded with one, counts its ticks.
		{"unit", "LISTEN 'fakegroup://unit/' AS u WITH (time_unit = 'ms'); USE u;" +
			"PATTERN SEQ(stock a, stock b) WITHIN 5 s; USE g;", []int64{5000}},
	} {
		if err := s.Exec(context.Background(), &ast.Source{Name: "<test>", Text: c.script}); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		groups.Lock()
		g := groups.byName[c.group]
		groups.Unlock()
		g.ran(len(c.windows))
		g.mu.Lock()
		windows := slices.Sorted(slices.Values(g.windows))
		g.mu.Unlock()
		if !slices.Equal(windows, c.windows) {
			t.Errorf("%s: windows %v, want %v", c.group, windows, c.windows)
		}
	}
	for _, q := range []string{"PATTERN SEQ(stock a, stock b)", "RULE r: PATTERN SEQ(stock a, !(halt h), stock b)"} {
		err := s.Exec(context.Background(), &ast.Source{Name: "<test>", Text: q + ";"})
		if err == nil || !strings.Contains(stderr.String(), "a query on live stream g needs WITHIN") {
			t.Errorf("%s: %v\n%s", q, err, stderr)
		}
	}
}
