package main

import (
	"fmt"
	"os"
	"time"

	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/internal/chart/svg"
	"github.com/sase-cep/sase/internal/recepbench"
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
10,000 rules on 1M events, as one pass and each rule alone); default all.

       sase bench recep [--events N] [--out DIR]   (the ReCEP paper's experiments, with charts)`)
	limit := fs.Duration("limit", 5*time.Second, "stop a run after `D` and report the events it read")
	svgDir := fs.String("svg", "", "draw each suite's chart into `DIR` (bench-SUITE.svg)")
	if len(args) > 0 && isHelp(args[0]) {
		args = []string{"-h"} // sase bench help, as sase help
	}
	if err := parseFlags(fs, args); err != nil {
		return parseError(err)
	}
	var opts []bench.Option
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
