// Package rulebook runs many compiled queries, its rules, over one pass
// of a stream: an index says which rules each event reaches (the rules
// whose patterns name its type, less those whose first component's
// constant filter it fails, as Esper's filter index), and only those
// read it. Each rule's matches are exactly those it finds run alone, in
// the same order.
//
//	b := rulebook.New(stream.Schema, rules)
//	results := b.Run(ctx, stream.All(), sinks)
package rulebook

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"math"
	mbits "math/bits"
	"slices"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// Rule is one query of a rulebook, with its name (may be empty).
type Rule struct {
	Name  string
	Query *sase.Query
}

// Book is a set of rules compiled on one stream, indexed.
type Book struct {
	Rules []Rule
	ix    *index
}

// New indexes rules, compiled on a stream with schema.
func New(schema *event.Schema, rules []Rule) *Book {
	qs := make([]*sase.Query, len(rules))
	for i, r := range rules {
		qs[i] = r.Query
	}
	return &Book{Rules: rules, ix: newIndex(qs, schema)}
}

// Explain shows the index: per type how many rules read it, per indexed
// attribute the bounds.
func (b *Book) Explain() string { return b.ix.explain() }

// Result is how one rule's run ended: its stats, and the error that
// ended it early (a run-time error, or the context's).
type Result struct {
	Stats *sase.Stats
	Err   error
}

// Run runs every rule over events, rule i's matches to sinks[i], until
// the events end or ctx is done. A rule whose sink returns false, or
// which fails, ends alone; the others go on.
func (b *Book) Run(ctx context.Context, events iter.Seq[*event.Event], sinks []sase.Sink, opts ...sase.RunOption) []Result {
	if len(b.Rules) == 1 {
		// The index would only add to the cost of the rule's engine, which
		// filters as cheaply: the rule runs as alone (on one worker, as a
		// rule does).
		stats, err := b.Rules[0].Query.Run(ctx, events, sinks[0], append(slices.Clip(opts), sase.WithWorkers(1))...)
		if err == nil {
			err = ctx.Err()
		}
		return []Result{{Stats: stats, Err: err}}
	}
	r := b.Start(ctx, sinks, opts...)
	var n int
	for ev := range events {
		if n++; n&1023 == 0 && ctx.Err() != nil {
			break
		}
		r.Push(ev)
	}
	return r.Finish()
}

// batch is how many items a pass reads before the rules that follow no
// time read theirs: each rule then reads its share of a batch in one go,
// its state hot in the cache, where reading one rule after another for
// each event missed the cache at every rule (a push cost 5 to 10 times an
// event of the rule run alone, at 1,000 rules). At 1,000 rules a rule
// reads about 18 events of a batch of 1,024, 4 of one of 256: its state's
// misses spread over more events (about 10% less CPU than 256; 4,096
// gains nothing more). A bigger book takes a bigger batch (batchOf).
var batch = 1024

// batchOf is the batch of a pass of n rules: batch up to 1,250 rules,
// one more batch for each 1,250 more, up to 4. At 10,000 rules a rule
// reads 2 events of a batch of 1,024, and its engine's state, out of
// the cache by its next flush, is most of the cost: 4,096 took about
// 20% less CPU, 8,192 no less (its queues outgrow the cache). A pass of
// 5,000 (10,000 rules on 2 workers) gains from 4,096 too: 4-11% more
// events a second than with 2,048, in three runs alternated.
func batchOf(n int) int { return batch * min(4, 1+(n-1)/1250) }

// Pass is one pass of a rulebook over a stream, fed an item at a time.
// A rule reads its events in stream order; the rules that follow time
// read each item as it comes, the others a batch at a time, so the
// matches of different rules interleave by batch.
type Pass struct {
	b       *Book
	ctx     context.Context
	runs    []*sase.Pusher
	timed   []int32 // the rules that follow time, which see every item's
	isTime  []bool  // by rule
	set     bitset  // the rules that read the item through deliver: the index's types', and the timed
	started bitset  // the rules an event reaches as a start
	lastTS  int64
	gs      []gateState // by rule: its gate's state (index.gates)
	// live, by type, lists the rules gated on it whose gate may be open:
	// an event of a later component visits these, not every rule gated
	// on its type; listed, by type, is the set of them.
	live   [][]int32
	listed []bitset
	starts []starts // by rule: with a reachBound, its starts in the window
	bind   *planner.Binding
	// The events queued for the untimed rules to read at the next flush
	// are a log per block of 256 rules, in push order, bucketed by rule
	// at the flush: an append is sequential, where a queue per rule
	// missed the cache at each append, on its header and its tail (about
	// 18% of the CPU at 10,000 rules), and a block's buckets stay in the
	// cache, where one log's, over every rule, missed it at each entry.
	evs    []*event.Event // the batch's events; the logs refer to them by position
	itemOf []int64        // by position in evs: its item's number (Item)
	items  int64          // items (events and ticks) pushed so far
	// reading is the rule Flush has read its share of the batch, or -1:
	// its run says which item it reads (Item).
	reading int32
	blocks  [][]queued // by block of 256 rules: its log
	seq     int64      // events pushed so far
	last    []int64    // by rule: the seq of the last event queued for it
	out     []int32    // a block's log bucketed by rule: positions in evs
	n       int        // items since the last flush
	batch   int        // the items between flushes: batchOf the rules
	ended   []*Result  // by rule: its result once End ended it alone
	// groups are the rules that begin alike (share); gbyType, by type,
	// the groups whose first state it enters; glive, by type, the group
	// gates on it that a start has opened; grouped, the rules in a group,
	// whose starts members count.
	groups  []*group
	gbyType [][]*group
	glive   [][]*groupGate
	grouped bitset
	members []member // by rule
}

// member is a rule's place in its group: the starts it has read are the
// group's count less base (base counts those its run read too, as a
// later component's), frozen once it leaves the group.
type member struct {
	group        int32
	base, frozen int64
}

// Start starts a pass of every rule, rule i's matches to sinks[i].
func (b *Book) Start(ctx context.Context, sinks []sase.Sink, opts ...sase.RunOption) *Pass {
	n := len(b.Rules)
	p := &Pass{b: b, ctx: ctx, runs: make([]*sase.Pusher, n), isTime: make([]bool, n),
		lastTS: math.MinInt64, ended: make([]*Result, n), reading: -1}
	for i, r := range b.Rules {
		p.start(i, r, sinks[i], opts)
	}
	p.relist()
	if shareStarts {
		p.share()
	}
	return p
}

// shareStarts: Start groups the rules that begin alike (share); a test
// turns it off, to compare a pass with one that does not, or sets
// perGate lower, to group more.
var (
	shareStarts = true
	perGate     = 4
)

// share groups the rules that begin alike: their runs are pairs that
// read their starts through the index (filtered on their first
// component, by the same filter) and not the time. Each group's runs
// read their starts from one engine stack, which reads each event of
// its types once, and the pass gates them on the group's starts
// (groupGated), where each rule read its starts and kept its gate.
// Rules that begin alike make a group only when they are at least
// perGate for each type they are gated on, so that a group's gate serves
// that many rules on average: with fewer, the group's work (its filters
// at each event of its types, its gates' tests) costs about what the
// rules' own does, or more (sase bench rules' rulebooks, 10 rules to a
// group, all grouped: 1,000 rules, one a gate, took 13% more CPU an event
// grouped, 2,000 rules 5% less, 5,000 20% less and 10,000 30% less; with
// 4 a gate, 1,000 and 2,000 rules are not grouped, 5,000 took 16% less,
// 10,000 31% less). A rule added to a
// running pass (Add) keeps its own: a group's stack and log hold starts
// from before it was added.
func (p *Pass) share() {
	ix := p.b.ix
	keys := make([]string, len(p.runs))
	count := map[string]int{}
	types := map[string]map[int]bool{} // by key, the types its rules are gated on
	for i, run := range p.runs {
		if gt := &ix.gates[i]; !gt.filtered || p.isTime[i] {
			continue
		}
		if key, ok := run.StartsKey(); ok {
			f := ix.gates[i].filter
			key = fmt.Sprintf("%s; indexed %d %s %s", key, f.slot, f.op, f.c)
			keys[i] = key
			count[key]++
			if types[key] == nil {
				types[key] = map[int]bool{}
			}
			for _, t := range ix.gates[i].types {
				types[key][t] = true
			}
		}
	}
	byKey := map[string]*group{}
	gates := map[*group]map[int]*groupGate{}
	for i, key := range keys {
		if key == "" || count[key] < max(2, perGate*len(types[key])) {
			continue
		}
		g := byKey[key]
		if g == nil {
			g = &group{first: int32(i), slot: -1}
			byKey[key] = g
			gates[g] = map[int]*groupGate{}
			p.members[i].group = int32(len(p.groups))
			p.groups = append(p.groups, g)
		}
		g.starts = p.runs[i].Share(g.starts)
		p.grouped.set(int32(i))
		p.members[i].group = p.members[g.first].group
		gt := &ix.gates[i]
		g.keep = max(g.keep, gt.window)
		for _, t := range gt.types {
			gg := gates[g][t]
			if gg == nil {
				gg = &groupGate{g: g, t: t}
				gates[g][t] = gg
				g.gates = append(g.gates, gg)
			}
			var b *reachBound
			if ix.bounded[t].has(int32(i)) {
				b = gt.bound
				if g.slot < 0 {
					g.slot, g.field = b.field.Slot, b.field.Builtin
				}
			}
			gg.rules = append(gg.rules, newGatedRule(int32(i), gt.window, b, g))
			gg.window = max(gg.window, gt.window)
		}
	}
	for _, g := range p.groups {
		for _, t := range g.starts.Types() {
			for len(p.gbyType) <= t {
				p.gbyType = append(p.gbyType, nil)
			}
			p.gbyType[t] = append(p.gbyType[t], g)
		}
		for _, gg := range g.gates {
			for len(p.glive) <= gg.t {
				p.glive = append(p.glive, nil)
			}
			// Stable: rules of one window stay in rule order.
			slices.SortStableFunc(gg.rules, func(x, y gatedRule) int { return cmp.Compare(y.window, x.window) })
		}
	}
}

// relist sizes the pass's sets to the book's rules and types, and lists
// every rule that has read a start as live on its gated types.
func (p *Pass) relist() {
	n, ix := len(p.runs), p.b.ix
	p.batch = batchOf(n)
	p.set, p.started = newBitset(n), newBitset(n) // all empty between items
	p.last = append(p.last, make([]int64, n-len(p.last))...)
	p.members = append(p.members, make([]member, n-len(p.members))...)
	p.grouped = append(p.grouped, make(bitset, len(p.set)-len(p.grouped))...) // a rule added is in none
	p.blocks = append(p.blocks, make([][]queued, (n+blockSize-1)/blockSize-len(p.blocks))...)
	p.starts = append(p.starts, make([]starts, n-len(p.starts))...)
	for len(p.gs) < n {
		p.gs = append(p.gs, newGateState())
	}
	for i := range ix.gates {
		g := &ix.gates[i]
		p.gs[i].of(g)
		if g.bound != nil {
			p.starts[i].of(g.bound)
		}
	}
	p.bind = &planner.Binding{Events: make([]*event.Event, ix.comps)}
	p.live, p.listed = make([][]int32, len(ix.gated)), make([]bitset, len(ix.gated))
	for t := range p.listed {
		p.listed[t] = newBitset(n)
	}
	for i := range p.runs {
		if p.gs[i].started {
			p.list(int32(i))
		}
	}
}

// list puts rule i, which has just read a start, on the live list of
// each type it is gated on.
func (p *Pass) list(i int32) {
	if h := &p.gs[i]; h.gates == 1 {
		p.listOn(int(h.typ), i) // without reading the gate
		return
	}
	for _, t := range p.b.ix.gates[i].types {
		p.listOn(t, i)
	}
}

func (p *Pass) listOn(t int, i int32) {
	if !p.listed[t].has(i) {
		p.listed[t].set(i)
		p.live[t] = append(p.live[t], i)
	}
}

// gated marks the rules gated on e's type whose window after their last
// start holds e. Items come in time order (a stream's), so a rule whose
// window has passed stays closed until its next start: it leaves the
// live list.
func (p *Pass) gated(e *event.Event) {
	t, ix := e.Type, p.b.ix
	if t >= len(p.live) {
		return
	}
	live := p.live[t]
	k := 0
	// x is e's attribute the bound of the rule before read, as a float:
	// the rules mostly read the same one.
	var x float64
	xat, xb, xok := int32(-1), event.Builtin(0), false
	for _, i := range live {
		h := &p.gs[i]
		if e.TS > h.until {
			p.listed[t].unset(i)
			continue
		}
		live[k] = i
		k++
		if !ix.bounded[t].has(i) {
			p.hand(i)
			continue
		}
		if h.at != xat || h.atB != xb {
			v := e.Get(int(h.at), h.atB)
			if xat, xb, xok = h.at, h.atB, small(v); xok {
				x = v.AsFloat()
			}
		}
		ok, known := h.reaches(&p.starts[i], e, x, xok)
		if !known {
			ok = p.starts[i].holds(ix.gates[i].bound, e, p.bind)
		}
		if ok {
			p.hand(i)
		}
	}
	p.live[t] = live[:k]
}

// start starts rule i's run.
func (p *Pass) start(i int, r Rule, sink sase.Sink, opts []sase.RunOption) {
	p.runs[i] = r.Query.Start(p.ctx, sink, opts...)
	if p.isTime[i] = p.runs[i].Timed(); p.isTime[i] {
		p.timed = append(p.timed, int32(i))
	}
}

// Add adds rule r, compiled on a stream of schema, to the running pass,
// its matches to sink: it reads from the next item on (a rule added to a
// running live stream). It returns the rule's number; the index is built
// anew, as a rule is added once and read at every event.
func (p *Pass) Add(schema *event.Schema, r Rule, sink sase.Sink, opts ...sase.RunOption) int {
	p.Flush()
	i := len(p.runs)
	p.b = New(schema, append(slices.Clip(p.b.Rules), r))
	p.runs, p.isTime = append(p.runs, nil), append(p.isTime, false)
	p.ended = append(p.ended, nil)
	p.start(i, r, sink, opts)
	p.relist()
	return i
}

// End ends rule i alone (STOP QUERY on one rule, or its limit): what
// waits on the end of the stream goes out to its sink, and the others go
// on. It returns the rule's result; Finish returns it again.
func (p *Pass) End(i int) Result {
	if p.ended[i] == nil {
		p.Flush()
		stats, err := p.runs[i].Finish()
		p.ungroup(int32(i))
		stats.Events += p.members[i].frozen
		p.ended[i] = &Result{Stats: stats, Err: err}
	}
	return *p.ended[i]
}

// Failed is the first rule, in rule order, whose run failed (it ended
// alone, mid-stream) and was not ended by End, with its error; -1 and
// nil when none has. A caller that acks its input once every rule has
// read it asks before it acks: a failed rule's matches stop.
func (p *Pass) Failed() (int, error) {
	for i, r := range p.runs {
		if err := r.Err(); err != nil && p.ended[i] == nil {
			return i, err
		}
	}
	return -1, nil
}

// ungroup has rule i, which has ended, leave its group: its count of
// starts stops (Events), and the starts go to its run, which reads no
// more, as the starts of a rule in no group do.
func (p *Pass) ungroup(i int32) {
	if p.grouped.has(i) {
		m := &p.members[i]
		m.frozen = p.groups[m.group].count - m.base
		p.grouped.unset(i)
	}
}

// stopped has rule i, whose run ended as it read the batch's event at
// position stop of its share at, leave its group as of that event: the
// group's starts after it, which its run did not read, are not counted
// (those of its share after it had been counted once, in base).
func (p *Pass) stopped(i int32, at []int32, stop int32) {
	if !p.grouped.has(i) {
		return
	}
	p.ungroup(i)
	m := &p.members[i]
	starts := p.groups[m.group].batch
	k, _ := slices.BinarySearch(starts, stop+1)
	j, _ := slices.BinarySearch(at, stop+1)
	m.frozen -= int64(len(starts) - k)
	for _, e := range at[j:] {
		if _, ok := slices.BinarySearch(starts[k:], e); ok {
			m.frozen++
		}
	}
}

// Events is how many items rule i has read so far: its run's, and the
// starts its group read for it.
func (p *Pass) Events(i int) int64 {
	m := &p.members[i]
	if p.grouped.has(int32(i)) {
		return p.runs[i].Events() + p.groups[m.group].count - m.base
	}
	return p.runs[i].Events() + m.frozen
}

// Push hands one item (an event or a tick) to the rules it reaches, and
// its time to the rules that follow time. Items come in time order, as
// a stream's events do.
func (p *Pass) Push(ev *event.Event) {
	p.items++
	if !ev.IsTick() {
		p.evs = append(p.evs, ev)
		p.itemOf = append(p.itemOf, p.items-1)
		p.seq++
		p.b.ix.reach(ev, p.set, p.started)
		p.gated(ev)
		p.groupGated(ev)
		p.groupStarts(ev)
		p.opened(ev)
		p.deliver(ev)
	}
	if ev.TS > p.lastTS {
		p.lastTS = ev.TS
		for _, i := range p.timed {
			p.runs[i].Advance(ev.TS) // a rule that read ev is there already
		}
	}
	if p.n++; p.n >= p.batch {
		p.Flush()
	}
}

// opened marks the rules ev reaches as a start, and opens the gates of
// those that have any.
func (p *Pass) opened(ev *event.Event) {
	for w, bits := range p.started {
		if bits == 0 {
			continue
		}
		p.started[w] = 0
		for ; bits != 0; bits &= bits - 1 {
			i := int32(w<<6 + mbits.TrailingZeros64(bits))
			if p.grouped.has(i) {
				continue // its group read the start (groupStarts)
			}
			p.hand(i)
			h := &p.gs[i]
			if h.started && h.until >= ev.TS {
				// Still open: no live list has dropped it since its last
				// start (gated drops a rule only past its until).
				h.until = satAdd(ev.TS, h.window)
			} else if h.gates > 0 {
				h.started, h.until = true, satAdd(ev.TS, h.window)
				p.list(i)
			} else {
				continue
			}
			if h.bounded {
				p.starts[i].add(h, ev)
			}
		}
	}
}

// hand gives the item pushed last to rule i: a rule that follows time
// is marked, to read it in deliver, in rule order; another queues it.
// gated and opened hand their rules the item directly, without marking
// and scanning the set.
func (p *Pass) hand(i int32) {
	if len(p.timed) > 0 && p.isTime[i] { // isTime misses the cache at 10,000 rules
		p.set.set(i)
		return
	}
	p.queue(i)
}

// blockSize is the rules of a block: a log entry names a rule by its
// place in its block, in a byte.
const blockSize = 256

// queued is one entry of a block's log: the rule's place in the block
// (the top byte) reads the batch's event at the position of the rest.
// A batch holds at most batchOf's 4,096 events.
type queued uint32

// queue queues the batch's last event for rule i to read at the next
// flush, once: an event may reach a rule both as a start and as a later
// component's.
func (p *Pass) queue(i int32) {
	if p.last[i] == p.seq {
		return
	}
	p.last[i] = p.seq
	b := &p.blocks[uint32(i)/blockSize]
	*b = append(*b, queued(uint32(i)%blockSize)<<24|queued(len(p.evs)-1))
}

// deliver hands ev to the rules marked (by the index's types, or
// following time), in rule order: the rules that follow time read it
// now, the others queue it for the next flush.
func (p *Pass) deliver(ev *event.Event) {
	for w, bits := range p.set {
		if bits == 0 {
			continue
		}
		p.set[w] = 0
		for ; bits != 0; bits &= bits - 1 {
			i := int32(w<<6 + mbits.TrailingZeros64(bits))
			if p.isTime[i] {
				p.runs[i].Push(ev)
				continue
			}
			p.queue(i)
		}
	}
}

// Flush has every rule read the events queued for it: at the end of a
// batch, and when a live stream pauses, before its sinks sync.
func (p *Pass) Flush() {
	p.n = 0
	for b, log := range p.blocks {
		if len(log) == 0 {
			continue
		}
		if len(log) <= smallLog {
			// Sorted, an entry's rule comes first, then its event: each
			// rule reads its events in their order, in rule order.
			slices.Sort(log)
			for i := 0; i < len(log); {
				r := log[i] >> 24
				p.out = p.out[:0]
				for ; i < len(log) && log[i]>>24 == r; i++ {
					p.out = append(p.out, int32(log[i]&(1<<24-1)))
				}
				p.read(b*blockSize+int(r), p.out)
			}
			p.blocks[b] = log[:0]
			continue
		}
		// Bucket the log by rule (a counting sort: each rule's events keep
		// their order), then each rule reads its bucket, in rule order.
		var at [blockSize]int32 // by rule: its count, its bucket's start, then its end
		for _, e := range log {
			at[e>>24]++
		}
		var end int32
		for r, n := range at {
			end += n
			at[r] = end - n
		}
		p.out = slices.Grow(p.out[:0], len(log))[:len(log)]
		for _, e := range log {
			r := e >> 24
			p.out[at[r]] = int32(e & (1<<24 - 1))
			at[r]++
		}
		var from int32
		for r, to := range at {
			if to > from {
				p.read(b*blockSize+r, p.out[from:to])
				from = to
			}
		}
		p.blocks[b] = log[:0]
	}
	clear(p.evs)
	p.evs, p.itemOf = p.evs[:0], p.itemOf[:0]
	for _, g := range p.groups {
		g.starts.Prune(p.lastTS) // the runs read no item before it
		g.prune(p.lastTS)
		g.batch = g.batch[:0]
	}
}

// smallLog is the longest log Flush sorts rather than buckets: a
// bucketing walks the block's 256 rules three times, which a live
// stream's flush after each item would pay for its few entries.
const smallLog = 32

// read has rule i read the batch's events at positions at.
func (p *Pass) read(i int, at []int32) {
	p.reading = int32(i)
	if !p.runs[i].PushAt(p.evs, at) {
		p.stopped(int32(i), at, p.runs[i].Reading())
	}
	p.reading = -1
}

// Item is the number (from 0, in push order, ticks counted) of the item
// that released the match a sink is called with: in Flush, the item its
// rule reads; otherwise the item pushed last, which the rules that
// follow time read as it is pushed. A live book tags each match's line
// with the position of that item in its stream.
func (p *Pass) Item() int64 {
	if p.reading >= 0 {
		return p.itemOf[p.runs[p.reading].Reading()]
	}
	return p.items - 1
}

// Finish ends the pass: the matches that wait on the end of the stream
// go out. It returns each rule's result, in rule order.
func (p *Pass) Finish() []Result {
	p.Flush()
	res := make([]Result, len(p.runs))
	for i, run := range p.runs {
		if p.ended[i] != nil {
			res[i] = *p.ended[i]
			continue
		}
		stats, err := run.Finish()
		p.ungroup(int32(i))
		stats.Events += p.members[i].frozen
		if err == nil {
			err = p.ctx.Err()
		}
		res[i] = Result{Stats: stats, Err: err}
	}
	return res
}
