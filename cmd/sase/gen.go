package main

import (
	"bufio"
	"bytes"
	"container/heap"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/sase-cep/sase/source"
)

// gen is `sase gen stocks`: SASE's stock stream as CSV on stdout.
func gen(args []string) int {
	cfg := source.DefaultStockConfig()
	fs := newFlags("sase gen stocks", "sase gen stocks [flags]   (SASE's stock stream as CSV on stdout)")
	fs.IntVar(&cfg.Events, "events", cfg.Events, "number of events")
	fs.IntVar(&cfg.Symbols, "symbols", cfg.Symbols, "number of stock symbols (event types stock1..stockN)")
	fs.IntVar(&cfg.MaxPrice, "max-price", cfg.MaxPrice, "highest price")
	fs.IntVar(&cfg.MaxVolume, "max-volume", cfg.MaxVolume, "highest volume")
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "random seed (java.util.Random)")
	fs.IntVar(&cfg.IncreaseProbability, "increase-probability", cfg.IncreaseProbability,
		"percent chance a price rises (a random walk); above 100, uniform prices")
	disorder := fs.Int64("disorder", 0, "shuffle the events so that each arrives at most D ticks after a later one (deterministic with --seed): input for WITH (slack = D)")
	switch {
	case len(args) > 0 && isHelp(args[0]):
		return parseError(parseFlags(fs, []string{"-h"}))
	case len(args) == 0 || args[0] != "stocks":
		return usageError(fmt.Errorf("usage: sase gen stocks [--events N] [--symbols N] [--max-price N] [--max-volume N] [--seed N] [--increase-probability N] [--disorder D] (sase gen --help for more)"))
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return parseError(err)
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if err := cfg.Validate(); err != nil {
		return usageError(err)
	}
	if *disorder < 0 {
		return usageError(fmt.Errorf("--disorder must not be negative"))
	}
	var w io.Writer = os.Stdout
	var d *disorderWriter
	if *disorder > 0 {
		d = newDisorderWriter(os.Stdout, *disorder, cfg.Seed)
		w = d
	}
	err := source.WriteStocksCSV(w, cfg)
	if err == nil && d != nil {
		err = d.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sase:", err)
		return exitFailed
	}
	return exitOK
}

// disorderWriter shuffles the rows of the generated CSV within a bound:
// each row gets the key ts + r, r uniform in [0, d], and rows are written
// in key order (ties in input order). A row j written after a row k has
// k + r(k) <= j + r(j), so ts(k) <= ts(j) + d: no row is late under
// slack = d, and rows are held only d ticks (the generator's ts are 0, 1,
// 2, ...).
type disorderWriter struct {
	out    *bufio.Writer
	d      int64
	rnd    *rand.Rand
	header bool
	held   rowHeap
	n      int64
	part   []byte // a row cut between two Writes
}

func newDisorderWriter(w io.Writer, d, seed int64) *disorderWriter {
	return &disorderWriter{out: bufio.NewWriterSize(w, 64<<10), d: d, rnd: rand.New(rand.NewPCG(uint64(seed), 0x5a5e))}
}

type row struct {
	key, n int64
	line   []byte
}

type rowHeap []row

func (h rowHeap) Len() int { return len(h) }
func (h rowHeap) Less(i, j int) bool {
	return h[i].key < h[j].key || h[i].key == h[j].key && h[i].n < h[j].n
}
func (h rowHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *rowHeap) Push(x any)   { *h = append(*h, x.(row)) }
func (h *rowHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}

func (w *disorderWriter) Write(p []byte) (int, error) {
	data := p
	if len(w.part) > 0 {
		data = append(w.part, p...)
		w.part = nil
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			w.part = append([]byte(nil), data...)
			return len(p), nil
		}
		if err := w.row(data[:i+1]); err != nil {
			return 0, err
		}
		data = data[i+1:]
	}
}

// row takes one line: the header passes through, a row is held until no
// later row can come before it.
func (w *disorderWriter) row(line []byte) error {
	if !w.header {
		w.header = true
		_, err := w.out.Write(line)
		return err
	}
	f := bytes.SplitN(line, []byte{','}, 3)
	ts, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return fmt.Errorf("gen --disorder: bad row %q", line)
	}
	// Every later row's key is at least ts.
	for len(w.held) > 0 && w.held[0].key < ts {
		if _, err := w.out.Write(heap.Pop(&w.held).(row).line); err != nil {
			return err
		}
	}
	heap.Push(&w.held, row{key: ts + w.rnd.Int64N(w.d+1), n: w.n, line: append([]byte(nil), line...)})
	w.n++
	return nil
}

// Flush writes the rows still held.
func (w *disorderWriter) Flush() error {
	for len(w.held) > 0 {
		w.out.Write(heap.Pop(&w.held).(row).line) // bufio keeps the first error
	}
	return w.out.Flush()
}
