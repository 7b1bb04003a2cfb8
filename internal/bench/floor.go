package bench

import (
	"fmt"
	"time"

	"github.com/sase-cep/sase/event"
)

// W1Floor is the floor the engines are measured against on W1, `SEQ(stock1
// a, stock2 b, stock3 c) WITHIN window`: a loop written for that query
// alone, which binds every match (into *bind) as a sink would receive it,
// and counts them. It keeps each type's events in arrival order; a c's
// matches are the b's in its window, each with the a's in the window that
// came before that b. Specialised to a stream whose timestamps increase
// strictly (the generator's, ts = seq), so "before" is arrival order.
func W1Floor(stream *event.Stream, window int64, bind *[3]*event.Event) (int64, error) {
	var ids [3]int
	for i, name := range []string{"stock1", "stock2", "stock3"} {
		id, ok := stream.Schema.TypeID(name)
		if !ok {
			return 0, fmt.Errorf("W1 floor: stream %s has no type %s", stream.Name, name)
		}
		ids[i] = id
	}
	var as, bs []*event.Event
	var bEnd []int // per b: the number of a's that arrived before it
	aLo, bLo := 0, 0
	var matches int64
	for _, e := range stream.Events {
		switch e.Type {
		case ids[0]:
			as = append(as, e)
		case ids[1]:
			bs = append(bs, e)
			bEnd = append(bEnd, len(as))
		case ids[2]:
			from := e.TS - window
			for aLo < len(as) && as[aLo].TS < from {
				aLo++
			}
			for bLo < len(bs) && bs[bLo].TS < from {
				bLo++
			}
			for k := bLo; k < len(bs); k++ {
				if bEnd[k] <= aLo {
					continue // every a before this b is out of the window
				}
				for _, a := range as[aLo:bEnd[k]] {
					*bind = [3]*event.Event{a, bs[k], e}
				}
				matches += int64(bEnd[k] - aLo)
			}
		}
	}
	return matches, nil
}

// measureFloor runs W1Floor over a case's stream as Measure runs an engine.
func measureFloor(stream *event.Stream, window int64) (Result, error) {
	var bind [3]*event.Event
	start, cpu := time.Now(), CPUTime()
	n, err := W1Floor(stream, window, &bind)
	return Result{Engine: "floor", Workers: 1, Events: int64(len(stream.Events)), Matches: n, Elapsed: time.Since(start), CPU: CPUTime() - cpu}, err
}
