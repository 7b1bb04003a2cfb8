package main_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/sase-cep/sase/internal/testkit"
)

// terminal is sase running on a pseudo-terminal, as a person runs it.
type terminal struct {
	t    *testing.T
	pty  *os.File
	out  *testkit.SyncBuffer // everything the terminal showed
	cmd  *exec.Cmd
	done chan struct{}
}

// startTerminal starts the shell on a 100x40 pseudo-terminal, in a
// temporary folder that is also its home (for the history file), with env
// added to the environment.
func startTerminal(t *testing.T, env ...string) *terminal {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(sase)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), append([]string{"HOME=" + home, "TERM=xterm"}, env...)...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, pty: f, out: &testkit.SyncBuffer{}, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(term.done)
		io.Copy(term.out, f) // ends with an error once sase has exited
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		f.Close()
	})
	return term
}

func (term *terminal) typeText(s string) {
	term.t.Helper()
	if _, err := term.pty.WriteString(s); err != nil {
		term.t.Fatal(err)
	}
}

func (term *terminal) waitFor(s string) {
	term.t.Helper()
	testkit.WaitFor(term.t, term.out, s)
}

// exit types \q and waits for sase to end with status 0.
func (term *terminal) exit() {
	term.t.Helper()
	term.typeText("\\q\r")
	errc := make(chan error, 1)
	go func() { errc <- term.cmd.Wait() }()
	select {
	case err := <-errc:
		if err != nil {
			term.t.Fatalf("sase exited with %v:\n%s", err, term.out)
		}
	case <-time.After(testkit.Deadline):
		term.t.Fatalf("sase did not exit after \\q:\n%s", term.out)
	}
}

// TestShellOnATerminal drives the real shell: the banner with its limit,
// TAB completion, a table fitted to the terminal, the progress line of a
// long query, Ctrl-C stopping it while the shell goes on, history in a
// private file, and \q.
func TestShellOnATerminal(t *testing.T) {
	t.Parallel()
	term := startTerminal(t, "NO_COLOR=1")
	term.waitFor("Results stop at 100 matches here (SET limit = 0 for all)")
	term.waitFor("sase> ")

	term.typeText("SHO\t")
	term.waitFor("SHOW ")
	term.typeText("STR\t")
	term.waitFor("SHOW STREAMS ")
	term.typeText(";\r")
	term.waitFor(" stocks | ")

	// A variable's attributes, over two lines.
	term.typeText("PATTERN SEQ(stock1 a, stock2 b)\r")
	term.waitFor("   -> ")
	term.typeText("WHERE a.vo\t")
	term.waitFor("WHERE a.volume ")
	term.typeText("> 990 WITHIN 2;\r")
	term.waitFor("(1 match, 10000 events")

	// The default limit, and a table narrowed to 100 columns.
	term.typeText("PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120;\r")
	term.waitFor("(stopped at the limit of 100 matches; SET limit = 0 for all)")
	for _, line := range strings.Split(term.out.String(), "\n") {
		if strings.HasPrefix(line, " stock1@") && len([]rune(strings.TrimRight(line, "\r"))) > 100 {
			t.Errorf("a table line wider than the terminal: %q", line)
		}
	}
	if !strings.Contains(term.out.String(), "…") {
		t.Error("no cell was cut to fit the terminal")
	}

	// A long query: its progress line appears after a second, and Ctrl-C
	// stops it.
	term.typeText("SET limit = 0;\r")
	term.waitFor("limit = 0\r\n")
	term.typeText("\\o /dev/null\r")
	term.waitFor("results go to /dev/null")
	term.typeText("PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 100000;\r")
	term.waitFor("query: ")
	term.waitFor(" events/s, ")
	term.typeText("\x03")
	term.waitFor("ERROR: query cancelled after ")
	term.typeText("\\o\r")
	term.waitFor("results go to standard output")
	term.typeText("SET format = csv; SHOW STREAMS;\r")
	term.waitFor("stocks,10000,10,generated,,true,false")
	term.exit()

	home := term.cmd.Dir
	info, err := os.Stat(filepath.Join(home, ".sase_history"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("history file mode %v", info.Mode().Perm())
	}
	history, _ := os.ReadFile(filepath.Join(home, ".sase_history"))
	if !strings.Contains(string(history), "PATTERN SEQ(stock1 a, stock2 b) WHERE a.volume > 990 WITHIN 2;\n") {
		t.Errorf("history:\n%s", history)
	}
}

// TestColorPerStream runs sase with one of stdout and stderr a terminal
// and the other a file: colour goes to the terminal only.
func TestColorPerStream(t *testing.T) {
	t.Parallel()
	query := "SHOW STREAMS; USE nothing;"
	for _, ttyOut := range []bool{true, false} {
		p, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		var file strings.Builder
		cmd := exec.Command(sase, "-c", query)
		cmd.Env = append(os.Environ(), "TERM=xterm", "NO_COLOR=")
		if ttyOut {
			cmd.Stdout, cmd.Stderr = tty, &file
		} else {
			cmd.Stdout, cmd.Stderr = &file, tty
		}
		var shown testkit.SyncBuffer
		go io.Copy(&shown, p)
		if err := cmd.Run(); err == nil {
			t.Fatal("USE nothing succeeded")
		}
		tty.Close()
		testkit.WaitFor(t, &shown, map[bool]string{true: "stocks", false: "ERROR:"}[ttyOut])
		p.Close()
		if !strings.Contains(shown.String(), "\x1b[") {
			t.Errorf("terminal (stdout %v) shows no colour: %q", ttyOut, shown.String())
		}
		if strings.Contains(file.String(), "\x1b") || file.Len() == 0 {
			t.Errorf("redirected stream (stdout %v) %q", !ttyOut, file.String())
		}
	}
}

// TestScriptTableFitsTerminal checks that a script's table is fitted to
// the terminal its stdout is, and left whole when stdout is a file.
func TestScriptTableFitsTerminal(t *testing.T) {
	t.Parallel()
	args := []string{"--limit", "3", "-c", "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120;"}
	p, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sase, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stdout = tty
	var shown testkit.SyncBuffer
	go io.Copy(&shown, p)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	testkit.WaitFor(t, &shown, "stock3@")
	lines := strings.Split(strings.TrimSpace(shown.String()), "\n")
	for _, line := range lines {
		if w := len([]rune(strings.TrimRight(line, "\r"))); w > 80 {
			t.Errorf("%d columns: %q", w, line)
		}
	}
	if !strings.Contains(shown.String(), "…") {
		t.Errorf("no cell was cut to fit:\n%s", shown.String())
	}
	if whole := run(t, "", args...); !strings.Contains(whole.stdout, "stock3@24 {id=24 symbol=3 price=48 volume=719}\n") || strings.Contains(whole.stdout, "…") {
		t.Errorf("to a file the table was cut:\n%s", whole.stdout)
	}
}
