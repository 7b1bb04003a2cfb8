package repl

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/optimizer"
)

// Prompts of the shell: a new statement, and a statement's continuation.
const (
	Prompt         = "sase> "
	PromptContinue = "   -> "
)

// Process takes one line of shell input. It runs every statement the line
// completes (a ';' outside parentheses, quotes and comments) and keeps the
// rest for the next line; a backslash command runs when no statement is
// pending. It reports whether no statement is pending afterwards, that is,
// whether the next prompt is Prompt rather than PromptContinue.
func (s *Session) Process(ctx context.Context, line string) (complete bool) {
	if s.pending.Len() == 0 && strings.HasPrefix(strings.TrimSpace(line), `\`) {
		s.pending.Reset()
		s.command(ctx, strings.TrimSpace(line))
		return true
	}
	s.pending.WriteString(line)
	s.pending.WriteByte('\n')
	text := s.pending.String()
	done := 0
	for {
		n := statementEnd(text[done:])
		if n < 0 {
			break
		}
		done += n
	}
	if done > 0 {
		s.Exec(ctx, &ast.Source{Name: "<input>", Text: text[:done]}) // errors are reported
	}
	s.pending.Reset()
	if isBlank(text[done:]) {
		return true
	}
	s.pending.WriteString(text[done:])
	return false
}

// Reset drops the pending input (Ctrl-C at the prompt).
func (s *Session) Reset() { s.pending.Reset() }

// prompt is the prompt for the next line.
func (s *Session) prompt() string {
	if s.pending.Len() == 0 {
		return Prompt
	}
	return PromptContinue
}

// command runs a backslash command line such as `\i file.sase`.
func (s *Session) command(ctx context.Context, line string) (ok bool) {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case `\q`, `\quit`:
		s.quit = true
	case `\?`, `\h`, `\help`:
		fmt.Fprintf(s.out, helpText, strings.Join(optimizer.EngineNames(), "|"))
		s.out.Flush()
	case `\timing`:
		v := arg
		if v == "" {
			v = onOff(!s.set.timing)
		}
		if err := s.set.set("timing", v); err != nil {
			s.fail(err)
			return false
		}
		s.note("timing is %s", onOff(s.set.timing))
	case `\i`, `\include`:
		if arg == "" {
			s.fail(fmt.Errorf(`\i needs a file name: \i queries.sase`))
			return false
		}
		text, err := os.ReadFile(arg)
		if err != nil {
			s.fail(err)
			return false
		}
		return s.Exec(ctx, &ast.Source{Name: arg, Text: string(text)}) == nil
	default:
		s.fail(fmt.Errorf(`unknown command %s (\help lists the commands)`, name))
		return false
	}
	return true
}

const helpText = `Statements (end each with ;):
  LOAD 'file.csv' [AS name] [FORMAT csv|jsonl] [WITH (type_column = 'symbol', ts_column = 'time', time_unit = 'ms')]
  LOAD '-' ...                           a live stream from standard input (queries need WITHIN)
  LOAD 'file' FOLLOW ...                 a live stream: the file and what is appended to it (tail -f)
  LISTEN 'tcp://127.0.0.1:7000' [AS name] [FORMAT csv|jsonl] [WITH (on_error = 'stop')]
                                         a live stream fed by producers that connect
  GENERATE STOCKS [AS name] [WITH (events = 10000, symbols = 10, seed = 11, max_price = 100,
                                   max_volume = 1000, increase_probability = 101)]
  USE name                               make a stream the current one
  SHOW STREAMS | SHOW TYPES [FROM name] | DESCRIBE name
  SHOW QUERIES | STOP QUERY n            queries running in the background on live streams
  SET engine = %s
  SET format = table|csv|jsonl   SET limit = N (0: all)   SET timing = on|off
  [EXPLAIN [ANALYZE]] PATTERN pattern [FROM name] [WHERE condition] [WITHIN duration] [RETURN items]

Example queries on the built-in stocks stream:
  PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120;
  PATTERN SEQ(stock1 a, !stock2 n, stock3 c) WHERE a.price < c.price WITHIN 50 RETURN a.price, c.price;
  PATTERN SEQ(stock1 a, stock2+ b[], stock3 c) WHERE b[i].price > b[i-1].price WITHIN 20;

Commands:
  \help       this text
  \i FILE     run the statements in FILE
  \timing     turn timing on or off
  \q          quit (or Ctrl-D); Ctrl-C cancels a running query or clears the input
`
