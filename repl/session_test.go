package repl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/repl"
	"github.com/sase-cep/sase/source"
)

// newSession returns a session with reproducible output (no color, no
// timing) and the built-in stocks stream, writing into the buffers.
func newSession(t *testing.T, opts ...repl.Option) (s *repl.Session, stdout, stderr *bytes.Buffer) {
	t.Helper()
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	opts = append([]repl.Option{
		repl.WithColor(false),
		repl.WithBuiltinStream(source.GenerateStocks("stocks", source.DefaultStockConfig())),
	}, opts...)
	s = repl.New(stdout, stderr, opts...)
	if err := s.Set("timing", "off"); err != nil {
		t.Fatal(err)
	}
	return s, stdout, stderr
}

func exec(t *testing.T, s *repl.Session, text string) error {
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

// TestProcess feeds the shell core line by line.
func TestProcess(t *testing.T) {
	type step struct {
		line     string
		complete bool
	}
	tests := []struct {
		name       string
		steps      []step
		stdout     string // substring expected in stdout
		stderr     string // exact stderr
		quit       bool
		notRunning bool // nothing ran: stdout stays empty
	}{
		{
			name: "multi-line statement",
			steps: []step{
				{"SET format = csv; PATTERN SEQ(stock1 a,", false},
				{"  stock2 b)", false},
				{"WITHIN 3", false},
				{";", true},
			},
			stdout: "a,b\n59,62\n68,69\n",
			stderr: "format = csv\n(291 matches, 10000 events)\n",
		},
		{
			name: "semicolons in quotes, parens and comments",
			steps: []step{
				{"SET format = csv; PATTERN SEQ(stock1 a, stock2 b) -- a comment; still here", false},
				{"/* a block; comment */ WHERE a.price > b.price + 90 AND 'x;''y' != '' ", false},
				{"WITHIN 3 RETURN a.price AS `a;b`, 'p;q' AS \"c;d\"; SET format = table;", true},
			},
			stdout: "a;b,c;d\n96,p;q\n",
			stderr: "format = csv\n(1 match, 10000 events)\nformat = table\n",
		},
		{
			name:   "ReCEP notation keeps its semicolons",
			steps:  []step{{"SET format = csv; PATTERN (stock1 a; stock2 b) WITHIN 3;", true}},
			stdout: "a,b\n59,62\n68,69\n",
			stderr: "format = csv\n(291 matches, 10000 events)\n",
		},
		{
			name:       "comments and blank lines alone",
			steps:      []step{{"-- nothing", true}, {"", true}, {"/* open", false}, {"still */", true}},
			notRunning: true,
		},
		{
			name:   "an error does not end the session",
			steps:  []step{{"PATTERN SEQ(stock1 a, stock2 b) WITHIN;", true}, {"SET format = csv; SHOW STREAMS;", true}},
			stdout: "stocks,10000,10,generated,,true,false\n",
			stderr: "ERROR: <input>:1:39: expected a number at ';'\n    PATTERN SEQ(stock1 a, stock2 b) WITHIN;\n                                          ^\nformat = csv\n",
		},
		{
			name:   "timing toggles",
			steps:  []step{{`\timing`, true}, {`\timing off`, true}, {`\timing maybe`, true}},
			stderr: "timing is on\ntiming is off\nERROR: timing must be on or off, got \"maybe\"\n",
		},
		{
			name:   "help",
			steps:  []step{{`\help`, true}},
			stdout: "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120;",
		},
		{
			name:   "unknown command",
			steps:  []step{{`\x`, true}},
			stderr: "ERROR: unknown command \\x (\\help lists the commands)\n",
		},
		{
			name:       "backslash inside a statement is not a command",
			steps:      []step{{"PATTERN stock1 a", false}, {`\q`, false}},
			notRunning: true,
		},
		{
			name:  "quit",
			steps: []step{{"  \\q  ", true}},
			quit:  true,
		},
		{
			name:   "include a script",
			steps:  []step{{`\i ../testdata/repl/include.sase`, true}},
			stdout: "a,b\n59,62\n68,69\n",
			stderr: "format = csv\n(291 matches, 10000 events)\n",
		},
		{
			name:   "include a missing file",
			steps:  []step{{`\i nope.sase`, true}, {`\i`, true}},
			stderr: "ERROR: open nope.sase: no such file or directory\nERROR: \\i needs a file name: \\i queries.sase\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, stdout, stderr := newSession(t)
			for i, st := range tt.steps {
				if got := s.Process(context.Background(), st.line); got != st.complete {
					t.Fatalf("step %d %q: complete = %v, want %v", i, st.line, got, st.complete)
				}
			}
			if !strings.Contains(stdout.String(), tt.stdout) || tt.notRunning && stdout.Len() > 0 {
				t.Errorf("stdout = %q, want it to contain %q", stdout, tt.stdout)
			}
			if tt.stderr != "" || tt.notRunning {
				if got := stderr.String(); got != tt.stderr {
					t.Errorf("stderr =\n%s\nwant\n%s", got, tt.stderr)
				}
			}
			if s.Quit() != tt.quit {
				t.Errorf("Quit() = %v", s.Quit())
			}
		})
	}
}

// TestResetDropsPendingInput is Ctrl-C at the prompt.
func TestResetDropsPendingInput(t *testing.T) {
	s, stdout, stderr := newSession(t)
	s.Process(context.Background(), "PATTERN SEQ(stock1 a,")
	s.Reset()
	if !s.Process(context.Background(), "SHOW STREAMS;") || !strings.Contains(stdout.String(), "stocks") || stderr.Len() > 0 {
		t.Errorf("after Reset: stdout %q, stderr %q", stdout, stderr)
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
			s, stdout, stderr := newSession(t, repl.WithStdin(strings.NewReader(csv)))
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
			opts := []repl.Option{repl.WithColor(false), repl.WithStdin(strings.NewReader(csv))}
			if tt.builtin {
				opts = append(opts, repl.WithBuiltinStream(source.GenerateStocks("stocks", source.DefaultStockConfig())))
			}
			s := repl.New(stdout, stderr, opts...)
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
	s := repl.New(stdout, stderr, repl.WithColor(false))
	if err := exec(t, s, "\n  PATTERN A a;"); err != repl.ErrFailed {
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
	s, _, stderr := newSession(t, repl.WithBuiltinStream(broken))
	err := exec(t, s, "SET format = jsonl; PATTERN stock1 a FROM broken;\nSHOW STREAMS;")
	if err != repl.ErrFailed {
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
	if !regexp.MustCompile(`SSC  \(in=10000 out=\d+ time=`).MatchString(stdout.String()) || stderr.String() != "(519 matches, 10000 events)\n" {
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
	s := repl.New(os.Stdout, os.Stdout, repl.WithColor(false))
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
	// (3 matches, 100 events)
}
