package session_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/internal/teststream"
	"github.com/sase-cep/sase/session"
	"github.com/sase-cep/sase/source"
)

// The checks of an INTO query, each with its position and caret.
func TestIntoErrors(t *testing.T) {
	dir := t.TempDir()
	ms := filepath.Join(dir, "ms.csv")
	if err := os.WriteFile(ms, []byte("type,ts,x\nA,1,1\nA,2,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const setup = "PATTERN stock1 a RETURN a.price AS price INTO p1;\n" +
		"PATTERN p1 x FROM p1 RETURN x.price AS price INTO p2;\n"
	tests := []struct{ name, stmt, want string }{
		{"a whole event", "PATTERN SEQ(stock1 a, stock2 b) WITHIN 5 RETURN a.price, b INTO d;", `
ERROR: <test>:3:58: column b is a whole event; INTO needs scalar columns (an attribute, an expression or an aggregate)
    PATTERN SEQ(stock1 a, stock2 b) WITHIN 5 RETURN a.price, b INTO d;
                                                             ^`},
		{"a closure list", "PATTERN SEQ(stock1 a, stock2+ b[], stock3 c) WITHIN 5\nRETURN b AS run, c.price INTO d;", `
ERROR: <test>:4:8: column run is a closure list; INTO needs scalar columns (an attribute, an expression or an aggregate)
    RETURN b AS run, c.price INTO d;
           ^`},
		{"a cycle", "PATTERN p2 y FROM p2 RETURN y.price AS price INTO p1;", `
ERROR: <test>:3:51: INTO p1 makes a cycle: p1 -> p2 -> p1 (a query may not write into a stream it reads, directly or through derived streams)
    PATTERN p2 y FROM p2 RETURN y.price AS price INTO p1;
                                                      ^`},
		{"into itself", "PATTERN p1 y FROM p1 RETURN y.price AS price INTO p1;", `
ERROR: <test>:3:51: INTO p1 makes a cycle: p1 -> p1 (a query may not write into a stream it reads, directly or through derived streams)
    PATTERN p1 y FROM p1 RETURN y.price AS price INTO p1;
                                                      ^`},
		{"a loaded stream", "PATTERN stock1 a RETURN a.price AS price INTO stocks;", `
ERROR: <test>:3:47: stocks is a loaded stream, not one made by INTO: INTO needs a new name or a derived stream's
    PATTERN stock1 a RETURN a.price AS price INTO stocks;
                                                  ^`},
		{"time units differ", "LOAD '" + ms + "' AS t WITH (time_unit = 'ms');\nPATTERN A a FROM t RETURN a.x AS price INTO p1;", `
ERROR: <test>:4:45: p1 has no time unit but t has time unit ms: a derived stream's producers share one
    PATTERN A a FROM t RETURN a.x AS price INTO p1;
                                                ^`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, stderr := newSession(t)
			if err := exec(t, s, setup+tt.stmt); err == nil {
				t.Fatal("no error")
			}
			got := stderr.String()
			if i := strings.Index(got, "ERROR: "); i >= 0 {
				got = got[i:]
			}
			if want := strings.TrimPrefix(tt.want, "\n") + "\n"; got != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// A live derived stream and a loaded one do not mix, and a live one takes
// its producers before its events flow.
func TestIntoLiveErrors(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	stdout, stderr := &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
	s := session.New(stdout, stderr, session.WithStdin(pr), session.Interactive(),
		session.WithBuiltinStream(source.GenerateStocks("stocks", source.DefaultStockConfig())))
	s.Set("timing", "off")
	for _, stmt := range []string{
		"SET format = csv;",
		"PATTERN stock1 a FROM stocks RETURN a.price AS x INTO loaded;",
		"LOAD '-' AS s;",
		"PATTERN A a FROM s WITHIN 1 RETURN a.x AS x INTO d;",
		"PATTERN d e FROM d WITHIN 1 RETURN e.x;",
	} {
		if err := exec(t, s, stmt); err != nil {
			t.Fatalf("%s: %v\n%s", stmt, err, stderr)
		}
	}
	io.WriteString(pw, "type,ts,x\nA,1,7\nA,2,8\n")
	testkit.WaitFor(t, stdout, "[2] 7\n")
	for _, tt := range []struct{ stmt, want string }{
		{"PATTERN A a FROM s WITHIN 1 RETURN a.x AS x INTO loaded;", `ERROR: <test>:1:50: loaded is a loaded derived stream; a query over the live stream s cannot write into it
    PATTERN A a FROM s WITHIN 1 RETURN a.x AS x INTO loaded;
                                                     ^
`},
		{"PATTERN stock1 a FROM stocks RETURN a.price AS x INTO d;", `ERROR: <test>:1:55: d is a live derived stream; a query over the loaded stream stocks cannot write into it
    PATTERN stock1 a FROM stocks RETURN a.price AS x INTO d;
                                                          ^
`},
		{"PATTERN A a FROM s WITHIN 1 RETURN a.x + 1 AS x INTO d;", `ERROR: <test>:1:54: the live derived stream d has started: a query writes into it only before its first events (in a script, live streams start at its end)
    PATTERN A a FROM s WITHIN 1 RETURN a.x + 1 AS x INTO d;
                                                         ^
`},
	} {
		before := len(stderr.String())
		if err := exec(t, s, tt.stmt); err == nil {
			t.Errorf("%s: no error", tt.stmt)
		}
		if got := stderr.String()[before:]; got != tt.want {
			t.Errorf("stderr:\n%s\nwant:\n%s", got, tt.want)
		}
	}
	pw.Close()
	testkit.WaitFor(t, stderr, "(stream d ended: 2 lines read, 2 events used, 0 late, 0 lines rejected)")
}

// chain is a three-level alert with two producers into its first level:
// live, every query needs a window.
const chain = `SET format = jsonl;
PATTERN SEQ(ANY(stock1, stock2, stock3) a, ANY(stock1, stock2, stock3) b)
  WHERE [symbol] AND b.price >= a.price + 90 WITHIN 10
  RETURN 'jump' AS kind, b.symbol AS symbol, b.price - a.price AS size INTO spikes;
PATTERN SEQ(stock4 a, !stock4 n) WHERE a.price >= 99 AND n.price >= a.price WITHIN 50
  RETURN 'top' AS kind, a.symbol AS symbol INTO spikes;
PATTERN SEQ(spikes x, !spikes o, spikes y) FROM spikes
  WHERE [symbol] AND o.symbol != x.symbol WITHIN 500
  RETURN x.symbol AS symbol, x.kind AS first, y.ts - x.ts AS gap INTO pairs;
PATTERN pairs p FROM pairs WHERE p.gap < 200 WITHIN 0 RETURN p.symbol AS symbol, p.gap AS gap INTO close;
PATTERN spikes e FROM spikes WITHIN 0;
PATTERN close c FROM close WITHIN 0;
`

// Two- and three-level chains, two producers into one stream: over the
// stock stream piped in they give what they give over it loaded.
func TestDerivedChainsLiveAndLoaded(t *testing.T) {
	csv, path := teststream.StocksCSVFile(t)
	run := func(load string, stdin io.Reader) (string, string) {
		var stdout bytes.Buffer
		stderr := &testkit.SyncBuffer{}
		opts := []session.Option{}
		if stdin != nil {
			opts = append(opts, session.WithStdin(stdin))
		}
		s := session.New(&stdout, stderr, opts...)
		s.Set("timing", "off")
		if err := s.Exec(context.Background(), &ast.Source{Name: "<test>", Text: load + chain}); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if err := s.Wait(context.Background()); err != nil {
			t.Fatalf("Wait: %v\n%s", err, stderr)
		}
		return stdout.String(), stderr.String()
	}
	loaded, lerr := run("LOAD '"+path+"' AS s;", nil)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		pw.Write(csv)
		pw.Close()
	}()
	live, stderr := run("LOAD '-' AS s;", pr)
	pr.Close()

	split := func(out string) (spikes, close []string) {
		for line := range strings.Lines(out) {
			if strings.HasPrefix(line, `{"e":`) {
				spikes = append(spikes, line)
			} else {
				close = append(close, line)
			}
		}
		return spikes, close
	}
	ls, lc := split(loaded)
	vs, vc := split(live)
	if !slices.Equal(vs, ls) || !slices.Equal(vc, lc) {
		t.Fatalf("live:\n%s\nloaded:\n%s", live, loaded)
	}
	// Both producers reach spikes, merged in ts order.
	for _, want := range []string{
		`{"e":{"type":"spikes","ts":908,"seq":1,"kind":"top","symbol":4}}`,
		`{"e":{"type":"spikes","ts":986,"seq":2,"kind":"jump","symbol":2,"size":92}}`,
		`{"e":{"type":"spikes","ts":1734,"seq":3,"kind":"top","symbol":4}}`,
	} {
		if !slices.Contains(ls, want+"\n") {
			t.Errorf("spikes lacks %s:\n%s", want, loaded)
		}
	}
	if len(lc) == 0 {
		t.Errorf("the third level is empty:\n%s", lerr)
	}
	for _, want := range []string{
		"derived stream spikes (INTO from query 1 over s)",
		"derived stream pairs (INTO from query 3 over spikes)",
		"(stream close ended: ",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
