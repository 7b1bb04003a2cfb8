package main_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sase-cep/sase/internal/testkit"
)

// openPTY opens a pseudo-terminal pair: the shell runs on tty as on a
// terminal, the test types and reads on pty.
func openPTY(t *testing.T) (pty, tty *os.File) {
	t.Helper()
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pty.Close() })
	if err := unix.IoctlSetPointerInt(int(pty.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(pty.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return pty, tty
}

// TestTypeahead types a statement on the terminal while a query runs
// (issue 29): it is not lost, but becomes the next input line, run once
// the query has ended (the terminal echoes it meanwhile: it is in cooked
// mode while a statement runs).
func TestTypeahead(t *testing.T) {
	t.Parallel()
	pty, tty := openPTY(t)
	cmd := exec.Command(sase, "--no-stocks")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "TERM=dumb")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := &testkit.SyncBuffer{}
	go io.Copy(out, pty)
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	io.WriteString(pty, "SET limit = 0; SET format = count; GENERATE STOCKS AS big WITH (events = 2000000); PATTERN SEQ(stock1 a, stock2 b, stock3 c) FROM big WITHIN 3000;\r")
	// The query starts after the note on big: the next line is typed
	// while it runs.
	testkit.WaitFor(t, out, "generated big: ")
	io.WriteString(pty, "SET limit = 7;\r")
	testkit.WaitFor(t, out, "limit = 7\r\n") // SET's answer; the echo has its ';'
	io.WriteString(pty, "\\q\r")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := out.String()
	summary := strings.Index(text, " events on big")
	if summary < 0 || strings.Index(text, "limit = 7\r\n") < summary {
		t.Errorf("the line typed during the query did not run after it:\n%s", text)
	}
}
