// Package repl is sase's interactive shell: readline with tab completion
// and a history of whole statements, the prompts, Ctrl-C, a progress line
// and colour on the terminal, around a session (package session) that
// runs the statements.
package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/chzyer/readline"
	"github.com/fatih/color"

	"github.com/sase-cep/sase/session"
)

// Colors is the shell's style for a session: bold table headers when
// stdout gets colour, red errors when stderr does.
func Colors(stdout, stderr bool) session.Style {
	var st session.Style
	if stdout {
		bold := color.New(color.Bold)
		bold.EnableColor()
		st.Header = sprint(bold)
	}
	if stderr {
		red := color.New(color.FgRed, color.Bold)
		red.EnableColor()
		st.Error = sprint(red)
	}
	return st
}

// Color reports whether a stream gets colour: it is a terminal, and the
// environment (getenv) neither sets NO_COLOR (to anything but "") nor has
// TERM=dumb. stdout and stderr are asked separately, so that colour never
// reaches a file or pipe one of them is redirected to.
func Color(getenv func(string) string, terminal bool) bool {
	return terminal && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// Terminal reports whether f is a terminal.
func Terminal(f *os.File) bool { return readline.IsTerminal(int(f.Fd())) }

// TerminalWidth is the width of the terminal stdout is, 0 if it is none:
// tables are fitted to it.
func TerminalWidth() int {
	if !Terminal(os.Stdout) {
		return 0
	}
	return max(readline.GetScreenWidth(), 0)
}

// StdStyle is the style for a session writing to os.Stdout and os.Stderr.
func StdStyle() session.Style {
	return Colors(Color(os.Getenv, Terminal(os.Stdout)), Color(os.Getenv, Terminal(os.Stderr)))
}

func sprint(c *color.Color) func(string) string {
	return func(s string) string { return c.Sprint(s) }
}

// ErrAbandoned is what Run returns when a second Ctrl-C came within a
// second of the first while a statement still ran: the escape from a
// statement that does not notice its cancel.
var ErrAbandoned = errors.New("abandoned the running statement (a second Ctrl-C)")

// interrupts counts the Ctrl-Cs during one statement.
type interrupts struct{ last time.Time }

// interrupt records a Ctrl-C at now and reports whether it is the second
// within a second, which abandons the statement.
func (i *interrupts) interrupt(now time.Time) bool {
	again := !i.last.IsZero() && now.Sub(i.last) < time.Second
	i.last = now
	return again
}

// Run is the interactive shell: it starts a session with opts, writing to
// the terminal, and feeds it the lines it reads with readline (history in
// historyFile, "" for none; completion with TAB) until \q, Ctrl-D or ctx
// ends. Ctrl-C while a statement runs cancels it, and a second one within
// a second returns ErrAbandoned at once; Ctrl-C at the prompt
// clears the pending input. A statement that runs longer than a second
// shows a progress line on stderr, if stderr is a terminal. Errors in
// statements never end it. Queries on live streams run in the background,
// their lines prefixed with "[n] "; STOP QUERY n ends one.
func Run(ctx context.Context, historyFile string, opts ...session.Option) error {
	prompt := color.New(color.FgGreen, color.Bold)
	if Color(os.Getenv, Terminal(os.Stdout)) {
		prompt.EnableColor()
	} else {
		prompt.DisableColor()
	}
	sh := &Shell{record: func(string) {}}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 prompt.Sprint(Prompt),
		InterruptPrompt:        "^C",
		EOFPrompt:              `\q`,
		AutoComplete:           autoComplete{sh},
		DisableAutoSaveHistory: true, // one entry per statement: see history
	})
	if err != nil {
		return err
	}
	defer rl.Close()
	if historyFile != "" {
		h, entries, err := openHistory(historyFile)
		if err != nil {
			fmt.Fprintf(rl.Stderr(), "sase: no history: %v\n", err)
		} else {
			defer h.close()
			for _, e := range entries {
				rl.SaveHistory(e)
			}
			sh.record = func(e string) {
				if e != "" {
					rl.SaveHistory(e)
					h.add(e)
				}
			}
		}
	}
	// Background queries print while the user types: readline's writers
	// redraw the prompt and the line being edited after each write. The
	// progress line is erased before anything else is written.
	pl := &progressLine{w: rl.Stderr(), on: Terminal(os.Stderr)}
	opts = append([]session.Option{
		session.WithStyle(StdStyle()),
		session.WithWidth(TerminalWidth),
		session.TrackProgress(),
	}, opts...)
	s := session.New(pl.wrap(rl.Stdout()), pl.wrap(rl.Stderr()), append(opts, session.Interactive())...)
	sh.s, sh.notes = s, pl.wrap(rl.Stderr())

	// readline reads Ctrl-C as a key while it edits a line; while a
	// statement runs the terminal is back in cooked mode and Ctrl-C is
	// SIGINT, which cancels the running statement's context.
	var mu sync.Mutex
	var cancel context.CancelFunc
	var ints interrupts
	abandon := make(chan struct{})
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer func() {
		signal.Stop(sigs)
		close(sigs)
	}()
	go func() {
		for range sigs {
			mu.Lock()
			if cancel != nil {
				cancel()
				if ints.interrupt(time.Now()) {
					close(abandon)
					cancel = nil
				}
			}
			mu.Unlock()
		}
	}()

	for !s.Quit() && ctx.Err() == nil {
		rl.SetPrompt(prompt.Sprint(sh.Prompt()))
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			sh.Reset()
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		qctx, qcancel := context.WithCancel(ctx)
		mu.Lock()
		cancel = qcancel
		mu.Unlock()
		stop := pl.show(s)
		done := make(chan struct{})
		go func() {
			defer close(done)
			sh.Process(qctx, line)
		}()
		select {
		case <-done:
		case <-abandon:
			stop()
			return ErrAbandoned // the statement may still run: only exiting ends it
		}
		stop()
		mu.Lock()
		ints = interrupts{}
		cancel = nil
		mu.Unlock()
		qcancel()
	}
	return ctx.Err()
}
