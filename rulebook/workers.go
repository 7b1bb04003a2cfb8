package rulebook

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// Split is a book's rules shared among passes that run in parallel, one
// goroutine each: every pass reads every item for its share of the
// rules. A rule lives in one pass, so its matches are those it finds
// alone, in the same order, whatever the split.
//
//	results := book.Split(workers).Run(ctx, stream.All(), sinks)
type Split struct {
	book   *Book
	shares []share
}

// share is one pass's rules: their numbers in the book, ascending, and
// the book of them.
type share struct {
	rules []int
	book  *Book
}

// Split shares the book's rules among up to workers passes, balanced by
// an estimate of each rule's work: the types it reads (every type, for a
// rule with a contiguity strategy, which reads every event). A pass
// takes consecutive rules, so that the sinks of different passes, which
// run in parallel, seldom write next to each other (a sink per rule
// writing to a slice by rule would share cache lines at every other
// rule). Fewer rules than workers make as many passes as rules.
func (b *Book) Split(workers int) *Split {
	s := &Split{book: b}
	if workers = min(workers, len(b.Rules)); workers <= 1 {
		return s
	}
	weight := make([]int, len(b.Rules))
	total := 0
	for i, r := range b.Rules {
		weight[i] = reads(r.Query.Plan(), b.ix.schema)
		total += weight[i]
	}
	// Pass k ends nearest where the rules' weight so far is k+1 workers'
	// shares of the total (a rule goes in if its midpoint is short of it),
	// leaving a rule at least for each pass to come.
	from, sum := 0, 0
	for k := range workers {
		to := from + 1
		for sum += weight[from]; to < len(b.Rules)-(workers-1-k) && (2*sum+weight[to])*workers < 2*(k+1)*total; to++ {
			sum += weight[to]
		}
		if k == workers-1 {
			to = len(b.Rules)
		}
		rules := make([]int, 0, to-from)
		for i := from; i < to; i++ {
			rules = append(rules, i)
		}
		s.shares = append(s.shares, share{rules: rules, book: New(b.ix.schema, b.Rules[from:to])})
		from = to
	}
	return s
}

// reads is how many types of schema a rule of plan p reads.
func reads(p *planner.Plan, schema *event.Schema) int {
	if p.Strategy == planner.StrictContiguity || p.Strategy == planner.PartitionContiguity {
		return max(1, len(schema.Types))
	}
	var types []int
	for _, c := range p.Components {
		for _, t := range c.Types {
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
	}
	return max(1, len(types))
}

// Explain is the book's index, then how its rules are shared among the
// passes, when there are several.
func (s *Split) Explain() string {
	text := s.book.Explain()
	if len(s.shares) <= 1 {
		return text
	}
	parts := make([]string, len(s.shares))
	for k, sh := range s.shares {
		parts[k] = fmt.Sprintf("rules %d-%d", sh.rules[0]+1, sh.rules[len(sh.rules)-1]+1)
	}
	return text + fmt.Sprintf("Parallel: %d passes, each reading every event: %s\n", len(s.shares), strings.Join(parts, ", "))
}

// Passes are the split's passes: each one's rules, their numbers in the
// book, ascending, and the book of them; one pass is the whole book.
func (s *Split) Passes() ([][]int, []*Book) {
	if len(s.shares) <= 1 {
		all := make([]int, len(s.book.Rules))
		for i := range all {
			all[i] = i
		}
		return [][]int{all}, []*Book{s.book}
	}
	rules, books := make([][]int, len(s.shares)), make([]*Book, len(s.shares))
	for k, sh := range s.shares {
		rules[k], books[k] = sh.rules, sh.book
	}
	return rules, books
}

// Workers is how many passes the split runs.
func (s *Split) Workers() int { return max(1, len(s.shares)) }

// chunk is how many items the reader hands each pass at a time: one
// channel send per pass per chunk, nothing per item.
var chunk = 1024

// Run runs every rule over events as Book.Run does, rule i's matches to
// sinks[i], each pass on its own goroutine. The caller's goroutine reads
// events, once, and hands them to every pass a chunk at a time (it runs
// no pass itself: a pass of one rule is the rule's engine, which may
// stop reading midway, its iterator suspended, and leave the other
// passes without their events). The sinks of rules in different passes
// are called concurrently; a rule's sink is called from one goroutine
// at a time.
func (s *Split) Run(ctx context.Context, events iter.Seq[*event.Event], sinks []sase.Sink, opts ...sase.RunOption) []Result {
	if len(s.shares) <= 1 {
		return s.book.Run(ctx, events, sinks, opts...)
	}
	res := make([]Result, len(s.book.Rules))
	feeds := make([]chan []*event.Event, len(s.shares))
	var wg sync.WaitGroup
	for k, sh := range s.shares {
		feed := make(chan []*event.Event, 8)
		feeds[k] = feed
		wg.Go(func() {
			own := make([]sase.Sink, len(sh.rules))
			for j, i := range sh.rules {
				own[j] = sinks[i]
			}
			items := func(yield func(*event.Event) bool) {
				for c := range feed {
					for _, ev := range c {
						if !yield(ev) {
							return
						}
					}
				}
			}
			for j, r := range sh.book.Run(ctx, items, own, opts...) {
				res[sh.rules[j]] = r
			}
			for range feed { // a pass that ended early lets the reader go on
			}
		})
	}
	c := make([]*event.Event, 0, chunk)
	send := func() {
		for _, f := range feeds {
			f <- c // read-only from here on: the passes share it
		}
		c = make([]*event.Event, 0, chunk)
	}
	for ev := range events {
		if c = append(c, ev); len(c) == chunk {
			if ctx.Err() != nil {
				break
			}
			send()
		}
	}
	if len(c) > 0 && ctx.Err() == nil {
		send()
	}
	for _, f := range feeds {
		close(f)
	}
	wg.Wait()
	return res
}

// AutoRules is the fewest rules workers = auto gives a pass: a pass
// reads every item, and below some hundreds of rules a second one costs
// more CPU than its share saves (measured on 200K stock events, 2 cores:
// 10 rules 1.3-2.5x the CPU an event of one pass, 100 rules 1.2-1.6x,
// 1,000 rules the same CPU, within the noise, and on one core the same
// time: in less time where a core is free).
const AutoRules = 500

// AutoWorkers is workers = auto for the book: as many passes as the CPUs,
// but AutoRules rules a pass at least.
func (b *Book) AutoWorkers() int {
	return max(1, min(runtime.NumCPU(), len(b.Rules)/AutoRules))
}
