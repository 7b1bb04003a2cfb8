package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/internal/chart/svg"
	"github.com/sase-cep/sase/internal/recepbench"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/session"
)

// benchCmd is `sase bench [SUITE...]`: engine throughput tables; `sase
// bench recep` runs the ReCEP paper's experiments and draws their charts.
func benchCmd(args []string) int {
	if len(args) > 0 && args[0] == "recep" {
		return benchRecep(args[1:])
	}
	fs := newFlags("sase bench", `sase bench [--limit D] [--svg DIR] [SUITE...]

Suites: workloads (W1, W2, W2r, ReCEP's Exp. 1 on 1M stock events; W1 with its hand-written floor;
a 30-component SEQ on 1K and 10K), fig8, fig10
(SASE's Figures 8 and 10), strategies (W3 and SASE's Kleene suite on 1M events), workers (1, 2, ...
up to the CPUs), scaling (W1 on 1M, 2M, 4M events with windows 60, 120, 240, and a query without
matches as its window grows), io (W1's matches written in each format, 1M rows loaded from CSV
and JSON Lines, GENERATE), mr (MATCH_RECOGNIZE on 1M stock events), rules (rulebooks of 1 to
10,000 rules on 1M events, as one pass and each rule alone; 1,000 and 10,000 on 2 passes, and on a
live stream on 1 and 2); default all.

       sase bench recep [--events N] [--out DIR]   (the ReCEP paper's experiments, with charts)`)
	limit := fs.Duration("limit", 5*time.Second, "stop a run after `D` and report the events it read")
	svgDir := fs.String("svg", "", "draw each suite's chart into `DIR` (bench-SUITE.svg)")
	if len(args) > 0 && isHelp(args[0]) {
		args = []string{"-h"} // sase bench help, as sase help
	}
	if err := parseFlags(fs, args); err != nil {
		return parseError(err)
	}
	opts := []bench.Option{bench.WithLiveRules(liveRules)}
	if *svgDir != "" {
		if err := os.MkdirAll(*svgDir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "sase:", err)
			return exitFailed
		}
		opts = append(opts, bench.WithSVG(*svgDir, svg.Drawer{}))
	}
	if err := bench.Run(os.Stdout, fs.Args(), *limit, opts...); err != nil {
		fmt.Fprintln(os.Stderr, "sase:", err)
		return exitFailed
	}
	return exitOK
}

// liveRules readies the rules suite's live run (bench.LiveRules): a
// session reads csv as a piped live stream, which starts at run, and runs
// queries as its rulebook, each rule writing its count of matches at its
// end.
func liveRules(csv []byte, queries []string, workers int) (func(context.Context) ([]int64, int64, error), error) {
	var out bytes.Buffer
	errw := &testkit.SyncBuffer{} // the queries' goroutines write it
	s := session.New(&out, errw, session.WithStdin(bytes.NewReader(csv)))
	for _, kv := range [][2]string{{"timing", "off"}, {"format", "count"}, {"workers", strconv.Itoa(workers)}} {
		if err := s.Set(kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	var script strings.Builder
	script.WriteString("LOAD '-' AS s;\n")
	for i, q := range queries {
		fmt.Fprintf(&script, "RULE r%d: %s;\n", i, q)
	}
	if err := s.Exec(context.Background(), &ast.Source{Name: "bench", Text: script.String()}); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, errw.String())
	}
	return func(ctx context.Context) ([]int64, int64, error) {
		if err := s.Wait(ctx); err != nil && ctx.Err() == nil {
			return nil, 0, fmt.Errorf("%w\n%s", err, errw.String())
		}
		matches := make([]int64, len(queries))
		for i, line := range strings.Fields(out.String()) {
			if i < len(matches) {
				matches[i], _ = strconv.ParseInt(line, 10, 64)
			}
		}
		var events int64
		if m := used.FindStringSubmatch(errw.String()); m != nil {
			events, _ = strconv.ParseInt(m[1], 10, 64)
		}
		return matches, events, nil
	}, nil
}

// used is the events a live stream's summary says it used.
var used = regexp.MustCompile(`\(stream s \w+: \d+ lines? read, (\d+) events? used`)

func benchRecep(args []string) int {
	fs := newFlags("sase bench recep", "sase bench recep [--events N] [--out DIR]   (the ReCEP paper's experiments, with charts)")
	events := fs.Int("events", 1_000_000, "events of the generated stream")
	out := fs.String("out", "docs", "directory for the charts recep-exp1.svg, recep-exp2.svg, recep-exp3.svg")
	if err := parseFlags(fs, args); err != nil {
		return parseError(err)
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if err := recepbench.Run(os.Stdout, *out, *events); err != nil {
		fmt.Fprintln(os.Stderr, "sase:", err)
		return exitFailed
	}
	return exitOK
}
