package exec

import (
	"math"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// aisSSC is SSC with Active Instance Stacks (SASE §4.1–4.2): one stack per
// NFA state 1..n-1, whose instances record the event and its RIP, the
// index of the most recent instance of the previous stack with a smaller
// timestamp. Construction from an accepting event walks RIP ranges back
// through the stacks. With PAIS the stacks are kept per value of the
// partition attribute, and an event enters state j only when state j-1 of
// its partition has an instance (attribute-based transition filtering).
type aisSSC struct {
	timeless
	r          *runner
	op         *planner.AISScan
	next       stage
	n          int
	comps      []int
	typeStates []uint64 // by type id: the states (bit j for state j, 0-based) it may enter
	bind       *planner.Binding
	parts      *partitions[partition] // PAIS; wild holds the events lacking the attribute
	single     *partition             // without PAIS
	cur        *partition             // the partition being searched
	keyed      int                    // bound events that have the partition attribute
	minTS      int64                  // window's lower bound for the current event
	accept     *event.Event
	multiKey   []byte
}

type instance struct {
	ev   *event.Event
	rip  int  // absolute index in the previous stack, -1 when none
	wild bool // the event lacks the partition attribute
}

// aisStack is one state's stack; base is the absolute index of items[0],
// so RIPs stay valid while the bottom is pruned by the window.
type aisStack struct {
	items []instance
	base  int
}

func (s *aisStack) top() int { return s.base + len(s.items) - 1 }

type partition struct {
	stacks []aisStack
	// multi[j] counts the instances of state j by their Multi-PAIS
	// attribute values, for cross-attribute transition filtering.
	multi []map[string]int
}

func newAISSSC(r *runner, op *planner.AISScan, next stage) *aisSSC {
	s := &aisSSC{r: r, op: op, next: next, n: len(op.Comps), comps: op.Comps, bind: r.bind()}
	for j, ci := range op.Comps {
		for _, t := range r.plan.Components[ci].Types {
			for len(s.typeStates) <= t {
				s.typeStates = append(s.typeStates, 0)
			}
			s.typeStates[t] |= 1 << j
		}
	}
	if op.Partition != nil {
		s.parts = &partitions[partition]{}
		s.parts.init(s.newPartition(), s.clonePartition, op.WindowPushed, op.Window)
	} else {
		s.single = s.newPartition()
	}
	return s
}

func (s *aisSSC) newPartition() *partition {
	p := &partition{stacks: make([]aisStack, max(s.n-1, 0))}
	if len(s.op.Multi) > 0 {
		p.multi = make([]map[string]int, len(p.stacks))
		for j := range p.multi {
			p.multi[j] = map[string]int{}
		}
	}
	return p
}

func (s *aisSSC) process(ev *event.Event) {
	m := uint64(0)
	if ev.Type < len(s.typeStates) {
		m = s.typeStates[ev.Type]
	}
	if s.op.WindowPushed {
		s.minTS = satSub(ev.TS, s.op.Window)
		if s.parts != nil && s.parts.sweepDue(ev.TS) {
			s.sweep()
		}
	} else {
		s.minTS = math.MinInt64
	}
	if m = filterStates(&s.op.SeqScan, s.bind, ev, m); m == 0 {
		return
	}
	if s.parts == nil {
		s.enter(s.single, ev, m, false)
		return
	}
	v := s.op.Partition.Value(ev)
	if v.IsAbsent() {
		for _, p := range s.parts.all() {
			s.r.tick()
			s.enter(p, ev, m, true)
		}
		s.enter(s.parts.wild, ev, m, true)
		return
	}
	if q := s.op.Partition; q.Const != nil { // without one, nothing rejects a first value
		var fixed event.Value
		if !q.Agrees(&fixed, ev) {
			return
		}
	}
	p := s.parts.get(v)
	if p == nil {
		if m&1 == 0 && s.parts.wild.empty() {
			return // no instance of this value can precede it
		}
		p = s.parts.create(v)
	}
	s.enter(p, ev, m, false)
}

// enter moves ev into the states of m in partition p, constructing the
// sequences it completes.
func (s *aisSSC) enter(p *partition, ev *event.Event, m uint64, wild bool) {
	s.prune(p)
	// Higher states first: an event entering state j must not become its
	// own predecessor in state j+1 (equal timestamps never are in sequence).
	for j := s.n - 1; j >= 0; j-- {
		if m&(1<<j) == 0 {
			continue
		}
		rip := -1
		if j > 0 {
			if rip = s.rip(&p.stacks[j-1], ev.TS); rip < 0 || !s.multiAgrees(p, j-1, ev) {
				continue
			}
		}
		if j == s.n-1 {
			s.construct(p, ev, rip, wild)
			continue
		}
		st := &p.stacks[j]
		st.items = append(st.items, instance{ev: ev, rip: rip, wild: wild})
		s.r.stats.Instances++
		if p.multi != nil {
			p.multi[j][string(s.multiKeyOf(ev))]++
		}
	}
}

// clonePartition starts the partition of a new value with the wildcard
// events still in the window: they belong to it too. Their RIPs point into
// the same stacks, so the copy keeps them valid.
func (s *aisSSC) clonePartition(from *partition) *partition {
	p := s.newPartition()
	for j, st := range from.stacks {
		p.stacks[j] = aisStack{items: append([]instance(nil), st.items...), base: st.base}
	}
	for j, counts := range from.multi {
		for k, n := range counts {
			p.multi[j][k] = n
		}
	}
	return p
}

func (p *partition) empty() bool {
	for _, st := range p.stacks {
		if len(st.items) > 0 {
			return false
		}
	}
	return true
}

// rip returns the most recent instance of st with a timestamp before ts
// and inside the window, or -1.
func (s *aisSSC) rip(st *aisStack, ts int64) int {
	i := st.top()
	for i >= st.base && st.items[i-st.base].ev.TS >= ts {
		i--
	}
	if i < st.base || st.items[i-st.base].ev.TS < s.minTS {
		return -1
	}
	return i
}

func (s *aisSSC) multiKeyOf(ev *event.Event) []byte {
	b := s.multiKey[:0]
	for _, q := range s.op.Multi {
		v := event.PartitionKey(q.Value(ev))
		b = append(b, byte(v.Kind()))
		b = v.AppendText(b)
		b = append(b, 0)
	}
	s.multiKey = b
	return b
}

// multiAgrees is Multi-PAIS's cross-attribute transition filter: some
// instance of state j agrees with ev on every further attribute.
func (s *aisSSC) multiAgrees(p *partition, j int, ev *event.Event) bool {
	return p.multi == nil || p.multi[j][string(s.multiKeyOf(ev))] > 0
}

// prune drops the instances that fell out of the window.
func (s *aisSSC) prune(p *partition) {
	for j := range p.stacks {
		st := &p.stacks[j]
		k := 0
		for k < len(st.items) && st.items[k].ev.TS < s.minTS {
			if p.multi != nil {
				key := string(s.multiKeyOf(st.items[k].ev))
				if p.multi[j][key]--; p.multi[j][key] == 0 {
					delete(p.multi[j], key)
				}
			}
			k++
		}
		if k > 0 {
			st.items = st.items[k:]
			st.base += k
		}
	}
}

// sweep prunes every partition and forgets the empty ones.
func (s *aisSSC) sweep() {
	s.prune(s.parts.wild)
	s.parts.sweep(func(p *partition) bool {
		s.prune(p)
		return !p.empty()
	})
}

// construct enumerates the sequences ending with ev in the accepting
// state, walking RIP ranges from rip in the last stack.
func (s *aisSSC) construct(p *partition, ev *event.Event, rip int, wild bool) {
	s.bind.Events[s.comps[s.n-1]] = ev
	s.accept, s.cur = ev, p
	s.keyed = 0
	if !wild {
		s.keyed = 1
	}
	switch {
	case !s.dynamicAgrees(ev) || !s.checks(s.n-1):
	case s.n == 1:
		s.emit()
	default:
		s.search(p, s.n-2, rip)
	}
	s.bind.Events[s.comps[s.n-1]] = nil
}

func (s *aisSSC) search(p *partition, j, rip int) {
	st := &p.stacks[j]
	c := s.comps[j]
	for i := rip; i >= st.base; i-- {
		s.r.tick()
		inst := st.items[i-st.base]
		if inst.ev.TS < s.minTS {
			break
		}
		if !s.dynamicAgrees(inst.ev) {
			continue
		}
		s.bind.Events[c] = inst.ev
		if !s.checks(j) {
			continue
		}
		if !inst.wild {
			s.keyed++
		}
		if j == 0 {
			s.emit()
		} else {
			s.search(p, j-1, inst.rip)
		}
		if !inst.wild {
			s.keyed--
		}
	}
	s.bind.Events[c] = nil
}

// checks evaluates the predicates placed at state j, all of whose
// variables are bound once j is.
func (s *aisSSC) checks(j int) bool {
	if s.op.Checks == nil {
		return true
	}
	for _, pr := range s.op.Checks[j] {
		if !pr.Eval(s.bind) {
			return false
		}
	}
	return true
}

// dynamicAgrees is dynamic filtering in SC: every positive event agrees
// with the accepting event (the optimizer checked that all have the
// attribute).
func (s *aisSSC) dynamicAgrees(ev *event.Event) bool {
	for _, q := range s.op.Dynamic {
		if ref := q.Value(s.accept); !q.Agrees(&ref, ev) {
			return false
		}
	}
	return true
}

func (s *aisSSC) emit() {
	if s.parts != nil && s.keyed == 0 && s.cur != s.parts.wild {
		return // made of wildcard events only: the wildcard partition finds it
	}
	s.r.stats.Operators[0].Out++
	if s.next != nil {
		s.next.push(s.bind)
	}
}

func (s *aisSSC) report(st *Stats) { instances(st) }
