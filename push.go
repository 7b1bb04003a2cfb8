package sase

import (
	"context"

	"github.com/sase-cep/sase/exec"
)

// Pusher is a run of a query on one worker whose items are handed to it
// one at a time (Push, Advance, then Finish), for a caller that feeds
// many queries from one pass over a stream: a rulebook.
type Pusher = exec.Pusher

// Starts are the first state's instances of pushed runs that begin
// alike, read by each of them (Pusher.Share).
type Starts = exec.Starts

// Start starts a run of q whose items the caller pushes; its matches go
// to sink. WithWorkers does not apply: a pushed run has one worker.
func (q *Query) Start(ctx context.Context, sink Sink, opts ...RunOption) *Pusher {
	return exec.NewPusher(ctx, q.plan, sink, opts...)
}
