package exec

import (
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/query"
)

// A split run hands every match to the goroutine that called Run, which
// costs several times what an engine spends on a match (a copy of the row
// in the worker, one back in the merge, a call of the sink). A sink that
// encodes rows (a writer of JSON Lines or CSV) or counts them can do that
// work in the workers instead: each worker encodes its matches into its
// result's bytes, and the merge hands the sink ranges of those bytes in
// the one-worker order, joining the runs of consecutive positions that one
// worker's bytes hold one after the other: the bytes are not copied again
// on the way to the sink.

// Chunks is a sink whose rows a split run's workers encode (package
// query's: NewEncoder, Put, Limit).
type Chunks = query.Chunks

// Encode appends the encoding of row to b.
type Encode = query.Encode

// WithChunks has a run that splits over workers hand its matches to c
// instead of the run's emit, which a run on one worker calls, unless c
// only counts: that run hands c its count at the end.
func WithChunks(c *Chunks) Option { return func(r *runner) { r.par.chunks = c } }

// WithAnyOrder lets a split run over a loaded stream emit the workers'
// matches as they come, not in the order of one worker's run: the same
// matches, in an order that changes from run to run. A run-time error
// stops it with the first error a worker reports, a limit at the first
// matches that come.
func WithAnyOrder() Option { return func(r *runner) { r.par.anyOrder = true } }

// encode appends a row, emitted at position pos in partition key, to the
// result as its encoding by enc (nil: counted only); ends says to note
// where the row ends (Chunks.Limit may cut a run there).
func (r *result) encode(pos int64, key event.Value, enc Encode, ends bool, row []Cell) {
	r.open(pos, key)
	if enc != nil { // else a count: no bytes
		r.encodeRow(&r.matches[len(r.matches)-1], enc, ends, row)
	}
}

// encodeRow appends row, of the result's last run m, to its bytes.
func (r *result) encodeRow(m *match, enc Encode, ends bool, row []Cell) {
	r.buf = enc(r.buf, row)
	m.end = len(r.buf)
	if ends {
		r.ends = append(r.ends, len(r.buf))
	}
}

// chunker hands the encoded runs the merge emits to Chunks.Put: one range
// of bytes for the runs that follow each other in one result's bytes, and
// the ranges of several results at once (up to maxRanges), so that the
// sink can write them where they are (a vectored write) instead of
// copying them into a buffer of its own: runs of consecutive positions
// alternate between workers, so a range is often a few KB.
type chunker struct {
	c     *Chunks
	left  int64 // the rows Put may still take; < 0: no limit
	stats *Stats
	// The ranges pending, in the results' bufs, and their rows; the last
	// range, res.buf[b:end], grows while the runs follow each other.
	bufs   [][]byte
	res    *result
	b, end int
	rows   int
	// sums: c only counts, with no limit, so the merge hands it the sum
	// of a round's runs at once (sum), in no order.
	sums bool
}

// maxRanges bounds the ranges a Put takes: a writev takes at most 1024
// (IOV_MAX), the sink's own buffer one of them.
const maxRanges = 1023

func newChunker(c *Chunks, stats *Stats) *chunker {
	k := &chunker{c: c, left: -1, stats: stats}
	if c.Limit > 0 {
		k.left = c.Limit
	}
	k.sums = c.Limit == 0 && (c.NewEncoder == nil || c.NewEncoder() == nil)
	return k
}

// sum puts the rows of the runs of results before position errPos (< 0:
// all), a count's, as one chunk; false when the sink stops the run. Each
// of a count's results holds a whole batch (it has no rows, so it is
// never full), and its runs need no merge.
func (k *chunker) sum(res []*result, errPos int64) bool {
	rows := 0
	for _, r := range res {
		for i := range r.matches {
			if errPos < 0 || r.matches[i].pos < errPos {
				rows += r.matches[i].n
			}
		}
		if n := len(r.counts); n == 0 || errPos < 0 || r.counts[n-1].pos < errPos {
			rows += int(r.counted)
			continue
		}
		for _, c := range r.counts {
			if c.pos < errPos {
				rows += int(c.n)
			}
		}
	}
	if rows == 0 {
		return true
	}
	k.stats.Matches += int64(rows)
	return k.c.Put(nil, rows)
}

// run adds the run m of res to the ranges pending; false when the run
// stops (the sink or the limit).
func (k *chunker) run(res *result, m match) bool {
	n, end := m.n, m.end
	if k.left >= 0 && int64(n) >= k.left {
		n = int(k.left)
		if len(res.ends) > 0 { // else a count: no bytes
			end = res.ends[m.row+n-1]
		}
	}
	switch {
	case end == m.b: // a count's: no bytes
	case k.res == res && k.end == m.b:
		k.end = end
		k.bufs[len(k.bufs)-1] = res.buf[k.b:end]
	default:
		if len(k.bufs) == maxRanges && !k.flush() {
			return false
		}
		k.res, k.b, k.end = res, m.b, end
		k.bufs = append(k.bufs, res.buf[m.b:end])
	}
	k.rows += n
	if k.left >= 0 {
		if k.left -= int64(n); k.left == 0 {
			k.flush()
			return false
		}
	}
	return true
}

// flush puts the ranges pending; the merge calls it before it gives their
// results back to their workers.
func (k *chunker) flush() bool {
	if k.rows == 0 {
		return true
	}
	bufs, rows := k.bufs, k.rows
	k.res, k.rows = nil, 0
	k.stats.Matches += int64(rows)
	ok := k.c.Put(bufs, rows)
	clear(bufs) // the results go back to their workers
	k.bufs = bufs[:0]
	return ok
}

// keeper is how a worker keeps the rows it emits for the merge: copied
// into its result's arenas, or encoded for Chunks.
//
// One item tends to complete many matches of one partition, and the
// worker knows when a row is of the run of the one before (a row's
// partition is that of its last positive event, which they share): once
// it has kept a row and the keeper holds its run (hold), it hands the
// rows after it to more, which adds them to the run without looking at
// their position and partition, and a count's rows (counts) with no work
// at all: close adds those the runner has counted since hold to the run.
// Every engine counts a match (Stats.Matches) before it emits it.
type keeper struct {
	layout *layout
	chunks *Chunks
	enc    Encode
	ends   bool // note each row's end (Chunks.Limit)
	counts bool // Chunks without an encoder: the rows are only counted
	// events: rows of events only, kept as their events (more, inlined:
	// the engine's emit of a run's rows after the first)
	events bool
	// open: it holds the run of the last row kept, since the runner's
	// base-th match.
	open bool
	base int64
}

func newKeeper(l *layout, c *Chunks) keeper {
	k := keeper{layout: l, chunks: c}
	if c != nil {
		if c.NewEncoder != nil {
			k.enc = c.NewEncoder()
		}
		k.ends = c.Limit > 0 && k.enc != nil
		k.counts = k.enc == nil
	}
	k.events = c == nil && l.events
	return k
}

// keep adds row, emitted at position pos in partition key, to res.
func (k *keeper) keep(res *result, pos int64, key event.Value, row []Cell) {
	if k.chunks != nil {
		res.encode(pos, key, k.enc, k.ends, row)
		return
	}
	res.add(pos, key, k.layout, row)
}

// hold says the rows after the one kept, the runner's matches-th match,
// are of its run until close.
func (k *keeper) hold(matches int64) { k.open, k.base = true, matches }

// more adds row to the run held.
func (k *keeper) more(res *result, row []Cell) {
	if k.events { // hot callers test this first: more does not inline
		res.moreEvents(row)
		return
	}
	k.moreRow(res, row)
}

// moreEvents adds a row of events only to the result's last run, its
// events in evs.
func (r *result) moreEvents(row []Cell) {
	r.matches[len(r.matches)-1].n++
	r.evs = appendEvents(r.evs, row)
}

func (k *keeper) moreRow(res *result, row []Cell) {
	if k.counts {
		return // a count's are counted at close
	}
	m := &res.matches[len(res.matches)-1]
	m.n++
	if k.chunks == nil {
		res.cells(k.layout, row)
		return
	}
	res.encodeRow(m, k.enc, k.ends, row)
}

// close ends the run held, if any, whose last row is the runner's
// upTo-th match.
func (k *keeper) close(res *result, upTo int64) {
	if k.open {
		k.open = false
		if k.counts {
			res.matches[len(res.matches)-1].n += int(upTo - k.base)
		}
	}
}

// tally is how a split run's worker counts its matches for a sink that
// only counts them (Chunks without an encoder or a limit) when its runner
// finds only matches it may count (or the worker can tell at each item
// how many are its own): the engine adds them up, as on one worker
// (runner.counts), with no row handed over, and the worker takes at each
// item's end the number the item added, a run of the result with no rows
// (a count has no order but the error's cut, which is by position).
type tally struct {
	on      bool
	counted int64 // the runner's Matches at the last take
}

// tallies says whether a run with chunks c and keeper k may tally.
func tallies(c *Chunks, k *keeper) bool { return c != nil && k.counts && c.Limit == 0 }

// start has r count its matches for the tally.
func (t *tally) start(r *runner) {
	t.on, t.counted = true, r.stats.Matches
	r.emit, r.counts = func([]Cell) bool { return true }, true
}

// take returns the matches r counted since the last take.
func (t *tally) take(r *runner) int64 {
	n := r.stats.Matches - t.counted
	t.counted = r.stats.Matches
	return n
}

// count adds n matches that the item at position pos completed or
// released to the result's counts.
func (r *result) count(pos int64, n int64) {
	r.counts = append(r.counts, posCount{pos, n})
	r.counted += n
}

// posCount is the number of matches an item completed or released, for
// a tally: two words where a run (match) takes ten.
type posCount struct{ pos, n int64 }

// lastPos is the position of the result's last run or count.
func (r *result) lastPos() int64 {
	pos := int64(-1)
	if len(r.matches) > 0 {
		pos = r.matches[len(r.matches)-1].pos
	}
	if len(r.counts) > 0 {
		pos = max(pos, r.counts[len(r.counts)-1].pos)
	}
	return pos
}
