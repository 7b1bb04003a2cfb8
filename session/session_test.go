package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/session"
	"github.com/sase-cep/sase/source"
)

// newSession returns a session with reproducible output (no timing) and the built-in stocks stream, writing into the buffers.
func newSession(t *testing.T, opts ...session.Option) (s *session.Session, stdout, stderr *bytes.Buffer) {
	t.Helper()
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	return newSessionTo(t, stdout, stderr, opts...), stdout, stderr
}

// newSessionTo is newSession writing to stdout and stderr.
func newSessionTo(t *testing.T, stdout, stderr io.Writer, opts ...session.Option) *session.Session {
	t.Helper()
	opts = append([]session.Option{
		session.WithBuiltinStream(source.GenerateStocks("stocks", source.DefaultStockConfig())),
	}, opts...)
	s := session.New(stdout, stderr, opts...)
	if err := s.Set("timing", "off"); err != nil {
		t.Fatal(err)
	}
	// One worker, so that goldens do not depend on the machine's CPUs
	// (testdata/repl/workers.sase sets its own).
	if err := s.Set("workers", "1"); err != nil {
		t.Fatal(err)
	}
	return s
}

func exec(t *testing.T, s *session.Session, text string) error {
	t.Helper()
	return s.Exec(context.Background(), &ast.Source{Name: "<test>", Text: text})
}

// TestScripts runs each testdata/repl/*.sase and compares its stdout and
// stderr with the .golden file next to it (go test -update rewrites them).
func TestScripts(t *testing.T) {
	t.Chdir("..") // scripts name files from the module root, as sase does
	scripts, _ := filepath.Glob("testdata/repl/*.sase")
	if len(scripts) == 0 {
		t.Fatal("no scripts in testdata/repl")
	}
	for _, path := range scripts {
		t.Run(filepath.Base(path), func(t *testing.T) {
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, stdout, stderr := newSession(t)
			err = s.Exec(context.Background(), &ast.Source{Name: path, Text: string(text)})
			got := "-- stdout --\n" + stdout.String() + "-- stderr --\n" + stderr.String()
			if err != nil {
				got += "-- Exec: " + err.Error() + "\n"
			}
			testkit.Golden(t, strings.TrimSuffix(path, ".sase")+".golden", got)
		})
	}
}

// TestCommands runs backslash commands, which work in scripts as in the
// shell.
func TestCommands(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		stdout string // a substring
		stderr string // exact
		fails  bool
		quit   bool
	}{
		{name: "timing toggles", text: "\\timing\n\\timing off\n\\timing maybe\n", fails: true,
			stderr: "timing is on\ntiming is off\nERROR: timing must be on or off, got \"maybe\"\n"},
		{name: "help", text: `\help`, stdout: "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120;"},
		{name: "unknown command", text: `\y`, fails: true, stderr: "ERROR: unknown command \\y (\\help lists the commands)\n"},
		{name: "include a script", text: `\i ../testdata/repl/include.sase`, stdout: "a,b\n59,62\n68,69\n",
			stderr: "format = csv\n(291 matches, 10000 events on stocks)\n"},
		{name: "include a missing file", text: "\\i nope.sase\n\\i\n", fails: true,
			stderr: "ERROR: open nope.sase: no such file or directory\nERROR: \\i needs a file name: \\i queries.sase\n"},
		{name: "quit ends the script", text: "\\q\nSHOW STREAMS;", quit: true},
		{name: "after a statement", text: "SET limit = 3; \\timing off", stderr: "limit = 3\ntiming is off\n"},
		{name: "expanded toggles", text: "\\x\n\\x\n\\x on\nSET limit = 1; PATTERN stock1 a RETURN a.price, a.symbol;\n\\x nope\n", fails: true,
			stdout: "-[ RECORD 1 ]-\na.price  | 5\na.symbol | 1\n",
			stderr: "expanded display is on\nexpanded display is off\nexpanded display is on\nlimit = 1\n(1 match, 18 events on stocks)\n" +
				"(stopped at the limit of 1 match; SET limit = 0 for all)\nERROR: expanded must be on or off, got \"nope\"\n"},
		{name: "set lists the settings", text: "SET engine = nfa; \\x\n\\set\n", stdout: "engine = nfa\nformat = table\nlimit = 0\ntiming = off\nexpanded = on\n",
			stderr: "engine = nfa\nexpanded display is on\n"},
		{name: "set sets", text: "\\set format CSV\n\\set limit -1\n\\set colour red\n", fails: true,
			stderr: "format = csv\nERROR: \\set limit: limit must be a whole number of matches, 0 for no limit; got \"-1\"\n" +
				"ERROR: \\set colour: unknown setting \"colour\" (settings: engine, format, limit, timing, expanded, workers, output, order)\n"},
		{name: "help shows the pattern algebra", text: `\help`, stdout: "  PATTERN AND(stock1 a, stock2 b) WHERE a.price < b.price WITHIN 10;\n"},
		{name: "help lists every command", text: `\help`, stdout: "  \\o [FILE]        send query results to FILE; alone: back to standard output\n"},
		{name: "include a quoted name", text: `\i '../testdata/repl/include.sase'`, stdout: "a,b\n59,62\n68,69\n",
			stderr: "format = csv\n(291 matches, 10000 events on stocks)\n"},
		{name: "include with a bad quote", text: "\\i 'a.sase\n\\i 'a'b'\n", fails: true,
			stderr: "ERROR: unterminated quote in 'a.sase\nERROR: unexpected ' in 'a'b' (a quote inside the name is doubled)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, stdout, stderr := newSession(t)
			if err := exec(t, s, tt.text); (err != nil) != tt.fails {
				t.Errorf("Exec = %v", err)
			}
			if !strings.Contains(stdout.String(), tt.stdout) || tt.quit && stdout.Len() > 0 {
				t.Errorf("stdout = %q, want it to contain %q", stdout, tt.stdout)
			}
			if got := stderr.String(); got != tt.stderr {
				t.Errorf("stderr =\n%s\nwant\n%s", got, tt.stderr)
			}
			if s.Quit() != tt.quit {
				t.Errorf("Quit() = %v", s.Quit())
			}
		})
	}
}

// TestHelpExamplesRun runs each example query \help shows on the stocks
// stream: each must find matches.
func TestHelpExamplesRun(t *testing.T) {
	s, stdout, _ := newSession(t)
	if err := exec(t, s, `\help`); err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(stdout.String()) {
		query, ok := strings.CutPrefix(line, "  PATTERN ")
		if !ok {
			continue
		}
		n++
		run, out, stderr := newSession(t)
		if err := exec(t, run, "SET format = count; PATTERN "+query); err != nil || out.String() == "0\n" {
			t.Errorf("%s: %v, %s matches; %s", line, err, out, stderr)
		}
	}
	if n < 6 {
		t.Errorf("\\help shows %d example queries, want 6", n)
	}
}

// TestIncludeCycle runs scripts that include themselves, directly or
// through others: each cycle is an error naming the chain of files, the
// script goes on, and the shell survives. (Without the check the includes
// recursed until the stack overflowed, a fatal error no recover catches;
// the smaller stack makes that fail in a second instead of 35.)
func TestIncludeCycle(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20))
	chain := map[string]string{} // f0.sase includes f1.sase ... up to f39.sase
	for i := range 40 {
		chain[fmt.Sprintf("f%d.sase", i)] = fmt.Sprintf("\\i f%d.sase\n", i+1)
	}
	tests := []struct {
		name   string
		files  map[string]string
		stderr string
	}{
		{"itself", map[string]string{"a.sase": "\\i a.sase\n"},
			"ERROR: \\i a.sase: include cycle: a.sase -> a.sase\n"},
		{"through another", map[string]string{"a.sase": "\\i b.sase\n", "b.sase": "\\i a.sase\n"},
			"ERROR: \\i a.sase: include cycle: a.sase -> b.sase -> a.sase\n"},
		{"under another name", map[string]string{"a.sase": "\\i b.sase\n", "b.sase": "\\i ./a.sase\n"},
			"ERROR: \\i ./a.sase: include cycle: a.sase -> b.sase -> a.sase\n"},
		{"the script goes on", map[string]string{"a.sase": "SET limit = 1;\n\\i a.sase\nSET limit = 2;\n"},
			"limit = 1\nERROR: \\i a.sase: include cycle: a.sase -> a.sase\nlimit = 2\n"},
		{"too deep", chain,
			"ERROR: \\i f32.sase: scripts nested more than 32 deep (f0.sase -> ... -> f32.sase)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			for name, text := range tt.files {
				if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			first := "a.sase"
			if _, ok := tt.files[first]; !ok {
				first = "f0.sase"
			}
			// Typed in the shell, and run as sase -f runs a script.
			for _, run := range []func(*session.Session) error{
				func(s *session.Session) error { return exec(t, s, "\\i "+first) },
				func(s *session.Session) error { return s.ExecFile(context.Background(), first) },
			} {
				s, stdout, stderr := newSession(t)
				if err := run(s); err != session.ErrFailed {
					t.Errorf("err = %v, want ErrFailed", err)
				}
				if stdout.Len() > 0 || stderr.String() != tt.stderr {
					t.Errorf("stdout %q, stderr\n%s\nwant\n%s", stdout, stderr, tt.stderr)
				}
			}
		})
	}
}

// TestOutputFile checks \\o: results go to the file, messages stay on
// stderr, and \\o alone brings results back to stdout.
func TestOutputFile(t *testing.T) {
	t.Chdir(t.TempDir())
	s, stdout, stderr := newSession(t)
	err := exec(t, s, "SET format = csv; SET limit = 2;\n\\o 'my results.csv'\nPATTERN stock1 a RETURN a.price;\nSHOW STREAMS;\n\\o\nPATTERN stock2 a RETURN a.price;\n\\o no/such/dir/x.csv\n")
	if err != session.ErrFailed {
		t.Fatalf("Exec = %v", err)
	}
	file, _ := os.ReadFile("my results.csv")
	if want := "a.price\n5\n40\nname,events,types,source,time_unit,current,live,slack,time,max_ts,late\nstocks,10000,10,generated,,true,false,,,,\n"; string(file) != want {
		t.Errorf("file:\n%s\nwant\n%s", file, want)
	}
	if want := "a.price\n9\n37\n"; stdout.String() != want {
		t.Errorf("stdout:\n%s\nwant\n%s", stdout, want)
	}
	want := "format = csv\nlimit = 2\nresults go to my results.csv\n(2 matches, 34 events on stocks)\n(stopped at the limit of 2 matches; SET limit = 0 for all)\n" +
		"results go to standard output\n(2 matches, 11 events on stocks)\n(stopped at the limit of 2 matches; SET limit = 0 for all)\n" +
		"ERROR: \\o: open no/such/dir/x.csv: no such file or directory\n"
	if stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant\n%s", stderr, want)
	}
}

// TestScriptRelativePaths checks that LOAD and \\i in a script name files
// relative to the script's folder, and typed statements relative to the
// working directory.
func TestScriptRelativePaths(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteFiles(t, dir, map[string]string{
		"scripts/main.sase":     "LOAD 'data/t.csv' AS t;\n\\i 'lib/more.sase'\n",
		"scripts/data/t.csv":    "type,ts\nA,1\n",
		"scripts/lib/more.sase": "LOAD '../data/t.csv' AS u;\nLOAD 'data/t.csv' AS v;\n",
		"data/t.csv":            "type,ts\nB,1\nB,2\n",
	})
	t.Chdir(dir)
	s, _, stderr := newSession(t)
	if err := s.ExecFile(context.Background(), "scripts/main.sase"); err != session.ErrFailed {
		t.Fatalf("ExecFile = %v", err)
	}
	if err := exec(t, s, "LOAD 'data/t.csv' AS w;"); err != nil {
		t.Fatal(err)
	}
	want := "loaded t: 1 event of 1 type, the current stream\n" +
		"loaded u: 1 event of 1 type\n" +
		"ERROR: open scripts/lib/data/t.csv: no such file or directory\n" +
		"loaded w: 2 events of 1 type\n"
	if stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant\n%s", stderr, want)
	}
}

// TestProgress checks the counters a shell reads while a query runs, and
// that they are gone once it has ended.
func TestProgress(t *testing.T) {
	// Its matches go nowhere: until the cancel lands they are tens of MB,
	// and growing a buffer for them was most of the test's CPU.
	s := newSessionTo(t, io.Discard, io.Discard, session.TrackProgress())
	if _, ok := s.Progress(); ok {
		t.Fatal("progress before any statement")
	}
	var during session.Progress
	var seen bool
	// The sink runs inside the query: read the counters from there, as
	// the shell's goroutine would.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if p, ok := s.Progress(); ok && p.Events > 5000 && !seen {
				during, seen = p, true
				cancel()
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	s.Exec(ctx, &ast.Source{Name: "<test>", Text: "SET format = jsonl; PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 300;"})
	cancel()
	<-done
	if !seen {
		t.Fatal("no progress seen while the query ran")
	}
	if during.Work != "query" || during.Total != 10000 || during.Events > 10000 || during.Matches == 0 {
		t.Errorf("progress %+v", during)
	}
	if _, ok := s.Progress(); ok {
		t.Error("progress after the query ended")
	}
	if !regexp.MustCompile(`^query: \d+(\.\d)?K of 10.0K events \(\d+%\), \d+ matches, .* events/s, \d`).MatchString(during.String()) {
		t.Errorf("progress line %q", during.String())
	}
}

func TestProgressLine(t *testing.T) {
	for _, tt := range []struct {
		p    session.Progress
		want string
	}{
		{session.Progress{Work: "query", Events: 1_500_000, Total: 3_000_000, Matches: 1, Elapsed: 2 * time.Second}, "query: 1.5M of 3.0M events (50%), 1 match, 750.0K events/s, 2.00s"},
		{session.Progress{Work: "LOAD 'x.csv'", Elapsed: 1500 * time.Millisecond}, "LOAD 'x.csv': 1.50s"},
		{session.Progress{Work: "query", Events: 812, Elapsed: time.Second}, "query: 812 events, 0 matches, 812 events/s, 1.00s"},
	} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.p, got, tt.want)
		}
	}
}

// TestIncludeTwice checks that a file included twice, one after the other,
// is no cycle.
func TestIncludeTwice(t *testing.T) {
	t.Chdir(t.TempDir())
	for name, text := range map[string]string{"a.sase": "\\i b.sase\n\\i b.sase\n", "b.sase": "SET limit = 1;\n"} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, _, stderr := newSession(t)
	if err := s.ExecFile(context.Background(), "a.sase"); err != nil || stderr.String() != "limit = 1\nlimit = 1\n" {
		t.Errorf("ExecFile = %v, stderr %q", err, stderr)
	}
	if err := s.ExecFile(context.Background(), "nope.sase"); err == nil || err.Error() != "open nope.sase: no such file or directory" {
		t.Errorf("ExecFile of a missing file = %v", err)
	}
}

// TestJSONLContract pins the exact line other tools read.
func TestJSONLContract(t *testing.T) {
	s, stdout, _ := newSession(t)
	if err := exec(t, s, "SET format = jsonl; SET limit = 1; PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120;"+
		"PATTERN SEQ(stock1 a, stock2+ b[]) WHERE b[i].volume > 900 WITHIN 2 RETURN a, b, b.LEN AS n, a.price * 1.5 AS x, a.missing;"); err == nil {
		t.Fatal("a.missing compiled")
	}
	want := `{"a":{"type":"stock1","ts":17,"seq":17,"id":17,"symbol":1,"price":5,"volume":812},` +
		`"b":{"type":"stock2","ts":22,"seq":22,"id":22,"symbol":2,"price":8,"volume":338},` +
		`"c":{"type":"stock3","ts":24,"seq":24,"id":24,"symbol":3,"price":48,"volume":719}}` + "\n"
	if stdout.String() != want {
		t.Errorf("got  %swant %s", stdout, want)
	}

	stdout.Reset()
	if err := exec(t, s, "PATTERN SEQ(stock1 a, stock2+ b[], stock3 c) WHERE b[i].volume > 900 WITHIN 20 RETURN a, b, b.LEN AS n, a.price * 1.5 AS x;"); err != nil {
		t.Fatal(err)
	}
	want = `{"a":{"type":"stock1","ts":588,"seq":588,"id":588,"symbol":1,"price":35,"volume":704},` +
		`"b":[{"type":"stock2","ts":590,"seq":590,"id":590,"symbol":2,"price":30,"volume":937},` +
		`{"type":"stock2","ts":591,"seq":591,"id":591,"symbol":2,"price":73,"volume":952}],"n":2,"x":52.5}` + "\n"
	if stdout.String() != want {
		t.Errorf("got  %swant %s", stdout, want)
	}
}

// TestFormats checks each format's rendering of values, events and lists,
// including absent values and strings that need quoting.
func TestFormats(t *testing.T) {
	csv := "type,ts,name,x\nA,1,\"a, \"\"b\"\"\",1.5\nB,2,,\nB,3, lead,true\n"
	query := "PATTERN SEQ(A a, B+ b[]) WITHIN 5 RETURN a, b, a.name, b[1].x AS bx, b.LEN AS n;"
	tests := []struct {
		format, want string
	}{
		{"csv", "a,b,a.name,bx,n\n" +
			"0,[1;2],\"a, \"\"b\"\"\",,2\n"},
		{"jsonl", `{"a":{"type":"A","ts":1,"seq":0,"name":"a, \"b\"","x":1.5},"b":[{"type":"B","ts":2,"seq":1},{"type":"B","ts":3,"seq":2,"name":" lead","x":true}],"a.name":"a, \"b\"","bx":null,"n":2}` + "\n"},
		{"table", "" +
			" a                       | b                              | a.name | bx | n\n" +
			"-------------------------+--------------------------------+--------+----+---\n" +
			" A@1 {name=a, \"b\" x=1.5} | [B@2, B@3 {name= lead x=true}] | a, \"b\" |    | 2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			s, stdout, stderr := newSession(t, session.WithStdin(strings.NewReader(csv)))
			// LOAD '-' is live: the query runs in the background until Wait.
			if err := exec(t, s, "LOAD '-' AS t; SET format = "+tt.format+";"+query); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if err := s.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := stdout.String(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestTablePages checks that a result longer than a page keeps one header
// and every row.
func TestTablePages(t *testing.T) {
	s, stdout, stderr := newSession(t)
	if err := exec(t, s, "PATTERN SEQ(stock1 a, stock2 b) WITHIN 30 RETURN a.seq, b.seq;"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if !strings.HasPrefix(stderr.String(), "(2861 matches,") || len(lines) != 2861+2 {
		t.Fatalf("%d lines, stderr %q", len(lines), stderr)
	}
	if strings.Count(stdout.String(), "a.seq") != 1 {
		t.Error("header printed more than once")
	}
}

// TestJSONLIsJSON checks that every jsonl line parses, with the keys of
// the positive variables.
func TestJSONLIsJSON(t *testing.T) {
	s, stdout, _ := newSession(t)
	if err := exec(t, s, "SET format = jsonl; PATTERN SEQ(stock1 a, stock2+ b[], stock3 c) WITHIN 30;"); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil || len(m) != 3 || m["a"] == nil || m["b"] == nil || m["c"] == nil {
			t.Fatalf("%q: %v", line, err)
		}
	}
}

// TestCurrentStream checks which stream a query reads.
func TestCurrentStream(t *testing.T) {
	csv := "type,ts\nA,1\n"
	tests := []struct {
		name, text, current string
		builtin             bool
	}{
		{"the built-in stream is current", "", "stocks", true},
		{"the user's first stream replaces the built-in", "GENERATE STOCKS AS mine WITH (events = 10);", "mine", true},
		{"later streams do not", "LOAD '-' AS a; GENERATE STOCKS AS b WITH (events = 10);", "a", true},
		{"USE makes the built-in current", "USE stocks; LOAD '-' AS a;", "stocks", true},
		{"no built-in, first stream", "LOAD '-' AS a; GENERATE STOCKS;", "a", false},
		{"none at all", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr := &bytes.Buffer{}, &bytes.Buffer{}
			opts := []session.Option{session.WithStdin(strings.NewReader(csv))}
			if tt.builtin {
				opts = append(opts, session.WithBuiltinStream(source.GenerateStocks("stocks", source.DefaultStockConfig())))
			}
			s := session.New(stdout, stderr, opts...)
			if err := exec(t, s, tt.text); err != nil {
				t.Fatalf("%v: %s", err, stderr)
			}
			if s.Current() != tt.current {
				t.Errorf("current = %q, want %q", s.Current(), tt.current)
			}
		})
	}
}

func TestQueryWithoutStream(t *testing.T) {
	stdout, stderr := &bytes.Buffer{}, &bytes.Buffer{}
	s := session.New(stdout, stderr)
	if err := exec(t, s, "\n  PATTERN A a;"); err != session.ErrFailed {
		t.Fatalf("Exec = %v", err)
	}
	want := "ERROR: <test>:2:3: no stream loaded: LOAD a file or GENERATE STOCKS first\n      PATTERN A a;\n      ^\n"
	if stderr.String() != want {
		t.Errorf("got\n%s\nwant\n%s", stderr, want)
	}
	if err := exec(t, s, "LOAD '-';"); err == nil || !strings.Contains(stderr.String(), "standard input is not available") {
		t.Errorf("LOAD '-' without stdin: %v %s", err, stderr)
	}
}

// TestPanicIsReported makes the output stage fail on an event whose type
// the schema does not know, as a bug elsewhere would.
func TestPanicIsReported(t *testing.T) {
	broken := source.GenerateStocks("broken", source.StockConfig{Events: 3, Symbols: 1, MaxPrice: 9, MaxVolume: 9, Seed: 1, IncreaseProbability: 101})
	extra := make([]event.Value, 9) // slots the schema does not have
	extra[8] = event.IntValue(1)
	broken.Events[1] = &event.Event{Type: 0, TS: 1, Seq: 1, Attrs: extra}
	s, _, stderr := newSession(t, session.WithBuiltinStream(broken))
	err := exec(t, s, "SET format = jsonl; PATTERN stock1 a FROM broken;\nSHOW STREAMS;")
	if err != session.ErrFailed {
		t.Fatalf("Exec = %v", err)
	}
	want := "ERROR: internal error (a bug, please report): runtime error: index out of range [8] with length 4\n" +
		"statement: PATTERN stock1 a FROM broken;\n"
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr\n%s\nwant it to contain\n%s", stderr, want)
	}
}

// TestExplain checks what the golden scripts cannot pin down: the auto
// engine's plan (its rules grow) and EXPLAIN ANALYZE's times.
func TestExplain(t *testing.T) {
	s, stdout, stderr := newSession(t)
	q := "PATTERN SEQ(stock1 a, stock2 b) WHERE a.price > b.price WITHIN 10;"
	if err := exec(t, s, "EXPLAIN "+q); err != nil || !strings.HasPrefix(stdout.String(), "Plan (engine auto)\nTransformation\n") || stderr.Len() > 0 {
		t.Fatalf("EXPLAIN: %v\n%s%s", err, stdout, stderr)
	}
	stdout.Reset()
	if err := exec(t, s, "EXPLAIN ANALYZE "+q); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`SSC  \(in=10000 out=\d+ time=`).MatchString(stdout.String()) || stderr.String() != "(519 matches, 10000 events on stocks)\n" {
		t.Errorf("EXPLAIN ANALYZE:\n%s%s", stdout, stderr)
	}

	// A split run: each worker's share, which add up to the run's.
	stdout.Reset()
	stderr.Reset()
	if err := exec(t, s, "SET workers = 3; EXPLAIN ANALYZE PATTERN SEQ(stock1 a, stock2 b) WHERE [volume] AND b.price > a.price WITHIN 300;"); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Parallel: 3 workers, partitioned by \[volume\]\n(?:   worker \d: events=(\d+) matches=(\d+)\n){3}$`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("EXPLAIN ANALYZE with 3 workers:\n%s%s", stdout, stderr)
	}
	var events, matches int
	for _, w := range regexp.MustCompile(`events=(\d+) matches=(\d+)`).FindAllStringSubmatch(stdout.String(), -1) {
		e, _ := strconv.Atoi(w[1])
		n, _ := strconv.Atoi(w[2])
		events, matches = events+e, matches+n
	}
	if want := fmt.Sprintf("(%d matches, %d events on stocks)\n", matches, events); events != 10000 || matches == 0 || stderr.String() != "workers = 3\n"+want {
		t.Errorf("workers' shares add up to %d events, %d matches; summary %q", events, matches, stderr.String())
	}
}

// TestExplainAnalyzeOddValues checks that EXPLAIN ANALYZE says, below
// the plan, the events a comparison read another kind on.
func TestExplainAnalyzeOddValues(t *testing.T) {
	s, stdout, stderr := newSession(t)
	if err := exec(t, s, "LOAD '../testdata/repl/orders.jsonl'; EXPLAIN ANALYZE PATTERN order o WHERE o.amount > 15;"); err != nil {
		t.Fatal(err)
	}
	want := "\nWarning: 1 of 4 order events has amount as a string where it is compared with a number: o.amount > 15 is false on it " +
		"(a string and a number are never equal or ordered); has() holds on it, so write amount as a number in the data\n"
	if !strings.HasSuffix(stdout.String(), want) || strings.Contains(stderr.String(), "warning") {
		t.Errorf("EXPLAIN ANALYZE:\n%s%s", stdout, stderr)
	}
}

func TestSetAPI(t *testing.T) {
	s, _, _ := newSession(t)
	for _, kv := range [][2]string{{"engine", "BASIC"}, {"format", "jsonl"}, {"limit", "7"}, {"timing", "on"}, {"LIMIT", "0"}} {
		if err := s.Set(kv[0], kv[1]); err != nil {
			t.Errorf("Set(%q, %q) = %v", kv[0], kv[1], err)
		}
	}
	for _, kv := range [][2]string{{"engine", "warp"}, {"format", "xml"}, {"limit", "-1"}, {"timing", "yes"}, {"colour", "red"}} {
		if err := s.Set(kv[0], kv[1]); err == nil {
			t.Errorf("Set(%q, %q) succeeded", kv[0], kv[1])
		}
	}
}

func Example() {
	s := session.New(os.Stdout, os.Stdout)
	s.Set("timing", "off")
	s.Exec(context.Background(), &ast.Source{Name: "example", Text: `
		GENERATE STOCKS WITH (events = 100);
		SET format = jsonl;
		PATTERN SEQ(stock1 a, stock2 b) WHERE a.price > b.price WITHIN 5 RETURN a.price, b.price;
	`})
	// Output:
	// generated stocks: 100 events of 10 types, the current stream
	// format = jsonl
	// {"a.price":71,"b.price":39}
	// {"a.price":97,"b.price":76}
	// {"a.price":97,"b.price":84}
	// (3 matches, 100 events on stocks)
}

// TestFailedLoad checks that a LOAD, GENERATE or LISTEN that fails while
// the built-in stream is current leaves no stream current: the next query
// must not run on data the user did not name. A stream of the user's stays
// current.
func TestFailedLoad(t *testing.T) {
	const note = "(no stream is current now: the built-in stocks was current only until a stream of your own; USE stocks to query it)\n"
	tests := []struct {
		name, text, current, stderr string
	}{
		{"a missing file", "LOAD 'no/such.csv';\nPATTERN stock1 a;", "",
			"ERROR: open no/such.csv: no such file or directory\n" + note +
				"ERROR: <test>:2:1: no current stream: USE one, or name it with FROM (streams: stocks)\n    PATTERN stock1 a;\n    ^\n"},
		{"a bad option", "GENERATE STOCKS WITH (events = -1);", "",
			"ERROR: <test>:1:23: GENERATE STOCKS option events must be positive, got -1\n    GENERATE STOCKS WITH (events = -1);\n                          ^\n" + note},
		{"the user's stream stays current", "GENERATE STOCKS AS mine WITH (events = 10);\nLOAD 'no/such.csv';", "mine",
			"generated mine: 10 events of 10 types, the current stream\nERROR: open no/such.csv: no such file or directory\n"},
		{"USE brings the built-in back", "LOAD 'no/such.csv'; USE stocks;", "stocks",
			"ERROR: open no/such.csv: no such file or directory\n" + note + "using stream stocks\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, stderr := newSession(t)
			if err := exec(t, s, tt.text); err != session.ErrFailed {
				t.Fatalf("Exec = %v", err)
			}
			if s.Current() != tt.current {
				t.Errorf("current = %q, want %q", s.Current(), tt.current)
			}
			if stderr.String() != tt.stderr {
				t.Errorf("stderr:\n%s\nwant\n%s", stderr, tt.stderr)
			}
		})
	}
}

// TestCancelStatements checks that a cancel (Ctrl-C in the shell)
// stops LOAD, GENERATE (which then leave nothing loaded) and EXPLAIN
// ANALYZE. The LOAD reads a pipe
// that never ends, so only the cancel can stop it. The bound is loose so
// as not to flake on a busy machine; the latency is logged (go test -v).
func TestCancelStatements(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "endless.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	reading := make(chan struct{}) // the LOAD has opened the pipe
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		f.WriteString("type,ts,x\n")
		close(reading)
		line := []byte{}
		for ts := 0; ; ts++ {
			line = fmt.Appendf(line[:0], "A,%d,1\n", ts)
			if _, err := f.Write(line); err != nil {
				return // the load was cancelled and closed the pipe
			}
		}
	}()
	generating := make(chan struct{})
	close(generating)
	for _, tt := range []struct {
		stmt, err string
		running   chan struct{}
	}{
		{"LOAD '" + fifo + "' AS endless;", "ERROR: LOAD '" + fifo + "' cancelled: nothing loaded: context canceled\n", reading},
		{"GENERATE STOCKS AS big WITH (events = 20000000);", "ERROR: GENERATE STOCKS cancelled: nothing generated: context canceled\n", generating},
		// Without a window its matches are every ordered 4-tuple: it never ends.
		{"EXPLAIN ANALYZE PATTERN SEQ(stock1 a, stock2 b, stock3 c, stock4 d);", "ERROR: query cancelled after ", generating},
	} {
		t.Run(strings.Fields(tt.stmt)[0], func(t *testing.T) {
			s, _, stderr := newSession(t)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			started := make(chan struct{})
			go func() {
				close(started)
				done <- s.Exec(ctx, &ast.Source{Name: "<test>", Text: tt.stmt})
			}()
			<-started
			<-tt.running
			// Well into the statement (a cancel before it would skip it):
			// 20M events take seconds to generate.
			time.Sleep(100 * time.Millisecond)
			start := time.Now()
			cancel()
			select {
			case err := <-done:
				t.Logf("%s stopped %v after the cancel", tt.stmt, time.Since(start))
				if err != session.ErrFailed {
					t.Errorf("Exec = %v", err)
				}
			case <-time.After(2 * time.Second):
				t.Fatalf("%s still runs 2s after the cancel", tt.stmt)
			}
			if !strings.HasPrefix(stderr.String(), tt.err) {
				t.Errorf("stderr:\n%s\nwant it to begin with\n%s", stderr, tt.err)
			}
			if len(s.Streams()) != 1 {
				t.Errorf("streams after a cancel: %v", s.Streams())
			}
		})
	}
}

// cancelWriter cancels its context at the first write of results, when
// the query is well under way.
type cancelWriter struct {
	bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.cancel()
	return w.Buffer.Write(p)
}

// TestCancelCountsWritten: a cancelled query's message counts the matches
// it wrote, not one more (the engine counts the match the sink refused).
func TestCancelCountsWritten(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &cancelWriter{cancel: cancel}, &bytes.Buffer{}
	s := session.New(stdout, stderr, session.WithBuiltinStream(source.GenerateStocks("stocks", source.DefaultStockConfig())))
	// Without a window its matches are every ordered 4-tuple: it never ends.
	if err := s.Exec(ctx, &ast.Source{Name: "<test>", Text: "SET format = csv; PATTERN SEQ(stock1 a, stock2 b, stock3 c, stock4 d);"}); err != session.ErrFailed {
		t.Fatalf("Exec = %v", err)
	}
	rows := strings.Count(stdout.String(), "\n") - 1 // the header
	m := regexp.MustCompile(`query cancelled after \d+ events and (\d+) matches`).FindStringSubmatch(stderr.String())
	if m == nil || m[1] != strconv.Itoa(rows) || rows <= 0 {
		t.Errorf("%d rows written; stderr:\n%s", rows, stderr)
	}
}

// TestQueryTextLimits: a statement nested or long past the parser's limits
// is an error with its place, and the session goes on (issue 30, item 5:
// it was a fatal stack overflow that ended the shell).
func TestQueryTextLimits(t *testing.T) {
	nested := "PATTERN stock1 a WHERE " + strings.Repeat("(", 300_000) + "a.price > 1" + strings.Repeat(")", 300_000) + ";\n"
	long := "PATTERN stock1 a WHERE a.price > 0" + strings.Repeat(" AND a.price > 0", 20_000) + ";\n" // 320 KB: over 256 KiB
	s, stdout, stderr := newSession(t)
	if err := exec(t, s, nested+long+"SHOW STREAMS;"); err == nil {
		t.Error("no error")
	}
	for _, want := range []string{"ERROR: <test>:1:280: nested deeper than the limit", "ERROR: <test>:2:1: statement is longer than the limit"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%.600s", want, stderr)
		}
	}
	if !strings.Contains(stdout.String(), "stocks") {
		t.Errorf("SHOW STREAMS after them printed %q", stdout)
	}
}

// TestInterruptedScript checks that a script cancelled before its end says
// which statements did not run, rather than end as if it had finished.
func TestInterruptedScript(t *testing.T) {
	for _, tt := range []struct {
		name, script, want string
	}{
		{"before any", "-- a comment\nSET format = jsonl;\nSHOW STREAMS;\n\\timing on\n",
			"(interrupted: 3 statements of <test> not run, from line 2)\n"},
		{"one left", "SHOW STREAMS;", "(interrupted: 1 statement of <test> not run, from line 1)\n"},
		{"nothing left", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _, stderr := newSession(t)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := s.Exec(ctx, &ast.Source{Name: "<test>", Text: tt.script}); err != nil {
				t.Fatalf("Exec = %v", err)
			}
			if got := stderr.String(); got != tt.want {
				t.Errorf("stderr %q, want %q", got, tt.want)
			}
		})
	}
}
