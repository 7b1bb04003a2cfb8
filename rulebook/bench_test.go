package rulebook_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/rulebook"
)

// BenchmarkRulebook runs rulebooks of issue 31's shape over 100K uniform
// stock events, as one pass (book) and each rule alone, with P from 0
// (dense: matches dominate) or from 90 (selective); ns/event is per
// event of the stream.
func BenchmarkRulebook(b *testing.B) {
	for _, minP := range []int{0, 90} {
		b.Run(fmt.Sprintf("P>=%d", minP), func(b *testing.B) { benchmarkRules(b, minP) })
	}
}

func benchmarkRules(b *testing.B, minP int) {
	const events = 100_000
	stream := bench.Stocks(events, 0)()
	for _, n := range []int{1, 10, 100, 1000} {
		rules, sinks, matches := compileRules(b, stream, n, minP)
		book := rulebook.New(stream.Schema, rules)
		b.Run(fmt.Sprintf("rules=%d/book", n), func(b *testing.B) {
			cpu := bench.CPUTime()
			for b.Loop() {
				book.Run(context.Background(), stream.All(), sinks)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
			// The process's CPU: on a shared machine, less noisy than the
			// wall clock.
			b.ReportMetric(float64((bench.CPUTime()-cpu).Nanoseconds())/float64(b.N*events), "cpu-ns/event")
			b.ReportMetric(float64(*matches)/float64(b.N), "matches")
			*matches = 0
		})
		if n > 1 {
			// Split among 2 passes in parallel: a counter per rule, as the
			// session's sinks write to a writer per rule.
			split := book.Split(2)
			counts := make([]int64, n)
			sinks := make([]sase.Sink, n)
			for i := range sinks {
				sinks[i] = func([]sase.Cell) bool { counts[i]++; return true }
			}
			b.Run(fmt.Sprintf("rules=%d/book-W2", n), func(b *testing.B) {
				for b.Loop() {
					split.Run(context.Background(), stream.All(), sinks)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
				var all int64
				for _, c := range counts {
					all += c
				}
				b.ReportMetric(float64(all)/float64(b.N), "matches")
				clear(counts)
			})
		}
		if n > 100 {
			continue // alone: n passes, minutes
		}
		b.Run(fmt.Sprintf("rules=%d/alone", n), func(b *testing.B) {
			for b.Loop() {
				for i, r := range rules {
					if _, err := r.Query.Run(context.Background(), stream.All(), sinks[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
			b.ReportMetric(float64(*matches)/float64(b.N), "matches")
			*matches = 0
		})
	}
}

// BenchmarkRulebookBatch runs 1,000 and 10,000 selective rules over
// 100K events at a few base batches (a pass's batch grows with its rules
// from it: batchOf).
func BenchmarkRulebookBatch(b *testing.B) {
	const events = 100_000
	stream := bench.Stocks(events, 0)()
	for _, n := range []int{1000, 10000} {
		rules, sinks, matches := compileRules(b, stream, n, 90)
		book := rulebook.New(stream.Schema, rules)
		for _, batch := range []int{256, 1024, 2048} {
			b.Run(fmt.Sprintf("rules=%d/base=%d", n, batch), func(b *testing.B) {
				defer rulebook.SetBatch(batch)()
				cpu := bench.CPUTime()
				for b.Loop() {
					book.Run(context.Background(), stream.All(), sinks)
				}
				b.ReportMetric(float64((bench.CPUTime()-cpu).Nanoseconds())/float64(b.N*events), "cpu-ns/event")
				b.ReportMetric(float64(*matches)/float64(b.N), "matches")
				*matches = 0
			})
		}
	}
}

// compileRules compiles n rules of issue 31's shape with P from minP on
// stream, with a sink each that counts their matches in all.
func compileRules(b *testing.B, stream *event.Stream, n, minP int) ([]rulebook.Rule, []sase.Sink, *int64) {
	rules := make([]rulebook.Rule, n)
	for i, text := range bench.RulesAbove(n, minP) {
		q, err := sase.Compile(text, stream)
		if err != nil {
			b.Fatal(err)
		}
		rules[i] = rulebook.Rule{Query: q}
	}
	sinks := make([]sase.Sink, n)
	var matches int64
	for i := range sinks {
		sinks[i] = func([]sase.Cell) bool { matches++; return true }
	}
	return rules, sinks, &matches
}
