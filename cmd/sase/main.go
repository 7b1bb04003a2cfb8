// Command sase is the sase query shell.
//
//	sase                          the interactive shell, with the stocks stream loaded
//	sase -f FILE / -c 'STMTS'     run scripts and statements (repeatable, in order)
//	sase < script.sase            run a script from standard input
//	sase COMMAND ...              gen, bench, nats: see subcommands
//
// Exit status: 0 on success, 1 if a statement failed, 2 on a usage error,
// 130 when a script is interrupted (SIGINT or SIGTERM: the complete matches
// are written first).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/chzyer/readline"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	_ "github.com/sase-cep/sase/compiler" // the sessions' compiler (query.Registered)
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/repl"
	"github.com/sase-cep/sase/serve"
	"github.com/sase-cep/sase/session"
	"github.com/sase-cep/sase/source"
)

const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitSignal  = 130 // as a shell reports a process ended by SIGINT
	banner      = "sase %s: SASE-style complex event processing. \\help for help, TAB completes, \\q to quit.\n"
	bannerQuery = "The stocks stream is loaded (10000 events). Try:\n  PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120;\n"
	bannerLimit = "Results stop at %d matches here (SET limit = 0 for all); \\x shows one field per line.\n"
)

// shellLimit is the shell's limit on a terminal, as psql pages: a query
// shows its first matches, not 66,017 rows scrolling past. Scripts,
// pipes and -c have none; --limit or SET limit changes it.
const shellLimit = 100

func main() {
	os.Exit(run(os.Args[1:]))
}

// input is one -f or -c flag, kept in command-line order.
type input struct {
	file bool
	text string
}

type inputs []input

// adder returns a flag.Value that appends inputs of one kind to the list.
func (l *inputs) adder(file bool) flag.Value { return inputFlag{l, file} }

type inputFlag struct {
	list *inputs
	file bool
}

func (f inputFlag) String() string { return "" }
func (f inputFlag) Set(v string) error {
	*f.list = append(*f.list, input{f.file, v})
	return nil
}

// subcommand is one of sase's commands besides the shell and scripts.
type subcommand struct {
	name, usage, about string // usage: its arguments, as sase --help lists them
	run                func(args []string) int
}

// subcommands are what sase --help lists, in this order: adding a command
// is adding its entry.
var subcommands = []subcommand{
	{"gen", "gen stocks [--events N]", "write SASE's stock stream as CSV", gen},
	{"bench", "bench [SUITE...]", "engine throughput tables", benchCmd},
	{"nats", "nats COMMAND ...", "NATS JetStream: init, publish, cat, serve", natsCmd},
	{"serve", "serve [-f FILE ...]", "an HTTP API, /metrics, a dashboard (docs/SERVE.md)", func(args []string) int { return serve.Main(args, os.Stdout, os.Stderr) }},
}

func run(args []string) int {
	for _, c := range subcommands {
		if len(args) > 0 && args[0] == c.name {
			return c.run(args[1:])
		}
	}
	fs := flag.NewFlagSet("sase", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported below, the help on stdout
	var in inputs
	fs.Var(in.adder(true), "f", "run the statements in `FILE`, - for stdin (repeatable)")
	fs.Var(in.adder(false), "c", "run `STATEMENTS` (repeatable)")
	format := fs.String("format", string(output.Table), "result format: "+output.FormatList())
	engine := fs.String("engine", "auto", "plan shape: "+strings.Join(sase.EngineNames(), ", "))
	limit := fs.String("limit", "", "stop each query after `N` matches; 0: no limit (the default, but "+strconv.Itoa(shellLimit)+" in the shell on a terminal)")
	workers := fs.String("workers", "", "split a query over `N` workers, by partition or, on a loaded stream, by time; auto (the default): by partition only, on as many as the CPUs, but at most one per "+strconv.Itoa(sase.AutoEvents)+" events of a loaded stream, for --format "+output.ListOf(output.FormatsWith(output.Counted))+" (without --limit), or "+output.ListOf(output.FormatsWith(output.Encoded))+" where the plan estimates few matches an event (EXPLAIN says), else 1 (SET workers likewise)")
	order := fs.String("order", "", "stream: a split query's matches in stream order, as on one worker (the default); any: as the workers find them (SET order likewise)")
	noStocks := fs.Bool("no-stocks", false, "do not preload the built-in stocks stream")
	version := fs.Bool("version", false, "print the version and exit")
	if len(args) == 1 && args[0] == "help" {
		help(fs)
		return exitOK
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help(fs)
			return exitOK
		}
		return usageError(fmt.Errorf("%v (sase --help for usage)", err))
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Errorf("unexpected argument %q (run a script with -f FILE; sase --help for usage)", fs.Arg(0)))
	}
	if *version {
		fmt.Printf("sase %s\n", versionString())
		return exitOK
	}
	set := session.DefaultSettings()
	limitGiven := *limit != ""
	for _, kv := range [][2]string{{"format", *format}, {"engine", *engine}, {"limit", *limit}, {"workers", *workers}, {"order", *order}} {
		if kv[1] == "" {
			continue
		}
		if err := set.Set(kv[0], kv[1]); err != nil {
			return usageError(fmt.Errorf("--%s: %v", kv[0], err))
		}
	}
	shell := len(in) == 0 && readline.DefaultIsTerminal()
	shellLimited := shell && !limitGiven && set.Format == output.Table
	if shellLimited {
		set.Limit = shellLimit
	}
	opts := []session.Option{session.WithSettings(set)}
	if !*noStocks {
		// SASE's default stream, so that the shell and scripts start alike.
		opts = append(opts, session.WithBuiltinStream(source.GenerateStocks("stocks", source.DefaultStockConfig())))
	}

	if shell {
		fmt.Printf(banner, versionString())
		if !*noStocks {
			fmt.Print(bannerQuery)
		}
		if shellLimited {
			fmt.Printf(bannerLimit, shellLimit)
		}
		history := ""
		if home, err := os.UserHomeDir(); err == nil {
			history = filepath.Join(home, ".sase_history")
		}
		if err := repl.Run(context.Background(), history, opts...); err != nil {
			fmt.Fprintln(os.Stderr, "sase:", err)
			return exitFailed
		}
		return exitOK
	}

	// Scripts are coloured as the shell is, each stream when it is a
	// terminal, and their tables fitted to a terminal.
	opts = append(opts, session.WithStyle(repl.StdStyle()), session.WithWidth(repl.TerminalWidth))
	if len(in) > 0 {
		opts = append(opts, session.WithStdin(os.Stdin)) // stdin is free for LOAD '-'
	}
	s := session.New(os.Stdout, os.Stderr, opts...)
	if len(in) == 0 {
		in = inputs{{file: true, text: "-"}}
	}
	// A signal cancels the running statement or the live queries, which
	// write the matches they have completed; then sase exits with 130.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal ends sase at once
	}()
	status := exitOK
	for _, i := range in {
		if err := execInput(ctx, s, i); err != nil {
			if !errors.Is(err, session.ErrFailed) {
				fmt.Fprintln(os.Stderr, "sase:", err)
				return exitFailed
			}
			status = exitFailed // reported; go on, as psql does
		}
		if s.Quit() || ctx.Err() != nil {
			break
		}
	}
	err := s.Wait(ctx)
	switch {
	case ctx.Err() != nil:
		return exitSignal
	case err != nil:
		return exitFailed
	}
	return status
}

// execInput runs a -f file ("-": standard input) or a -c argument. An
// error reading the input is returned; ErrFailed means a statement failed.
func execInput(ctx context.Context, s *session.Session, i input) error {
	switch {
	case !i.file:
		return s.Exec(ctx, &ast.Source{Name: "<command>", Text: i.text})
	case i.text == "-":
		text, err := io.ReadAll(os.Stdin)
		if err != nil {
			return err
		}
		return s.Exec(ctx, &ast.Source{Name: "<stdin>", Text: string(text)})
	}
	return s.ExecFile(ctx, i.text)
}

// newFlags returns a subcommand's flag set, whose usage is the line
// usage, then the flags.
func newFlags(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// isHelp says whether a subcommand's first argument asks for its usage.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// parseFlags parses a subcommand's flags. The usage asked for (-h,
// --help) goes to stdout, as sase --help's; on a bad flag, to stderr
// (parseError then says what is wrong).
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if err == nil {
		return nil
	}
	fs.SetOutput(os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(os.Stdout)
	}
	fs.Usage()
	return err
}

// parseError is the exit status for a parseFlags error, which it reports:
// -h and --help are not an error.
func parseError(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return usageError(err)
}

// usageError reports a bad command line that flag accepted.
func usageError(err error) int {
	fmt.Fprintln(os.Stderr, "sase:", err)
	return exitUsage
}

// help is sase --help and sase help, on stdout.
func help(fs *flag.FlagSet) {
	fmt.Print(`sase: SASE-style complex event processing: find patterns of events in a stream
(a stock1, then a stock2, within 120 ticks, prices rising) and print every match.

Usage:
  sase [flags]                    the shell, with the stocks stream loaded
                                  (a script on stdin when stdin is not a terminal)
  sase -f FILE  /  -c 'STMTS'     run scripts and statements (repeatable, in order)
`)
	for _, c := range subcommands {
		fmt.Printf("  sase %-26s %s\n", c.usage, c.about)
	}
	fmt.Print(`  sase COMMAND --help             a command's usage
  sase help                       this text

Flags:
`)
	fs.SetOutput(os.Stdout)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	fmt.Print("\n" + session.StatementsHelp() + `
Examples:
  sase -c "PATTERN SEQ(stock1 a, stock2 b) WHERE a.price > b.price WITHIN 10 RETURN a.price, b.price"
  sase -c "LOAD 'trades.csv'; PATTERN SEQ(IBM a, Sun b) WHERE a.price > b.price"
  sase -c "PATTERN SEQ(stock1 a, OR(stock2 b, stock3 c), stock4 d) WITHIN 30"
  tail -f app.log.jsonl | sase --format jsonl -f alerts.sase

Docs: README.md and docs/LANGUAGE.md (the language, the shell, the command line)
in the source of module github.com/sase-cep/sase; in the shell, \help.
`)
}

// versionString is the module version the binary was built from, with the
// VCS revision when the build recorded one.
func versionString() string {
	info, ok := debug.ReadBuildInfo()
	return version(info, ok)
}

// version words a build's version: the module version (go install
// module@version), or "devel"; then the VCS revision and whether the
// checkout had changes, which go build and go install record in a
// checkout (go run does not).
func version(info *debug.BuildInfo, ok bool) string {
	if !ok {
		return "unknown (built without module support)"
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	switch {
	case rev != "" && !strings.Contains(v, rev):
		v += " (revision " + rev
		if modified == "true" {
			v += ", modified"
		}
		v += ")"
	case rev == "" && v == "devel":
		v += " (no revision recorded: go run records none; go build or go install in a checkout does)"
	}
	return v
}
