package rulebook_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/rulebook"
)

// sharedQuery is a rule whose first component is one of a few, so that
// a rulebook of them has groups that share their starts (Starts): the
// same start type and filters, with bounds, windows (none too) and
// strategies of their own, and later components of few types (the
// start's too), so that a group's gates serve several rules.
func sharedQuery(r *rand.Rand) string {
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	first := pick([]string{"A", "B"})
	conj := []string{pick([]string{"a.price > 5", "a.id = 3", "a.price > 5 AND a.price < 15"})}
	if r.IntN(2) == 0 {
		conj = append(conj, laterBound(r))
	}
	if r.IntN(6) == 0 {
		conj = append(conj, pick([]string{"skip-till-next-match", "skip-till-any-match"}))
	}
	within := fmt.Sprintf(" WITHIN %d", 1+r.IntN(10))
	if r.IntN(5) == 0 {
		within = ""
	}
	return fmt.Sprintf("PATTERN SEQ(%s a, %s b) WHERE %s%s", first, pick([]string{first, "C", "D"}), strings.Join(conj, " AND "), within)
}

// TestSharedStarts: rules that begin alike read their starts from one
// group's stack and are gated on its starts (and a rule added to a
// running pass on its own): through the pass (and on 2 passes), each
// finds what it finds alone on its items, in the same order, and reads
// as many events as through a pass that does not share, both mid-pass
// (Events) and in its result's stats.
func TestSharedStarts(t *testing.T) {
	ctx := context.Background()
	const trials = 40
	readers := 0 // the rules that read another's starts, in all
	for trial := range trials {
		r := rand.New(rand.NewPCG(uint64(trial), 41))
		stream, _ := randomStream(t, r)
		var rules []rulebook.Rule
		for len(rules) < 30 {
			q, err := sase.Compile(sharedQuery(r), stream)
			if err != nil {
				continue // laterBound's string attribute with a constant added
			}
			rules = append(rules, rulebook.Rule{Name: fmt.Sprint("r", len(rules)), Query: q})
		}
		items := slices.Collect(withTicks(stream, r))
		first, addAt, mid := 24, r.IntN(len(items)+1), r.IntN(len(items)+1)
		defer rulebook.SetBatch(1 + r.IntN(8))()
		// pass runs the rules, the last ones added at addAt, and returns
		// their matches, their events read at mid and their results.
		// Half the trials group every two rules alike, the others as a
		// pass does (perGate).
		perGate := 4
		if trial%2 == 0 {
			perGate = 1
		}
		pass := func(share bool) ([][]string, []int64, []rulebook.Result) {
			defer rulebook.SetShare(share, perGate)()
			got, sinks := collect(len(rules))
			p := rulebook.New(stream.Schema, rules[:first]).Start(ctx, sinks[:first])
			if n, groups := p.Grouped(); share {
				readers += n - groups
			}
			events := make([]int64, len(rules))
			for at := 0; at <= len(items); at++ {
				if at == addAt {
					for i := first; i < len(rules); i++ {
						p.Add(stream.Schema, rules[i], sinks[i])
					}
				}
				if at == mid {
					p.Flush()
					n := first
					if addAt <= mid {
						n = len(rules)
					}
					for i := range n {
						events[i] = p.Events(i)
					}
				}
				if at < len(items) {
					p.Push(items[at])
				}
			}
			return got, events, p.Finish()
		}
		got, events, res := pass(true)
		_, eventsAlone, resAlone := pass(false)
		// The first rules on 2 passes in parallel, over every item.
		split, sinks := collect(first)
		rulebook.New(stream.Schema, rules[:first]).Split(2).Run(ctx, slices.Values(items), sinks)
		for i, rule := range rules {
			from := 0
			if i >= first {
				from = addAt
			}
			var alone []string
			rule.Query.Run(ctx, slices.Values(items[from:]), func(cells []sase.Cell) bool {
				alone = append(alone, row(cells))
				return true
			})
			if !slices.Equal(got[i], alone) {
				t.Fatalf("trial %d rule %d %q (items from %d of %d):\nin the pass: %v\nalone:       %v", trial, i, rule.Query.Plan().Query, from, len(items), got[i], alone)
			}
			if i < first && !slices.Equal(split[i], alone) {
				t.Fatalf("trial %d rule %d %q:\non 2 passes: %v\nalone:       %v", trial, i, rule.Query.Plan().Query, split[i], alone)
			}
			if events[i] != eventsAlone[i] || res[i].Stats.Events != resAlone[i].Stats.Events {
				t.Fatalf("trial %d rule %d %q: events %d mid-pass, %d at the end; %d and %d through a pass that does not share", trial, i, rule.Query.Plan().Query, events[i], res[i].Stats.Events, eventsAlone[i], resAlone[i].Stats.Events)
			}
		}
	}
	// Sharing happens: in these trials 165 of the 960 first rules read
	// another's starts.
	if readers < 3*trials {
		t.Errorf("%d rules in all read another's starts; want %d at least", readers, 3*trials)
	}
}

// TestSharedStartsAtLimit: a rule of a group whose sink wants no more
// (its limit) mid-batch has read the events up to the match that brought
// it there, the group's starts among them, and no more: as many as
// through a pass that does not share, in batches of any size.
func TestSharedStartsAtLimit(t *testing.T) {
	ctx := context.Background()
	ended := 0 // the grouped rules that end at their limits, in all
	for trial := range 30 {
		r := rand.New(rand.NewPCG(uint64(trial), 46))
		stream, _ := randomStream(t, r)
		var rules []rulebook.Rule
		for len(rules) < 30 {
			if q, err := sase.Compile(sharedQuery(r), stream); err == nil {
				rules = append(rules, rulebook.Rule{Query: q})
			}
		}
		items := slices.Collect(withTicks(stream, r))
		limits := make([]int, len(rules))
		for i := range limits {
			limits[i] = 1 + r.IntN(20)
		}
		defer rulebook.SetBatch([]int{1, 7, 4096}[trial%3])()
		pass := func(share bool) []rulebook.Result {
			defer rulebook.SetShare(share, 1)()
			sinks := make([]sase.Sink, len(rules))
			for i := range sinks {
				n := 0
				sinks[i] = func([]sase.Cell) bool { n++; return n < limits[i] }
			}
			p := rulebook.New(stream.Schema, rules).Start(ctx, sinks)
			if grouped, _ := p.Grouped(); share && grouped == 0 {
				t.Fatalf("trial %d: no rule is grouped", trial)
			}
			for _, it := range items {
				p.Push(it)
			}
			return p.Finish()
		}
		got, want := pass(true), pass(false)
		for i := range rules {
			if got[i].Stats.Events != want[i].Stats.Events {
				t.Errorf("trial %d rule %d %q (limit %d, %d matches): %d events grouped, %d not", trial, i, rules[i].Query.Plan().Query, limits[i], got[i].Stats.Matches, got[i].Stats.Events, want[i].Stats.Events)
			}
			if got[i].Stats.Matches == int64(limits[i]) {
				ended++
			}
		}
	}
	if ended < 100 {
		t.Errorf("%d rules in all ended at their limits; want 100 at least", ended)
	}
}
