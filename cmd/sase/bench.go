package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/sase-cep/sase/exec/bench"
)

// benchCmd is `sase bench [SUITE...]`: engine throughput tables.
func benchCmd(args []string) int {
	fs := flag.NewFlagSet("sase bench", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: sase bench [--limit D] [SUITE...]\n\nSuites: workloads (W1, W2 on 1M stock events), fig8, fig10 (SASE's Figures 8 and 10),\nstrategies (W3 and SASE's Kleene suite on 1M events); default all.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	limit := fs.Duration("limit", 5*time.Second, "stop a run after `D` and report the events it read")
	if err := fs.Parse(args); err != nil {
		return parseError(err)
	}
	if err := bench.Run(os.Stdout, fs.Args(), *limit); err != nil {
		fmt.Fprintln(os.Stderr, "sase:", err)
		return exitFailed
	}
	return exitOK
}
