package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sase-cep/sase/natsio"
)

// natsUsages are the nats commands' usage lines, by name.
var natsUsages = map[string]string{
	"init":    "sase nats init URL --stream S [--partitions P] [--key ATTR] [--subjects PREFIX]",
	"publish": "sase nats publish URL --stream S [--key ATTR] [--format csv|jsonl] [--batch N] [--linger 5ms] [--tick 1s] [FILE|-]",
	"cat":     "sase nats cat URL --stream S   (each message the stream holds, one a line)",
	"serve":   "sase nats serve [--addr 127.0.0.1:4222] [--dir DIR]   (a local server; built with -tags natsserver)",
}

var natsUsage = "usage: " + natsUsages["init"] + "\n       " + natsUsages["publish"] + "\n       " + natsUsages["cat"] + "\n       " + natsUsages["serve"] +
	"\nURL is nats://host:port (the stream may be its path instead of --stream); sase nats COMMAND --help for its flags."

// natsCmd is `sase nats`: create an events stream, publish a file to it,
// or run a local server.
func natsCmd(args []string) int {
	switch {
	case len(args) == 0:
		return usageError(errors.New(natsUsage))
	case isHelp(args[0]):
		fmt.Println(natsUsage)
		return exitOK
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "init":
		err = natsInit(ctx, args[1:])
	case "publish":
		err = natsPublish(ctx, args[1:])
	case "cat":
		err = natsCat(ctx, args[1:])
	case "serve":
		err = natsServe(ctx, args[1:])
	default:
		return usageError(fmt.Errorf("unknown command nats %s\n%s", args[0], natsUsage))
	}
	var usage usageErr
	switch {
	case errors.As(err, &usage):
		return usageError(usage.error)
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil && ctx.Err() != nil && args[0] == "publish":
		fmt.Fprintln(os.Stderr, "sase:", err)
		return exitSignal
	case err != nil:
		fmt.Fprintln(os.Stderr, "sase:", err)
		return exitFailed
	}
	return exitOK
}

type usageErr struct{ error }

// natsParse is parseFlags for a nats command: a bad flag is a usage error.
func natsParse(fs *flag.FlagSet, args []string) error {
	err := parseFlags(fs, args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return usageErr{err}
	}
	return err
}

// inputID is a file's identity for its messages' Msg-Ids: its absolute
// path, size and modification time, so that publishing it again is
// idempotent while a changed file is new.
func inputID(f *os.File) (string, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(f.Name())
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", abs, fi.Size(), fi.ModTime().UnixNano()))
	return hex.EncodeToString(sum[:12]), nil
}

// natsFlags parses URL [flags] [ARG]: the URL comes first, then flags,
// then at most one more argument.
func natsFlags(fs *flag.FlagSet, args []string, stream *string) (server string, rest []string, err error) {
	fs.StringVar(stream, "stream", "", "the stream's `NAME`")
	switch {
	case len(args) > 0 && isHelp(args[0]):
		return "", nil, natsParse(fs, []string{"-h"})
	case len(args) == 0 || strings.HasPrefix(args[0], "-"):
		return "", nil, usageErr{fmt.Errorf("sase nats %s: the server URL comes first\n%s", fs.Name(), natsUsage)}
	}
	if err := natsParse(fs, args[1:]); err != nil {
		return "", nil, err
	}
	u, err := url.Parse(args[0])
	if err != nil || u.Scheme != "nats" || u.Host == "" {
		return "", nil, usageErr{fmt.Errorf("%q is not a server URL like nats://127.0.0.1:4222", args[0])}
	}
	if name := strings.Trim(u.Path, "/"); name != "" && *stream == "" {
		*stream = name
	}
	if *stream == "" {
		return "", nil, usageErr{fmt.Errorf("sase nats %s: --stream is missing", fs.Name())}
	}
	u.Path = "/" + *stream
	t, err := natsio.ParseURL(u)
	if err != nil {
		return "", nil, usageErr{err}
	}
	return t.Server, fs.Args(), nil
}

func natsInit(ctx context.Context, args []string) error {
	fs := newFlags("init", natsUsages["init"])
	var stream string
	partitions := fs.Int("partitions", 1, "number of partitions `P`: PREFIX.<key> is stored as <p>.PREFIX")
	key := fs.String("key", "", "the `ATTR` producers key by: a group runs a query with [ATTR] per partition")
	subjects := fs.String("subjects", "", "the stream takes `PREFIX`.<key> (by default its name in lower case: EVENTS takes events.*)")
	server, rest, err := natsFlags(fs, args, &stream)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErr{fmt.Errorf("unexpected argument %q", rest[0])}
	}
	nc, js, err := natsio.Connect(ctx, server, "sase nats init")
	if err != nil {
		return err
	}
	defer nc.Close()
	st, err := natsio.InitStream(ctx, js, stream, *partitions, *key, *subjects)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "stream %s on %s: publish on %s.<key>, stored in %d partitions\n", stream, server, natsio.Subjects(st), *partitions)
	return nil
}

func natsCat(ctx context.Context, args []string) error {
	fs := newFlags("cat", natsUsages["cat"])
	var stream string
	server, rest, err := natsFlags(fs, args, &stream)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErr{fmt.Errorf("unexpected argument %q", rest[0])}
	}
	nc, js, err := natsio.Connect(ctx, server, "sase nats cat")
	if err != nil {
		return err
	}
	defer nc.Close()
	return natsio.Cat(ctx, js, server, stream, os.Stdout)
}

func natsPublish(ctx context.Context, args []string) error {
	fs := newFlags("publish", natsUsages["publish"])
	var stream string
	var c natsio.PublishConfig
	fs.StringVar(&c.Key, "key", "", "the `ATTR` whose value is the subject's last token (events.<value>)")
	fs.StringVar(&c.Format, "format", "", "csv or jsonl (by default, told by the first line)")
	fs.DurationVar(&c.Tick, "tick", 0, "publish a tick {\"ts\": now} after each `D` without a line")
	fs.DurationVar(&c.TickUnit, "tick-unit", time.Millisecond, "the duration of one timestamp tick, for --tick")
	fs.IntVar(&c.Batch, "batch", 0, fmt.Sprintf("the most lines of one partition a message carries (1 to %d; by default %d, or 1 on a partitioned stream)", natsio.MaxBatch, natsio.DefaultBatch))
	fs.DurationVar(&c.Linger, "linger", natsio.DefaultLinger, "the longest a line waits for its message to fill")
	server, rest, err := natsFlags(fs, args, &stream)
	if err != nil {
		return err
	}
	var r io.Reader = os.Stdin
	switch {
	case len(rest) > 1:
		return usageErr{fmt.Errorf("unexpected argument %q", rest[1])}
	case len(rest) == 1 && rest[0] != "-":
		f, err := os.Open(rest[0])
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
		if c.ID, err = inputID(f); err != nil {
			return err
		}
	}
	nc, js, err := natsio.Connect(ctx, server, "sase nats publish")
	if err != nil {
		return err
	}
	defer nc.Close()
	c.Stream = stream
	n, err := natsio.Publish(ctx, js, r, c)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("interrupted: %d events in %d messages acknowledged (%w)", n.Events, n.Messages, err)
	}
	if err != nil {
		return err
	}
	msgs := "messages"
	if n.Messages == 1 {
		msgs = "message"
	}
	fmt.Fprintf(os.Stderr, "published %d events in %d %s to %s on %s\n", n.Events, n.Messages, msgs, stream, server)
	return nil
}
