// Command sase is the sase query shell.
//
//	sase                          the interactive shell, with the stocks stream loaded
//	sase -f FILE / -c 'STMTS'     run scripts and statements (repeatable, in order)
//	sase < script.sase            run a script from standard input
//	sase gen stocks [--events N]  write SASE's stock stream as CSV
//	sase bench [SUITE...]         engine throughput tables
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
	"strings"
	"syscall"

	"github.com/chzyer/readline"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/repl"
	"github.com/sase-cep/sase/session"
	"github.com/sase-cep/sase/source"
)

const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitSignal  = 130 // as a shell reports a process ended by SIGINT
	banner      = "sase %s: SASE-style complex event processing. \\help for help, \\q to quit.\n"
	bannerQuery = "The stocks stream is loaded (10000 events). Try:\n  PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120;\n"
)

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

func run(args []string) int {
	if len(args) > 0 && args[0] == "gen" {
		return gen(args[1:])
	}
	if len(args) > 0 && args[0] == "nats" {
		return natsCmd(args[1:])
	}
	if len(args) > 0 && args[0] == "bench" {
		return benchCmd(args[1:])
	}
	fs := flag.NewFlagSet("sase", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: sase [flags]   (the shell; a script on stdin if it is not a terminal)\n"+
			"       sase gen stocks [flags]   (write a stock stream as CSV)\n"+
			"       sase bench [SUITE...]     (engine throughput tables)\n\nFlags:\n")
		fs.PrintDefaults()
	}
	var in inputs
	fs.Var(in.adder(true), "f", "run the statements in `FILE`, - for stdin (repeatable)")
	fs.Var(in.adder(false), "c", "run `STATEMENTS` (repeatable)")
	format := fs.String("format", "table", "result format: table, csv or jsonl")
	engine := fs.String("engine", "auto", "plan shape: "+strings.Join(sase.EngineNames(), ", "))
	limit := fs.String("limit", "0", "stop each query after `N` matches (0: no limit)")
	noStocks := fs.Bool("no-stocks", false, "do not preload the built-in stocks stream")
	version := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return parseError(err)
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Errorf("unexpected argument %q (run a script with -f FILE)", fs.Arg(0)))
	}
	if *version {
		fmt.Printf("sase %s\n", versionString())
		return exitOK
	}

	set := session.DefaultSettings()
	for _, kv := range [][2]string{{"format", *format}, {"engine", *engine}, {"limit", *limit}} {
		if err := set.Set(kv[0], kv[1]); err != nil {
			return usageError(fmt.Errorf("--%s: %v", kv[0], err))
		}
	}
	opts := []session.Option{session.WithSettings(set)}
	if !*noStocks {
		// SASE's default stream, so that the shell and scripts start alike.
		opts = append(opts, session.WithBuiltinStream(source.GenerateStocks("stocks", source.DefaultStockConfig())))
	}

	if len(in) == 0 && readline.DefaultIsTerminal() {
		fmt.Printf(banner, versionString())
		if !*noStocks {
			fmt.Print(bannerQuery)
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

	// Scripts are coloured as the shell is when stdout is a terminal.
	opts = append(opts, session.WithStyle(repl.Colors(repl.Terminal())))
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

// parseError is the exit status for a flag.Parse error, which flag has
// already printed with the usage; -h and --help are not an error.
func parseError(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

// usageError reports a bad command line that flag accepted.
func usageError(err error) int {
	fmt.Fprintln(os.Stderr, "sase:", err)
	return exitUsage
}

// versionString is the module version the binary was built from, with the
// VCS revision when the build recorded one.
func versionString() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}
