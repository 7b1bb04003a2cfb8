package exec

import (
	"math"
	"slices"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// runScan evaluates a strategy plan by runs (docs/STRATEGIES.md, Runs): a run is a partial
// match that starts at an event that can begin S1 and reacts to each later
// event by the strategy's rule. Complete matches go to the next stage
// (negation, transformation), which treats them like SSC's sequences.
//
// Runs are kept per partition (runs_partition.go), so an event only meets the
// runs it can belong to. Under skip-till-next-match and the contiguity
// strategies a run is deterministic: one run per start event, updated in
// place. Under skip-till-any-match a run is copied on each event it can
// use (runs_any.go).
type runScan struct {
	r      *runner
	op     *planner.RunScan
	next   stage
	states []runState
	bind   *planner.Binding
	any    bool // skip-till-any-match
	// holds is set when a later stage may keep a match after push returns
	// (a negated end waits for the window): lists built in scratch space
	// are then copied before they are pushed.
	holds bool
	// relevant[t]: events of type t can change some run. Only next- and
	// any-match may skip the others; for contiguity every event counts.
	relevant []bool
	parts    buckets
	initKey  []event.Value // a new run's partition key: the constants of [attr = 'v']
	born     []*run        // runs made while an event is processed; they react from the next one
	free     []*run
	fresh    *run // the candidate run of the event being processed
	// visiting is the event being processed while the runs it meets are
	// known to be of its partition (a bucket of the only partition test),
	// so that rule (b) holds for it without a look; nil otherwise.
	visiting *event.Event
	one      [1]*event.Event // the list [e] while a closure's begin conjuncts are checked
	buf      []*event.Event  // scratch for any-match's list enumeration
}

// runState is a RunState with what the scan needs at hand.
type runState struct {
	*planner.RunState
	comp    *planner.Component
	closure bool
	last    bool   // Sm: binding it completes the run
	types   []bool // by type id
	// For a closure that is not last: the next state's begin conjuncts
	// that do not read the closure. When they fail for an event, no list
	// can proceed with it (any-match then skips enumerating the lists).
	nextFixed []*planner.Pred
}

func (st *runState) has(t int) bool { return t < len(st.types) && st.types[t] }

// run is a partial match. events and lists are indexed by component, so
// that a planner.Binding can read them as they are.
type run struct {
	state   int   // index in states
	first   int64 // ts of the first selected event
	last    int64 // ts of the latest selected event
	lastSeq int64 // its seq
	due     int64 // first + W: once the stream passes it the run finishes
	events  []*event.Event
	lists   [][]*event.Event
	key     []event.Value // by partition test; absent until an event fixes it
}

func newRunScan(r *runner, op *planner.RunScan, next stage) *runScan {
	p := r.plan
	s := &runScan{r: r, op: op, next: next, bind: p.NewBinding(), any: op.Strategy == planner.AnyMatch}
	ntypes := len(p.Stream.Schema.Types)
	s.relevant = make([]bool, ntypes)
	for i, rs := range op.States {
		c := p.Components[rs.Comp]
		st := runState{RunState: rs, comp: c, closure: c.Kind == planner.Closure, last: i == len(op.States)-1, types: make([]bool, ntypes)}
		for _, t := range c.Types {
			st.types[t] = true
			s.relevant[t] = true
		}
		s.states = append(s.states, st)
	}
	for j := range s.states[:len(s.states)-1] {
		if st := &s.states[j]; st.closure {
			for _, pr := range s.states[j+1].Begin {
				if !slices.Contains(pr.Vars, st.Comp) {
					st.nextFixed = append(st.nextFixed, pr)
				}
			}
		}
	}
	if op.Strategy == planner.PartitionContiguity || op.Strategy == planner.StrictContiguity {
		for t := range s.relevant {
			s.relevant[t] = true
		}
	}
	for _, c := range p.Components {
		if c.Kind == planner.Negated && c.Next < 0 {
			s.holds = true
		}
	}
	s.initKey = make([]event.Value, len(op.Partition))
	for i, q := range op.Partition {
		if q.Const != nil {
			s.initKey[i] = *q.Const
		}
	}
	// Strict contiguity lets no event pass a run unseen, so it has one
	// bucket; the others bucket runs by the first partition test.
	var by *planner.Equiv
	if len(op.Partition) > 0 && op.Strategy != planner.StrictContiguity {
		by = op.Partition[0]
	}
	slack := op.Window
	if s.states[len(s.states)-1].closure {
		slack = 0
	}
	s.parts.init(by, op.HasWindow, op.Window, slack)
	s.fresh = s.newRun()
	return s
}

func (s *runScan) newRun() *run {
	if n := len(s.free); n > 0 {
		r := s.free[n-1]
		s.free = s.free[:n-1]
		return r
	}
	n := len(s.r.plan.Components)
	r := &run{events: make([]*event.Event, n), lists: make([][]*event.Event, n), key: make([]event.Value, len(s.initKey))}
	copy(r.key, s.initKey)
	return r
}

// release recycles a run that is over; its lists may live on in a match
// held downstream, so they are dropped, never reused.
func (s *runScan) release(r *run) {
	clear(r.events)
	clear(r.lists)
	copy(r.key, s.initKey)
	r.state = 0
	s.free = append(s.free, r)
}

func (s *runScan) clone(r *run) *run {
	c := s.newRun()
	c.state, c.first, c.last, c.lastSeq, c.due = r.state, r.first, r.last, r.lastSeq, r.due
	copy(c.events, r.events)
	copy(c.lists, r.lists)
	copy(c.key, r.key)
	s.r.stats.Instances++
	return c
}

func (s *runScan) process(e *event.Event) {
	if e.Type < len(s.relevant) && !s.relevant[e.Type] {
		return
	}
	s.parts.each(e, s.react)
	s.open(e)
	for i, r := range s.born {
		s.parts.place(r)
		s.born[i] = nil
	}
	s.born = s.born[:0]
}

// react lets each run of bucket b react to e (docs/STRATEGIES.md, What each strategy does with an event) and keeps the ones
// that go on.
func (s *runScan) react(b *bucket, e *event.Event) {
	if b != s.parts.wild && len(s.op.Partition) == 1 {
		s.visiting = e
	}
	kept := b.runs[:0]
	for _, r := range b.runs {
		s.r.tick()
		if e.TS > r.due {
			s.end(r)
			continue
		}
		if !s.reactRun(r, e) {
			s.release(r)
			continue
		}
		if b == s.parts.wild && s.parts.by != nil && !r.key[0].IsAbsent() {
			s.born = append(s.born, r) // its partition is now known
			continue
		}
		kept = append(kept, r)
	}
	clear(b.runs[len(kept):])
	b.runs = kept
	s.visiting = nil
}

// reactRun applies the strategy's rule and reports whether r goes on.
func (s *runScan) reactRun(r *run, e *event.Event) bool {
	if s.any {
		s.reactAny(r, e)
		return true
	}
	acted, done := s.act(r, e)
	switch {
	case done:
		return false
	case acted:
		return true
	case s.op.Strategy == planner.StrictContiguity,
		s.op.Strategy == planner.PartitionContiguity && s.inPartition(r.key, e):
		s.finishRun(r)
		return false
	}
	return true // skip-till-next-match ignores e
}

// act is the action of a deterministic run on e (docs/STRATEGIES.md, Runs): select for a
// single; proceed, else take, for a closure. done reports that the run
// completed (and was handed on).
func (s *runScan) act(r *run, e *event.Event) (acted, done bool) {
	j := r.state
	st := &s.states[j]
	if !st.closure {
		if !s.selectable(r, st, e, r.last) || !s.bindIf(r, st, e) {
			return false, false
		}
		return true, s.advanceRun(r, j, e)
	}
	if s.proceeds(r, j, e) {
		return true, s.advanceRun(r, j+1, e)
	}
	if s.takes(r, st, e) {
		r.lists[st.Comp] = append(r.lists[st.Comp], e)
		r.last, r.lastSeq = e.TS, e.Seq
		s.fixKey(r.key, e)
		return true, false
	}
	return false, false
}

// advanceRun moves r past state j, just bound to e, and reports whether
// that completed it.
func (s *runScan) advanceRun(r *run, j int, e *event.Event) bool {
	r.last, r.lastSeq = e.TS, e.Seq
	s.fixKey(r.key, e)
	if s.states[j].last {
		s.complete(r)
		return true
	}
	r.state = j + 1
	return false
}

// open starts a run at e if e can begin S1 (docs/STRATEGIES.md, Runs).
func (s *runScan) open(e *event.Event) {
	r, st := s.fresh, &s.states[0]
	r.first, r.last, r.lastSeq, r.due = e.TS, math.MinInt64, -1, math.MaxInt64
	if s.op.HasWindow {
		r.due = satAdd(e.TS, s.op.Window)
	}
	if st.closure {
		if !s.takes(r, st, e) {
			return
		}
		r.lists[st.Comp] = []*event.Event{e}
		r.last, r.lastSeq = e.TS, e.Seq
		s.fixKey(r.key, e)
	} else if !s.selectable(r, st, e, r.last) || !s.bindIf(r, st, e) {
		return
	}
	s.r.stats.Instances++
	s.fresh = s.newRun()
	if !st.closure && s.advanceRun(r, 0, e) {
		s.release(r) // a one-event pattern: complete at once
		return
	}
	s.born = append(s.born, r)
}

// ---- conditions (docs/STRATEGIES.md, Runs) ----

func (s *runScan) use(r *run) *planner.Binding {
	s.bind.Events, s.bind.Lists = r.events, r.lists
	return s.bind
}

func (s *runScan) holdsAll(r *run, preds []*planner.Pred) bool {
	b := s.use(r)
	for _, pr := range preds {
		if !pr.Eval(b) {
			return false
		}
	}
	return true
}

// inPartition is rule (b): e agrees with the partition values the run has
// fixed (planner.Equiv.Agrees, which changes a key only while it is
// absent; fixKey fixes them once e is taken).
func (s *runScan) inPartition(key []event.Value, e *event.Event) bool {
	if e == s.visiting {
		return true
	}
	for i, q := range s.op.Partition {
		if !key[i].IsAbsent() && !q.Agrees(&key[i], e) {
			return false
		}
	}
	return true
}

// fixKey sets the partition values that e is the first to give; the mask
// says which, for unfixKey.
func (s *runScan) fixKey(key []event.Value, e *event.Event) (mask uint64) {
	for i, q := range s.op.Partition {
		if key[i].IsAbsent() {
			if v := q.Value(e); !v.IsAbsent() {
				key[i] = v
				mask |= 1 << i
			}
		}
	}
	return mask
}

func unfixKey(key []event.Value, mask uint64) {
	for i := range key {
		if mask&(1<<i) != 0 {
			key[i] = event.Value{}
		}
	}
}

// selectable is rule (c) but for the begin conjuncts: type, order after
// the latest selected event, window and partition.
func (s *runScan) selectable(r *run, st *runState, e *event.Event, last int64) bool {
	return st.has(e.Type) && e.TS > last && e.TS <= r.due && s.inPartition(r.key, e)
}

// bindIf binds e to single state st if its begin conjuncts hold.
func (s *runScan) bindIf(r *run, st *runState, e *event.Event) bool {
	r.events[st.Comp] = e
	if s.holdsAll(r, st.Begin) {
		return true
	}
	r.events[st.Comp] = nil
	return false
}

// takes is rule (d) for closure state st with the list r.lists[st.Comp].
func (s *runScan) takes(r *run, st *runState, e *event.Event) bool {
	if !st.has(e.Type) || e.TS > r.due || !s.inPartition(r.key, e) {
		return false
	}
	ci := st.Comp
	list := r.lists[ci]
	if len(list) == 0 && e.TS <= r.last {
		return false
	}
	b := s.use(r)
	b.Elem = e
	ok := s.holdsAll(r, st.Take)
	b.Elem = nil
	if ok && len(list) == 0 && len(st.Begin) > 0 {
		s.one[0] = e
		r.lists[ci] = s.one[:]
		ok = s.holdsAll(r, st.Begin)
		r.lists[ci] = list
	}
	return ok
}

// closable is rule (e).
func (s *runScan) closable(r *run, st *runState) bool {
	return len(r.lists[st.Comp]) >= st.comp.K && s.holdsAll(r, st.End)
}

// proceeds is rule (f) for closure state j; when it holds, e is bound to
// the next state's component.
func (s *runScan) proceeds(r *run, j int, e *event.Event) bool {
	st := &s.states[j]
	list := r.lists[st.Comp]
	if st.last || len(list) == 0 {
		return false
	}
	nx := &s.states[j+1]
	if !s.selectable(r, nx, e, list[len(list)-1].TS) || !s.bindIf(r, nx, e) {
		return false
	}
	if !s.closable(r, st) {
		r.events[nx.Comp] = nil
		return false
	}
	return true
}

// ---- completion (docs/STRATEGIES.md, Runs) ----

// complete hands r's match on.
func (s *runScan) complete(r *run) {
	s.r.stats.Operators[0].Out++
	s.next.push(s.use(r))
}

// finishRun ends a run that did not complete: only a closable trailing
// closure yields a match.
func (s *runScan) finishRun(r *run) {
	if st := &s.states[r.state]; st.last && st.closure {
		if s.any {
			s.finishAny(r)
		} else if s.closable(r, st) {
			s.complete(r)
		}
	}
}

// end finishes a run and releases it.
func (s *runScan) end(r *run) {
	s.finishRun(r)
	s.release(r)
}

// advance finishes the runs whose window the stream has passed.
func (s *runScan) advance(ts int64) { s.parts.expire(ts, s.end) }

// finish finishes every run: the stream has ended.
func (s *runScan) finish() { s.parts.drain(s.end) }

func (s *runScan) report(st *Stats) { instances(st) }
