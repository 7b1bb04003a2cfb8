// Package repl is sase's interactive shell: readline with history, the
// prompts, Ctrl-C, and colour on the terminal, around a session (package
// session) that runs the statements.
package repl

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"

	"github.com/chzyer/readline"
	"github.com/fatih/color"

	"github.com/sase-cep/sase/session"
)

// Colors is the shell's style for a session: red errors and bold table
// headers when on.
func Colors(on bool) session.Style {
	if !on {
		return session.Style{}
	}
	red, bold := color.New(color.FgRed, color.Bold), color.New(color.Bold)
	red.EnableColor()
	bold.EnableColor()
	return session.Style{Error: sprint(red), Header: sprint(bold)}
}

// Terminal reports whether colour suits standard output: it is a terminal
// and NO_COLOR is not set (fatih/color's detection).
func Terminal() bool { return !color.NoColor }

func sprint(c *color.Color) func(string) string {
	return func(s string) string { return c.Sprint(s) }
}

// Run is the interactive shell: it starts a session with opts, writing to
// the terminal, and feeds it the lines it reads with readline (history in
// historyFile, "" for none) until \q, Ctrl-D or ctx ends. Ctrl-C while a
// statement runs cancels it; Ctrl-C at the prompt clears the pending input.
// Errors in statements never end it. Queries on live streams run in the
// background, their lines prefixed with "[n] "; STOP QUERY n ends one.
func Run(ctx context.Context, historyFile string, opts ...session.Option) error {
	prompt := color.New(color.FgGreen, color.Bold)
	if !Terminal() {
		prompt.DisableColor()
	}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:          prompt.Sprint(Prompt),
		HistoryFile:     historyFile,
		InterruptPrompt: "^C",
		EOFPrompt:       `\q`,
	})
	if err != nil {
		return err
	}
	defer rl.Close()
	// Background queries print while the user types: readline's writers
	// redraw the prompt and the line being edited after each write.
	opts = append([]session.Option{session.WithStyle(Colors(Terminal()))}, opts...)
	s := session.New(rl.Stdout(), rl.Stderr(), append(opts, session.Interactive())...)
	sh := NewShell(s)

	// readline reads Ctrl-C as a key while it edits a line; while a
	// statement runs the terminal is back in cooked mode and Ctrl-C is
	// SIGINT, which cancels the running statement's context.
	var mu sync.Mutex
	var cancel context.CancelFunc
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
		sh.Process(qctx, line)
		mu.Lock()
		cancel = nil
		mu.Unlock()
		qcancel()
	}
	return ctx.Err()
}
