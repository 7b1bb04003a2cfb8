package repl

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"

	"github.com/chzyer/readline"
)

// Run is the interactive shell: it reads lines with readline (history in
// historyFile, "" for none) and feeds them to s.Process until \q, Ctrl-D
// or ctx ends. Ctrl-C while a query runs cancels that query; Ctrl-C at the
// prompt clears the pending input. Errors in statements never end it.
// Queries on live streams run in the background, their lines prefixed with
// "[n] "; STOP QUERY n ends one.
func Run(ctx context.Context, s *Session, historyFile string) error {
	rl, err := readline.NewEx(&readline.Config{
		Prompt:          s.paint.prompt.Sprint(Prompt),
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
	s.term.mu.Lock()
	s.term.out, s.term.err = rl.Stdout(), rl.Stderr()
	s.term.mu.Unlock()
	Interactive()(s)

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

	for !s.quit && ctx.Err() == nil {
		rl.SetPrompt(s.paint.prompt.Sprint(s.prompt()))
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			s.Reset()
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
		s.Process(qctx, line)
		mu.Lock()
		cancel = nil
		mu.Unlock()
		qcancel()
	}
	return ctx.Err()
}
