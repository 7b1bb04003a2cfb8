package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/sase-cep/sase/ast"
)

// Backslash commands work in scripts as in the shell (docs/LANGUAGE.md, The shell):
// `\i` runs a file, `\timing` flips a setting, `\q` ends the script.

// command is one backslash command: its names (the first is the one help
// shows), its argument for help, what it does, and how it runs.
type command struct {
	names []string
	arg   string
	help  string
	run   func(s *Session, ctx context.Context, arg string) bool
}

// commands are the backslash commands, in the order \help lists them.
// (Set in init: \i runs scripts, which run commands.)
var commands []command

func init() {
	commands = []command{
		{[]string{`\help`, `\?`, `\h`}, "", "this text", func(s *Session, _ context.Context, _ string) bool {
			s.help()
			return true
		}},
		{[]string{`\i`, `\include`}, "FILE", "run the statements in FILE (in a script: relative to its folder)", (*Session).include},
		{[]string{`\o`, `\out`}, "[FILE]", "send query results to FILE; alone: back to standard output", (*Session).output},
		{[]string{`\x`}, "[on|off]", "expanded tables: one field per line", func(s *Session, _ context.Context, arg string) bool {
			return s.toggle("expanded", arg, "expanded display is %s")
		}},
		{[]string{`\timing`}, "[on|off]", "turn timing on or off", func(s *Session, _ context.Context, arg string) bool {
			return s.toggle("timing", arg, "timing is %s")
		}},
		{[]string{`\set`}, "[NAME VALUE]", "list the settings, or SET one", (*Session).setCommand},
		{[]string{`\q`, `\quit`}, "", "quit (or Ctrl-D); Ctrl-C cancels a running query or clears the input", func(s *Session, _ context.Context, _ string) bool {
			s.quit = true
			return true
		}},
	}
}

// Commands lists every backslash command name, aliases included.
func Commands() []string {
	var names []string
	for _, c := range commands {
		names = append(names, c.names...)
	}
	return names
}

// command runs a backslash command line such as `\i file.sase`.
func (s *Session) command(ctx context.Context, line string) (ok bool) {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	for _, c := range commands {
		if slices.Contains(c.names, name) {
			return c.run(s, ctx, arg)
		}
	}
	s.fail(fmt.Errorf(`unknown command %s (\help lists the commands)`, name))
	return false
}

// toggle sets an on/off setting to arg, or flips it when arg is empty,
// and says what it now is.
func (s *Session) toggle(key, arg, format string) bool {
	if arg == "" {
		arg = onOff(s.set.get(key) == "off")
	}
	if err := s.set.Set(key, arg); err != nil {
		s.fail(err)
		return false
	}
	s.note(format, s.set.get(key))
	return true
}

// showSettings is SHOW SETTINGS and `\set` alone: the settings on stdout,
// one `name = value` a line.
func (s *Session) showSettings() {
	for _, k := range settingKeys {
		fmt.Fprintf(s.out, "%s = %s\n", k, s.set.get(k))
	}
	s.out.Flush()
}

// setCommand is `\set`: alone it lists the settings on stdout, one
// `name = value` a line; `\set name value` is SET name = value.
func (s *Session) setCommand(_ context.Context, arg string) bool {
	if arg == "" {
		s.showSettings()
		return true
	}
	key, value, _ := strings.Cut(arg, " ")
	if err := s.set.Set(key, strings.TrimSpace(value)); err != nil {
		s.fail(fmt.Errorf(`\set %s: %w`, key, err))
		return false
	}
	s.note("%s = %s", strings.ToLower(key), s.set.get(strings.ToLower(key)))
	return true
}

// fileArg reads a command's file name: as written, or in quotes ('my
// file.sase' or "my file.sase", a doubled quote standing for one) when it
// holds spaces.
func fileArg(arg string) (string, error) {
	if arg == "" || (arg[0] != '\'' && arg[0] != '"') {
		return arg, nil
	}
	q := arg[:1]
	if len(arg) < 2 || !strings.HasSuffix(arg, q) {
		return "", fmt.Errorf("unterminated quote in %s", arg)
	}
	inner := arg[1 : len(arg)-1]
	if strings.Contains(strings.ReplaceAll(inner, q+q, ""), q) {
		return "", fmt.Errorf("unexpected %s in %s (a quote inside the name is doubled)", q, arg)
	}
	return strings.ReplaceAll(inner, q+q, q), nil
}

// output is `\o FILE`: query results go to FILE (created or emptied), or
// with no argument back to stdout. Messages stay on stderr. Live queries
// started before keep writing where they did.
func (s *Session) output(_ context.Context, arg string) bool {
	name, err := fileArg(arg)
	if err != nil {
		s.fail(fmt.Errorf(`\o: %w`, err))
		return false
	}
	res := &results{w: s.stdout}
	if name != "" {
		if name, err = s.allow(name); err != nil {
			s.fail(fmt.Errorf(`\o: %w`, err))
			return false
		}
		f, err := os.Create(name)
		if err != nil {
			s.fail(fmt.Errorf(`\o: %w`, err))
			return false
		}
		res = &results{w: f, file: f}
	}
	s.out.Flush()
	old := s.res
	s.res = res.hold()
	s.out.Reset(lockedWriter{s.outs, res.w})
	if err := old.release(); err != nil {
		s.fail(fmt.Errorf(`\o: closing %s: %w`, old.file.Name(), err))
		return false
	}
	if name == "" {
		s.note("results go to standard output")
	} else {
		s.note("results go to %s", name)
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
func (s *Session) include(ctx context.Context, arg string) bool {
	name, err := fileArg(arg)
	if err == nil && name == "" {
		err = errors.New(`\i needs a file name: \i queries.sase`)
	}
	if err != nil {
		s.fail(err)
		return false
	}
	written := name
	if name, err = s.allow(s.path(name)); err != nil {
		s.fail(fmt.Errorf(`\i %s: %w`, written, err))
		return false
	}
	if err = s.checkInclude(name); err != nil {
		s.fail(fmt.Errorf(`\i %s: %w`, written, err))
		return false
	}
	err = s.ExecFile(ctx, name)
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

// StatementsHelp is the statements in one screen, for \help and sase
// --help.
func StatementsHelp() string {
	return fmt.Sprintf(statementsHelp, strings.Join(engineNames(), "|"))
}

const statementsHelp = `Statements (end each with ;):
  LOAD 'file.csv' [AS name] [FORMAT csv|jsonl] [WITH (type_column = 'symbol', ts_column = 'time', time_unit = 'ms')]
  LOAD '-' ...                           a live stream from standard input (a query needs WITHIN
                                         unless it is one event: PATTERN A a)
  LOAD 'file' FOLLOW ...                 a live stream: the file and what is appended to it (tail -f)
  LISTEN 'tcp://127.0.0.1:7000' [AS name] [FORMAT csv|jsonl] [WITH (on_error = 'stop')]
                                         a live stream fed by producers that connect
  GENERATE STOCKS [AS name] [WITH (events = 10000, symbols = 10, seed = 11, max_price = 100,
                                   max_volume = 1000, increase_probability = 101)]
  USE name                               make a stream the current one
  SHOW STREAMS | SHOW TYPES [FROM name] | DESCRIBE name
  SHOW QUERIES | STOP QUERY n            queries running in the background on live streams
  SET engine = %s
  SET format = table|csv|jsonl|count   SET limit = N (0: all)   SET timing = on|off   SET expanded = on|off
  SHOW SETTINGS                          the settings (as \set)
  [EXPLAIN [ANALYZE] [(FORMAT dot|json)]] PATTERN pattern [FROM name] [WHERE condition] [WITHIN duration] [RETURN items [INTO name]]
                                         (INTO: the matches become the events of the stream name)
  pattern: T v | ANY(T1, T2) v | !T v (none between) | T+ v[] (also * ^k {n,} {n,m} {n}) | T? v (optional)
         | SEQ(item, ...) in order | AND(item, ...) all, any order | OR(item, ...) one of | SEQ(...)? optional
`

const examplesHelp = `
Example queries on the built-in stocks stream:
  PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120;
  PATTERN SEQ(stock1 a, !stock2 n, stock3 c) WHERE a.price < c.price WITHIN 50 RETURN a.price, c.price;
  PATTERN SEQ(stock1 a, stock2+ b[], stock3 c) WHERE b[i].price > b[i-1].price WITHIN 20;
  PATTERN SEQ(stock1 a, OR(stock2 b, stock3 c), stock4 d) WITHIN 30;
  PATTERN AND(stock1 a, stock2 b) WHERE a.price < b.price WITHIN 10;
  PATTERN SEQ(stock1 a, stock2? b, stock3{2,3} c[]) WITHIN 20;
`

// help writes \help: the statements, examples and the commands.
func (s *Session) help() {
	s.out.WriteString(StatementsHelp())
	s.out.WriteString(examplesHelp)
	s.out.WriteString("\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(s.out, "  %-16s %s\n", c.names[0]+" "+c.arg, c.help)
	}
	s.out.Flush()
}
