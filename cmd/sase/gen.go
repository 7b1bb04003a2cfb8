package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/sase-cep/sase/source"
)

// gen is `sase gen stocks`: SASE's stock stream as CSV on stdout.
func gen(args []string) int {
	if len(args) == 0 || args[0] != "stocks" {
		return usageError(fmt.Errorf("usage: sase gen stocks [--events N] [--symbols N] [--max-price N] [--max-volume N] [--seed N] [--increase-probability N]"))
	}
	cfg := source.DefaultStockConfig()
	fs := flag.NewFlagSet("sase gen stocks", flag.ContinueOnError)
	fs.IntVar(&cfg.Events, "events", cfg.Events, "number of events")
	fs.IntVar(&cfg.Symbols, "symbols", cfg.Symbols, "number of stock symbols (event types stock1..stockN)")
	fs.IntVar(&cfg.MaxPrice, "max-price", cfg.MaxPrice, "highest price")
	fs.IntVar(&cfg.MaxVolume, "max-volume", cfg.MaxVolume, "highest volume")
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "random seed (java.util.Random)")
	fs.IntVar(&cfg.IncreaseProbability, "increase-probability", cfg.IncreaseProbability,
		"percent chance a price rises (a random walk); above 100, uniform prices")
	if err := fs.Parse(args[1:]); err != nil {
		return parseError(err)
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if err := cfg.Validate(); err != nil {
		return usageError(err)
	}
	if err := source.WriteStocksCSV(os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "sase:", err)
		return exitFailed
	}
	return exitOK
}
