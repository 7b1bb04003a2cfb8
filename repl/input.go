package repl

import (
	"context"
	"strings"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/grammar"
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
}

// NewShell returns a shell over s.
func NewShell(s *session.Session) *Shell { return &Shell{s: s} }

// Process takes one line of input. It runs every statement the line
// completes (a ';' outside parentheses, quotes and comments) and keeps the
// rest for the next line; a backslash command runs when no statement is
// pending. It reports whether no statement is pending afterwards, that is,
// whether the next prompt is Prompt rather than PromptContinue.
func (sh *Shell) Process(ctx context.Context, line string) (complete bool) {
	if sh.pending.Len() == 0 && strings.HasPrefix(strings.TrimSpace(line), `\`) {
		sh.s.Exec(ctx, &ast.Source{Name: "<input>", Text: line}) // errors are reported
		return true
	}
	sh.pending.WriteString(line)
	sh.pending.WriteByte('\n')
	text := sh.pending.String()
	pieces := grammar.Split(text)
	done := 0
	for _, p := range pieces {
		if p.Kind == grammar.Statement {
			done = p.End
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
