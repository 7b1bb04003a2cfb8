package serve

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/session"
	"github.com/sase-cep/sase/source"
)

// scripts is the repeatable -f flag.
type scripts []string

func (s *scripts) String() string     { return "" }
func (s *scripts) Set(v string) error { *s = append(*s, v); return nil }

// Main is `sase serve ARGS`: it returns the exit status (0 after SIGINT
// or SIGTERM, 1 when the scripts fail or the address cannot be used, 2
// on a usage error). Live queries' matches go to stdout, messages to
// stderr.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sase serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var files scripts
	fs.Var(&files, "f", "run the statements in `FILE` first (repeatable, in order)")
	listen := fs.String("listen", DefaultListen, "serve on `ADDR`; one that is not loopback needs --token")
	token := fs.String("token", os.Getenv("SASE_TOKEN"), "require `TOKEN` as Authorization: Bearer on every request (default $SASE_TOKEN)")
	data := fs.String("data", "", "the API's statements may read and write files only under `DIR` (default: no files)")
	format := fs.String("format", "jsonl", "live queries' matches on stdout: "+output.FormatList())
	noStocks := fs.Bool("no-stocks", false, "do not preload the built-in stocks stream")
	follow := fs.Int("follow-buffer", DefaultFollowBuffer, "matches a follower may fall behind before it is cut off")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sase serve: unexpected argument %q (scripts go with -f)\n", fs.Arg(0))
		return 2
	}
	set := session.DefaultSettings()
	if err := set.Set("format", *format); err != nil {
		fmt.Fprintf(stderr, "sase serve: --format: %v\n", err)
		return 2
	}
	opts := []session.Option{session.WithSettings(set)}
	if !*noStocks {
		opts = append(opts, session.WithBuiltinStream(source.GenerateStocks("stocks", source.DefaultStockConfig())))
	}
	sv, err := New(Config{Listen: *listen, Token: *token, Data: *data, Log: stdout, Errors: stderr, FollowBuffer: *follow, Session: opts})
	if err != nil {
		fmt.Fprintf(stderr, "sase serve: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := sv.Run(ctx, files); err != nil {
		fmt.Fprintf(stderr, "sase serve: %v\n", err)
		return 1
	}
	return 0
}

// Run listens on Config.Listen, runs the scripts (the API answers 503
// meanwhile), and serves until ctx is done; then it stops gracefully:
// the followers end, the live queries stop writing their matches and
// summaries, and open requests get a few seconds to finish.
func (sv *Server) Run(ctx context.Context, files []string) error {
	ln, err := net.Listen("tcp", sv.cfg.Listen)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: sv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(sv.cfg.Errors, "sase serve: listening on http://%s\n", ln.Addr())
	if err := sv.RunScripts(ctx, files); err != nil {
		hs.Close()
		sv.Close()
		return err
	}
	select {
	case <-ctx.Done():
	case err := <-served:
		sv.Close()
		return err
	}
	sv.endFollowers() // so that Shutdown need not wait for them
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = hs.Shutdown(shut)
	sv.Close()
	return err
}
