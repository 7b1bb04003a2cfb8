package repl_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/repl"
	"github.com/sase-cep/sase/session"
	"github.com/sase-cep/sase/source"
)

// newShell returns a shell over a session with reproducible output (no
// colour, no timing) and the built-in stocks stream.
func newShell(t testing.TB) (sh *repl.Shell, s *session.Session, stdout, stderr *bytes.Buffer) {
	t.Helper()
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	s = session.New(stdout, stderr, session.WithBuiltinStream(source.GenerateStocks("stocks", source.DefaultStockConfig())))
	if err := s.Set("timing", "off"); err != nil {
		t.Fatal(err)
	}
	return repl.NewShell(s), s, stdout, stderr
}

// TestProcess feeds the shell line by line.
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
			stderr: "format = csv\n(291 matches, 10000 events on stocks)\n",
		},
		{
			name: "semicolons in quotes, parens and comments",
			steps: []step{
				{"SET format = csv; PATTERN SEQ(stock1 a, stock2 b) -- a comment; still here", false},
				{"/* a block; comment */ WHERE a.price > b.price + 90 AND 'x;''y' != '' ", false},
				{"WITHIN 3 RETURN a.price AS `a;b`, 'p;q' AS \"c;d\"; SET format = table;", true},
			},
			stdout: "a;b,c;d\n96,p;q\n",
			stderr: "format = csv\n(1 match, 10000 events on stocks)\nformat = table\n",
		},
		{
			name:   "ReCEP notation keeps its semicolons",
			steps:  []step{{"SET format = csv; PATTERN (stock1 a; stock2 b) WITHIN 3;", true}},
			stdout: "a,b\n59,62\n68,69\n",
			stderr: "format = csv\n(291 matches, 10000 events on stocks)\n",
		},
		{
			name:       "comments and blank lines alone",
			steps:      []step{{"-- nothing", true}, {"", true}, {"/* open", false}, {"still */", true}},
			notRunning: true,
		},
		{
			name:   "an error does not end the session",
			steps:  []step{{"PATTERN SEQ(stock1 a, stock2 b) WITHIN;", true}, {"SET format = csv; SHOW STREAMS;", true}},
			stdout: "stocks,10000,10,generated,,true,false,,,,\n",
			stderr: "ERROR: <input>:1:39: expected a number at ';'\n    PATTERN SEQ(stock1 a, stock2 b) WITHIN;\n                                          ^\nformat = csv\n",
		},
		{
			name:   "a command at the prompt",
			steps:  []step{{`  \timing  `, true}, {`\y`, true}},
			stderr: "timing is on\nERROR: unknown command \\y (\\help lists the commands)\n",
		},
		{
			name:   "a command after a statement waits for the next one",
			steps:  []step{{`SET limit = 3; \timing`, false}, {"SET limit = 4;", true}},
			stderr: "limit = 3\ntiming is on\nlimit = 4\n",
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
			stderr: "format = csv\n(291 matches, 10000 events on stocks)\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh, s, stdout, stderr := newShell(t)
			for i, st := range tt.steps {
				if got := sh.Process(context.Background(), st.line); got != st.complete {
					t.Fatalf("step %d %q: complete = %v, want %v", i, st.line, got, st.complete)
				}
				if want := map[bool]string{true: repl.Prompt, false: repl.PromptContinue}[st.complete]; sh.Prompt() != want {
					t.Fatalf("step %d %q: prompt %q, want %q", i, st.line, sh.Prompt(), want)
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
	sh, _, stdout, stderr := newShell(t)
	sh.Process(context.Background(), "PATTERN SEQ(stock1 a,")
	sh.Reset()
	if sh.Prompt() != repl.Prompt || !sh.Process(context.Background(), "SHOW STREAMS;") || !strings.Contains(stdout.String(), "stocks") || stderr.Len() > 0 {
		t.Errorf("after Reset: stdout %q, stderr %q", stdout, stderr)
	}
}

// TestColors checks the shell's style per stream: bold headers when
// stdout gets colour, red errors when stderr does, each on its own.
func TestColors(t *testing.T) {
	for _, tt := range []struct{ stdout, stderr bool }{{true, true}, {true, false}, {false, true}, {false, false}} {
		var stdout, stderr bytes.Buffer
		s := session.New(&stdout, &stderr, session.WithStyle(repl.Colors(tt.stdout, tt.stderr)), session.WithBuiltinStream(source.GenerateStocks("stocks", source.DefaultStockConfig())))
		s.Exec(context.Background(), &ast.Source{Name: "<test>", Text: "SHOW STREAMS; USE nothing;"})
		header, errPrefix := " name   |", "ERROR: "
		if tt.stdout {
			header = " \x1b[1mname\x1b["
		}
		if tt.stderr {
			errPrefix = "\x1b[31;1mERROR:\x1b["
		}
		if !strings.HasPrefix(stdout.String(), header) || !strings.HasPrefix(stderr.String(), errPrefix) {
			t.Errorf("colors %+v: stdout %q, stderr %q", tt, stdout.String(), stderr.String())
		}
		if !tt.stdout && strings.Contains(stdout.String(), "\x1b") || !tt.stderr && strings.Contains(stderr.String(), "\x1b") {
			t.Errorf("colors %+v: colour where it is off: stdout %q, stderr %q", tt, stdout.String(), stderr.String())
		}
	}
}

// TestColor checks when a stream gets colour.
func TestColor(t *testing.T) {
	for _, tt := range []struct {
		env      map[string]string
		terminal bool
		want     bool
	}{
		{nil, true, true},
		{nil, false, false},
		{map[string]string{"NO_COLOR": "1"}, true, false},
		{map[string]string{"NO_COLOR": ""}, true, true}, // set but empty: the convention says colour
		{map[string]string{"TERM": "dumb"}, true, false},
		{map[string]string{"TERM": "xterm-256color"}, true, true},
	} {
		getenv := func(k string) string { return tt.env[k] }
		if got := repl.Color(getenv, tt.terminal); got != tt.want {
			t.Errorf("Color(%v, terminal %v) = %v", tt.env, tt.terminal, got)
		}
	}
}

// TestHelpExitQuit checks the words psql accepts alone at the prompt.
func TestHelpExitQuit(t *testing.T) {
	for _, tt := range []struct {
		lines    []string
		quit     bool
		help     bool
		complete bool
		stderr   string
	}{
		{lines: []string{"help"}, help: true, complete: true},
		{lines: []string{"  HELP; "}, help: true, complete: true},
		{lines: []string{"exit"}, quit: true, complete: true},
		{lines: []string{"quit;"}, quit: true, complete: true},
		{lines: []string{"Quit"}, quit: true, complete: true},
		{lines: []string{"PATTERN SEQ(stock1 a,", "quit"}, stderr: "(a statement is pending: end it with ;, clear it with Ctrl-C, or type \\q to quit)\n"},
		{lines: []string{"PATTERN SEQ(stock1 a,", "exit;", "stock2 b) WITHIN 1;"}, complete: true,
			stderr: "(a statement is pending: end it with ;, clear it with Ctrl-C, or type \\q to quit)\n(90 matches, 10000 events on stocks)\n"},
	} {
		var notes bytes.Buffer
		_, s, stdout, stderr := newShell(t)
		sh := repl.NewShell(s, repl.WithNotes(&notes))
		var complete bool
		for _, l := range tt.lines {
			complete = sh.Process(context.Background(), l)
		}
		help := strings.Contains(stdout.String(), "Statements (end each with ;)")
		if s.Quit() != tt.quit || help != tt.help || complete != tt.complete || notes.String()+stderr.String() != tt.stderr {
			t.Errorf("%q: quit %v, help %v, complete %v, stderr %q", tt.lines, s.Quit(), help, complete, notes.String()+stderr.String())
		}
	}
}
