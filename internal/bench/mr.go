package bench

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/rowpattern"
)

// vShape is the V: a row, rising rows, a falling one, per symbol.
const vShape = `PARTITION BY symbol ORDER BY ts
  MEASURES A.price AS low, LAST(B.price) AS top, C.price AS fall
  %s
  PATTERN (A B+ C)
  DEFINE B AS B.price > PREV(B.price), C AS C.price < PREV(C.price)`

// MRCases are the MATCH_RECOGNIZE queries of `sase bench mr`, each on the
// random-walk stock stream (MRStream).
var MRCases = []struct{ Name, Query string }{
	{"V one row per match", "SELECT * FROM stocks MATCH_RECOGNIZE (" + fmt.Sprintf(vShape, "ONE ROW PER MATCH") + ")"},
	{"V all rows per match", "SELECT * FROM stocks MATCH_RECOGNIZE (" + fmt.Sprintf(vShape, "ALL ROWS PER MATCH") + ")"},
	{"reluctant, alternation", `SELECT * FROM stocks MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts
  MEASURES S.price AS start_price, X.price AS drop_price, count(U.price) AS ups
  ONE ROW PER MATCH
  PATTERN (S (U | D)*? X)
  DEFINE U AS U.price > PREV(U.price), D AS D.price < PREV(D.price), X AS X.price < S.price - 5)`},
}

// MRStream is the stream `sase bench mr` runs on: 1M random-walk stock
// events (increase probability 55) of 10 symbols.
var MRStream = StocksOf(1_000_000, 55, 10)

// CompileMR parses and compiles a MATCH_RECOGNIZE query on stream.
func CompileMR(stream *event.Stream, query string) (*rowpattern.Query, error) {
	src := &ast.Source{Name: "<bench>", Text: query}
	stmts, err := grammar.Parse(src)
	if err != nil {
		return nil, err
	}
	st, ok := stmts[0].(*ast.MatchRecognize)
	if len(stmts) != 1 || !ok {
		return nil, fmt.Errorf("not one MATCH_RECOGNIZE: %s", query)
	}
	return rowpattern.Compile(st, src, stream.Schema, int64(stream.Unit))
}

// MRResult is one run of a MATCH_RECOGNIZE query.
type MRResult struct {
	Stats   rowpattern.Stats
	Elapsed time.Duration
	CPU     time.Duration // the process's, all goroutines'
}

func (r MRResult) took() (time.Duration, bool) { return r.Elapsed, false }

// MeasureMR runs q over stream on workers, its rows going to a callback
// that drops them.
func MeasureMR(q *rowpattern.Query, stream *event.Stream, workers int) (MRResult, error) {
	start, cpu := time.Now(), CPUTime()
	st, err := q.Run(context.Background(), stream.Events, workers, func([]event.Value, *event.Event) bool { return true })
	return MRResult{Stats: st, Elapsed: time.Since(start), CPU: CPUTime() - cpu}, err
}

// runMR prints the mr suite: MRCases on MRStream, on one worker.
func runMR(w io.Writer) error {
	stream := MRStream()
	fmt.Fprintf(w, "== mr (MATCH_RECOGNIZE on %d random-walk stock events, 10 symbols, 1 worker; rows to a callback; %s)\n", len(stream.Events), medianNote)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tevents\tmatches\trows\ttime\tevents/s\tns/event\tCPU ns/event\t")
	for _, c := range MRCases {
		q, err := CompileMR(stream, c.Query)
		if err != nil {
			return fmt.Errorf("mr: %s: %w", c.Name, err)
		}
		r, err := median(func() (MRResult, error) { return MeasureMR(q, stream, 1) })
		if err != nil {
			return fmt.Errorf("mr: %s: %w", c.Name, err)
		}
		n := float64(r.Stats.Rows)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%.0f\t%.0f\t\n", c.Name, r.Stats.Rows, r.Stats.Matches, r.Stats.Output,
			r.Elapsed.Round(time.Millisecond), si(n/r.Elapsed.Seconds()), float64(r.Elapsed.Nanoseconds())/n, float64(r.CPU.Nanoseconds())/n)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}
