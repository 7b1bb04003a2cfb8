package optimizer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// pushPartition pushes one equivalence test into SS as PAIS (SASE §4.2.1):
// each state keeps one stack per value of the attribute, an event enters a
// state only if the previous state's stack of its value is not empty
// (attribute-based transition filtering), and construction stays inside
// one partition. Of several tests it takes the attribute with the most
// distinct values in the stream, which makes the partitions smallest. An
// event lacking the attribute belongs to every partition; the engine
// handles that, so any equivalence test can partition.
type pushPartition struct{}

func (pushPartition) Name() string { return "push-equivalence-into-ss-as-pais" }

func (pushPartition) Apply(p *planner.Plan) bool {
	ssc, isAIS := p.Source.(*planner.AISScan)
	sel, ok := planner.StageOf[*planner.Selection](p)
	if !isAIS || !ok || ssc.Partition != nil || len(sel.Equivs) == 0 {
		return false
	}
	cands := sel.Equivs
	for _, q := range cands {
		q.Distinct = distinct(p, q)
	}
	best, why := cands[0], ""
	if len(cands) > 1 {
		var parts []string
		for _, q := range cands {
			parts = append(parts, fmt.Sprintf("%s: %d", q.Text, q.Distinct))
			if q.Distinct > best.Distinct {
				best = q
			}
		}
		why = "most distinct values (" + strings.Join(parts, ", ") + ")"
	} else {
		why = fmt.Sprintf("the only equivalence test (%d distinct values)", best.Distinct)
	}
	ssc.Partition, ssc.PartitionWhy = best, why
	sel.Equivs = slices.DeleteFunc(sel.Equivs, func(q *planner.Equiv) bool { return q == best })
	dropEmptySelection(p)
	return true
}

// alwaysPresentTests returns the equivalence tests whose attribute every
// event of every positive single's type has, which Multi-PAIS's counters
// and dynamic filtering's comparison with the accepting event need. A live
// stream has no such guarantee.
func alwaysPresentTests(p *planner.Plan, equivs []*planner.Equiv) []*planner.Equiv {
	if p.Stream.Live {
		return nil
	}
	var out []*planner.Equiv
	for _, q := range equivs {
		if q.Builtin == planner.NotBuiltin && !alwaysPresent(p, q.Slot) {
			continue
		}
		out = append(out, q)
	}
	return out
}

func alwaysPresent(p *planner.Plan, slot int) bool {
	for _, i := range p.Positives {
		for _, t := range p.Components[i].Types {
			if !p.Stream.Schema.Types[t].AlwaysHas(slot) {
				return false
			}
		}
	}
	return true
}

// distinctSample bounds the events read to count distinct values.
const distinctSample = 100_000

func distinct(p *planner.Plan, q *planner.Equiv) int {
	seen := map[event.Key]bool{}
	for i, e := range p.Stream.Events {
		if i == distinctSample {
			break
		}
		seen[event.PartitionKey(q.Value(e)).Key()] = true
	}
	return len(seen)
}
