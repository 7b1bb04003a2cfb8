package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
)

// Backslash commands work in scripts as in the shell (LANGUAGE.md §7):
// `\i` runs a file, `\timing` flips a setting, `\q` ends the script.

// command runs a backslash command line such as `\i file.sase`.
func (s *Session) command(ctx context.Context, line string) (ok bool) {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case `\q`, `\quit`:
		s.quit = true
	case `\?`, `\h`, `\help`:
		fmt.Fprintf(s.out, helpText, strings.Join(sase.EngineNames(), "|"))
		s.out.Flush()
	case `\timing`:
		v := arg
		if v == "" {
			v = onOff(!s.set.Timing)
		}
		if err := s.set.Set("timing", v); err != nil {
			s.fail(err)
			return false
		}
		s.note("timing is %s", onOff(s.set.Timing))
	case `\i`, `\include`:
		if arg == "" {
			s.fail(errors.New(`\i needs a file name: \i queries.sase`))
			return false
		}
		return s.include(ctx, arg)
	default:
		s.fail(fmt.Errorf(`unknown command %s (\help lists the commands)`, name))
		return false
	}
	return true
}

// maxIncludeDepth bounds how deeply scripts include one another. Cycles
// are caught before it; the bound stops a chain of distinct files (made
// by a generator, say) before it exhausts the stack.
const maxIncludeDepth = 32

// script is a file being run, as \i or ExecFile opened it.
type script struct {
	name string // as it was given
	info os.FileInfo
}

// include runs `\i name`.
func (s *Session) include(ctx context.Context, name string) bool {
	if err := s.checkInclude(name); err != nil {
		s.fail(fmt.Errorf(`\i %s: %w`, name, err))
		return false
	}
	err := s.ExecFile(ctx, name)
	if err != nil && !errors.Is(err, ErrFailed) {
		s.fail(err) // the file could not be read; it names the file
	}
	return err == nil
}

// checkInclude refuses a file that is already running (it would include
// itself, directly or through others, without end) and a nesting deeper
// than maxIncludeDepth. A file that cannot be opened passes: ExecFile
// reports it.
func (s *Session) checkInclude(name string) error {
	if info, err := os.Stat(name); err == nil {
		for i, f := range s.files {
			if os.SameFile(f.info, info) {
				chain := make([]string, 0, len(s.files)-i+1)
				for _, f := range s.files[i:] {
					chain = append(chain, f.name)
				}
				return fmt.Errorf("include cycle: %s", strings.Join(append(chain, name), " -> "))
			}
		}
	}
	if len(s.files) >= maxIncludeDepth {
		return fmt.Errorf("scripts nested more than %d deep (%s -> ... -> %s)", maxIncludeDepth, s.files[0].name, name)
	}
	return nil
}

// ExecFile runs the script in the file at path, as Exec does (`sase -f`,
// and `\i` in a script). An error opening or reading the file is returned
// and not reported; ErrFailed means a statement failed and was reported.
func (s *Session) ExecFile(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	text, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	s.files = append(s.files, script{path, info})
	defer func() { s.files = s.files[:len(s.files)-1] }()
	return s.Exec(ctx, &ast.Source{Name: path, Text: string(text)})
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
  [EXPLAIN [ANALYZE]] PATTERN pattern [FROM name] [WHERE condition] [WITHIN duration] [RETURN items [INTO name]]
                                         (INTO: the matches become the events of the stream name)

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
