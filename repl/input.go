package repl

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/session"
)

// Prompts of the shell: a new statement, and a statement's continuation.
const (
	Prompt         = "sase> "
	PromptContinue = "   -> "
)

// Shell collects lines of input into statements and hands them to its
// session. It has no terminal of its own; Run reads the lines.
type Shell struct {
	s       *session.Session
	pending strings.Builder // input that does not end a statement yet
	record  func(entry string)
	notes   io.Writer
}

// ShellOption configures a Shell.
type ShellOption func(*Shell)

// WithHistory hands each statement and command the shell runs to record,
// one line each (see historyEntry).
func WithHistory(record func(entry string)) ShellOption {
	return func(sh *Shell) { sh.record = record }
}

// WithNotes gives the shell somewhere to write its own hints (stderr).
func WithNotes(w io.Writer) ShellOption { return func(sh *Shell) { sh.notes = w } }

// NewShell returns a shell over s.
func NewShell(s *session.Session, opts ...ShellOption) *Shell {
	sh := &Shell{s: s, record: func(string) {}, notes: io.Discard}
	for _, o := range opts {
		o(sh)
	}
	return sh
}

// Process takes one line of input. It runs every statement the line
// completes (a ';' outside parentheses, quotes and comments) and keeps the
// rest for the next line; a backslash command runs when no statement is
// pending, and so do help, exit and quit alone on a line (with or without
// ';'), as in psql. It reports whether no statement is pending afterwards,
// that is, whether the next prompt is Prompt rather than PromptContinue.
func (sh *Shell) Process(ctx context.Context, line string) (complete bool) {
	trimmed := strings.TrimSpace(line)
	if word := strings.ToLower(strings.TrimSpace(strings.TrimSuffix(trimmed, ";"))); word == "help" || word == "exit" || word == "quit" {
		if sh.pending.Len() > 0 {
			// Inside a statement the word is most likely a way out.
			fmt.Fprintf(sh.notes, "(a statement is pending: end it with ;, clear it with Ctrl-C, or type \\q to quit)\n")
			return false
		}
		sh.record(trimmed)
		cmd := `\q`
		if word == "help" {
			cmd = `\help`
		}
		sh.s.Exec(ctx, &ast.Source{Name: "<input>", Text: cmd})
		return true
	}
	if sh.pending.Len() == 0 && strings.HasPrefix(trimmed, `\`) {
		sh.record(trimmed)
		sh.s.Exec(ctx, &ast.Source{Name: "<input>", Text: line}) // errors are reported
		return true
	}
	c, err := query.Registered()
	if err != nil {
		fmt.Fprintf(sh.notes, "%v\n", err)
		return true
	}
	sh.pending.WriteString(line)
	sh.pending.WriteByte('\n')
	text := sh.pending.String()
	pieces := c.Split(text)
	done := 0
	for _, p := range pieces {
		if p.Kind == query.Statement {
			done = p.End
		}
	}
	for _, p := range pieces {
		switch {
		case p.End > done:
		case p.Kind == query.Statement:
			sh.record(historyEntry(text[p.Start:p.End]))
		case p.Kind == query.Command:
			sh.record(strings.TrimSpace(text[p.Start:p.End]))
		}
	}
	if done > 0 {
		sh.s.Exec(ctx, &ast.Source{Name: "<input>", Text: text[:done]}) // errors are reported
	}
	sh.pending.Reset()
	if len(pieces) == 0 || pieces[len(pieces)-1].End <= done {
		return true // nothing but blanks after the last statement
	}
	sh.pending.WriteString(text[done:])
	return false
}

// Reset drops the pending input (Ctrl-C at the prompt).
func (sh *Shell) Reset() { sh.pending.Reset() }

// Prompt is the prompt for the next line.
func (sh *Shell) Prompt() string {
	if sh.pending.Len() == 0 {
		return Prompt
	}
	return PromptContinue
}
