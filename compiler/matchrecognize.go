package compiler

import (
	"context"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/rowpattern"
)

func (Compiler) MatchRecognize(st *ast.MatchRecognize, src *ast.Source, schema *event.Schema, unit int64) (query.MatchRecognize, error) {
	q, err := rowpattern.Compile(st, src, schema, unit)
	if err != nil {
		return nil, err
	}
	return mr{q}, nil
}

// mr is query.MatchRecognize over package rowpattern.
type mr struct{ *rowpattern.Query }

func (q mr) Run(ctx context.Context, events []*event.Event, workers int, emit query.MREmit) (query.MRStats, error) {
	st, err := q.Query.Run(ctx, events, workers, rowpattern.Emit(emit))
	return query.MRStats(st), err
}

func (q mr) RunProfiled(ctx context.Context, events []*event.Event, emit query.MREmit) (query.MRStats, query.MRProfile, error) {
	st, p, err := q.Query.RunProfiled(ctx, events, rowpattern.Emit(emit))
	return query.MRStats(st), p, err
}

func (q mr) Live(emit query.MREmit) query.MRLive { return mrLive{q.Query.Live(rowpattern.Emit(emit))} }

func (q mr) Plan(st *query.MRStats, p query.MRProfile) query.MRPlan {
	prof, _ := p.(*rowpattern.Profile)
	return q.Query.Plan((*rowpattern.Stats)(st), prof)
}

// mrLive is query.MRLive over package rowpattern's.
type mrLive struct{ *rowpattern.Live }

func (l mrLive) Stats() query.MRStats { return query.MRStats(l.Live.Stats()) }
