package exec

import (
	"cmp"
	"context"
	"slices"

	"github.com/sase-cep/sase/event"
)

// sortRuns orders the runs of each position by partition value; a worker
// emits one position's matches of one value in the one-run order.
func sortRuns(ms []match) {
	for i := 0; i < len(ms); {
		j := i + 1
		sorted := true
		for ; j < len(ms) && ms[j].pos == ms[i].pos; j++ {
			sorted = sorted && CompareKeys(ms[j-1].key, ms[j].key) <= 0
		}
		if !sorted {
			slices.SortStableFunc(ms[i:j], func(a, b match) int { return CompareKeys(a.key, b.key) })
		}
		i = j
	}
}

// CompareKeys is the order in which a parallel run emits the matches that
// several partitions complete at one position, by partition key: a total
// order (absent first, then by kind, then by value), the same for any
// number of workers.
func CompareKeys(a, b event.Value) int {
	if a.Identical(b) {
		return 0
	}
	if c := cmp.Compare(a.Kind(), b.Kind()); c != 0 {
		return c
	}
	if c, ok := a.Compare(b); ok && c != 0 {
		return c
	}
	return cmp.Compare(a.String(), b.String())
}

// merger emits the workers' results and sums their stats.
type merger struct {
	emit   Emit
	chunks *chunker // the matches go to Chunks; nil: to emit
	frees  []chan *result
	// batches takes back the batches of an ordered merge's rounds.
	batches chan<- *batch
	stats   *Stats
	row     []Cell  // emitRun's
	layout  *layout // the rows' in the results
	// ctx is the run's; unchecked counts the rows emitted since the last
	// look at it.
	ctx       context.Context
	unchecked int
	// The consumer stopped the run at the item at stopPos of stopBatch's
	// (nil: at the stream's end) when stop.
	stop      bool
	stopBatch *batch
	stopPos   int64
}

// stopped notes that the consumer stopped the run at the run of res at
// position pos.
func (m *merger) stopped(res *result, pos int64) {
	m.stop, m.stopBatch, m.stopPos = true, res.batch, pos
}

// emitRun emits the run m of res; false when the consumer stops the run.
func (m *merger) emitRun(res *result, r match) bool {
	if m.chunks != nil {
		return m.chunks.run(res, r)
	}
	if m.row == nil {
		m.row = make([]Cell, m.layout.width)
	}
	// The merge looks at ctx before a run once 1024 rows have gone since
	// its last look (a run is at most a result's), as one run does
	// between its events: the workers may wait on it.
	if m.unchecked += r.n; m.unchecked >= 1024 {
		m.unchecked = 0
		if m.ctx.Err() != nil {
			return false
		}
	}
	return res.emitRun(r, m.layout, m.row, m.emit, m.stats)
}

// flush puts the chunk pending of the results emitted, before they go
// back to their workers; false when the consumer stops the run.
func (m *merger) flush() bool { return m.chunks == nil || m.chunks.flush() }

// free gives res back to its worker for reuse.
func (m *merger) free(res *result) {
	select {
	case m.frees[res.worker] <- res:
	default: // the worker has enough
	}
}

// merge emits the workers' matches in order, batch by batch, and sums
// their stats; it stops at the first error in stream order.
// ended says every worker reached the stream's end.
func (m *merger) merge(ctx context.Context, outs []chan *result, live *Live) (ended bool, err error) {
	n := len(outs)
	res := make([]*result, n)
	heads := make([]int, n)
	for {
		var firstErr error
		errPos := int64(-1)
		for i, out := range outs {
			r, ok := <-out
			if !ok {
				if firstErr == nil {
					firstErr = ctx.Err()
				}
				return false, firstErr
			}
			res[i], heads[i] = r, 0
			if r.err != nil && (errPos < 0 || r.errPos < errPos) {
				firstErr, errPos = r.err, r.errPos
			}
		}
		emitting := true
		summed := m.chunks != nil && m.chunks.sums && !slices.ContainsFunc(res, func(r *result) bool { return r.more })
		if summed {
			emitting = m.chunks.sum(res, errPos)
		}
		for emitting && !summed {
			for i := range res {
				// A worker's next result of the batch, once its last is
				// emitted: its runs come after those.
				for heads[i] == len(res[i].matches) && res[i].more {
					if !m.flush() {
						return false, nil
					}
					m.free(res[i])
					r, ok := <-outs[i]
					if !ok {
						return false, cmp.Or(firstErr, ctx.Err())
					}
					res[i], heads[i] = r, 0
					if r.err != nil && (errPos < 0 || r.errPos < errPos) {
						firstErr, errPos = r.err, r.errPos
					}
				}
			}
			best := -1
			var b *match // best's next run
			for i, r := range res {
				if heads[i] == len(r.matches) {
					continue
				}
				m := &r.matches[heads[i]]
				if best < 0 || m.pos < b.pos || m.pos == b.pos && CompareKeys(m.key, b.key) < 0 {
					best, b = i, m
				}
			}
			if best < 0 {
				break
			}
			r := *b
			if errPos >= 0 && r.pos >= errPos {
				break
			}
			heads[best]++
			if emitting = m.emitRun(res[best], r); !emitting {
				m.stopped(res[best], r.pos)
			}
		}
		if !m.flush() || !emitting {
			return false, nil // the consumer stopped before any error
		}
		if firstErr != nil {
			return false, firstErr
		}
		if res[0].stats != nil {
			for i, r := range res {
				m.stats.add(r.stats, i)
			}
			return true, nil
		}
		if res[0].idle {
			live.idle()
		}
		if b := res[0].batch; b != nil && !m.stop {
			select {
			case m.batches <- b: // every worker has sent its last result of it
			default:
			}
		}
		for _, r := range res {
			m.free(r)
		}
	}
}

// mergeAny emits the results of n workers as they come from out.
func (m *merger) mergeAny(ctx context.Context, n int, out <-chan *result) (ended bool, err error) {
	for r := range out {
		cut := int64(-1)
		if r.err != nil {
			cut = r.errPos
		}
		if m.chunks != nil && m.chunks.sums {
			// A count's: a tally's counts are not runs.
			if !m.chunks.sum([]*result{r}, cut) {
				m.stopped(r, r.lastPos())
				return false, nil
			}
		} else {
			for _, run := range r.matches {
				if cut >= 0 && run.pos >= cut {
					break
				}
				if !m.emitRun(r, run) {
					m.stopped(r, run.pos)
					return false, nil
				}
			}
		}
		if !m.flush() {
			return false, nil
		}
		if r.err != nil {
			return false, r.err
		}
		if r.stats != nil {
			m.stats.add(r.stats, r.worker)
			if n--; n == 0 {
				return true, nil
			}
		}
		m.free(r)
	}
	return false, ctx.Err()
}
