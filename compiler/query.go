package compiler

import (
	"context"
	"fmt"
	"iter"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/query"
)

// Of is q as package query sees it.
func Of(q *sase.Query) query.Query {
	if q == nil {
		return nil
	}
	return compiled{q}
}

// Facade is the facade's query that Of made of q, for what needs the
// plan itself (a rulebook, a derived stream); nil for another.
func Facade(q query.Query) *sase.Query {
	if c, ok := q.(compiled); ok {
		return c.Query
	}
	return nil
}

// compiled adapts a facade query to query.Query: the methods whose
// signatures match come with the embedding.
type compiled struct{ *sase.Query }

func (c compiled) OddValues(sc, base *event.Schema) []query.Odd {
	odd := c.Query.OddValues(sc, base)
	out := make([]query.Odd, len(odd))
	for i, o := range odd {
		out[i] = query.Odd{Key: fmt.Sprint(o.Attr, o.Absent, o.Want), Text: o.String()}
	}
	return out
}

func (c compiled) SplitWorkers(workers int, live bool) int {
	return c.Query.Split(workers, live).Workers
}

func (c compiled) ExplainAs(format string, workers int, live bool, stats *query.Stats) (string, error) {
	var st *sase.Stats
	if stats != nil {
		st, _ = stats.Detail.(*sase.Stats)
	}
	return c.Query.ExplainAs(format, workers, live, st)
}

func (c compiled) Run(ctx context.Context, open func(pause func()) iter.Seq[*event.Event], sink query.Sink, o query.RunOptions) (*query.Stats, error) {
	opts := []sase.RunOption{sase.WithWorkers(o.Workers)}
	if o.AnyOrder {
		opts = append(opts, sase.WithAnyOrder())
	}
	if o.Timing {
		opts = append(opts, sase.WithTiming())
	}
	if o.Chunks != nil {
		opts = append(opts, sase.WithChunks(o.Chunks))
	}
	var pause func()
	if o.Live {
		live := sase.NewLive(o.Idle)
		pause = live.Pause
		opts = append(opts, sase.WithLive(live))
	}
	st, err := c.Query.Run(ctx, open(pause), sase.Sink(sink), opts...)
	return Stats(st), err
}

// Stats is a run's stats as package query sees them; nil for nil.
func Stats(st *sase.Stats) *query.Stats {
	if st == nil {
		return nil
	}
	return &query.Stats{Events: st.Events, Matches: st.Matches, Instances: st.Instances, MaxBuffer: st.MaxBuffer, Elapsed: st.Elapsed, Detail: st}
}
