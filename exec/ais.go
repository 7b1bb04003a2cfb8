package exec

import (
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/queue"
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
	// What aisPair reads comes first, in the struct's first two cache
	// lines (as runner's fields; 128 bytes, after the 8 of the header
	// the heap puts before an object this size: all but stack0's first,
	// which pruning reads instead of its bottom's event, in the third:
	// 4% fewer instructions, 1% more L1 misses at 10,000 rules by
	// cachegrind), with pair's own copies
	// of what the other paths read in arrays of their own: a rulebook
	// visits each of its rules a few events at a time, its state out of
	// the cache at each visit, and each line costs a miss. cell1 is
	// cells[1], pairKey key, window op.Window when the window is pushed
	// (op.WindowPushed), else -1; pairTypes[j] has bit t set when type
	// t < 64 enters state j (typeStates for the others), filter0 is
	// state 0's filter when it is the scan's only one and compares with
	// a number, and stack0 the single partition's stacks when pair.
	r *runner
	// steps counts the scan's steps (the instances search and leaf
	// visit), in place of the runner's count.
	steps     ticker
	cell0     *Cell
	cell1     *Cell
	leaf0     *check
	filter0   *stateFilter
	pairKey   [2]int32
	pairTypes [2]uint64
	window    int64
	stack0    [1]aisStack
	// shared, when set, is the Starts the pair reads its first state's
	// instances from (Share) instead of stack0, sharedAt its cursor.
	shared     *Starts
	sharedAt   int
	minTS      int64 // window's lower bound for the current event
	filters    stateFilters
	typeStates []uint64 // by type id: the states (bit j for state j, 0-based) it may enter
	// pair: two states, without PAIS, whose last has no checks of its
	// own and whose matches leaf enumerates: aisPair's, a rulebook's
	// commonest rule (SEQ(A a, B b) WHERE a.x > c AND b.x < a.x - d).
	pair     bool
	op       *planner.AISScan
	next     stage
	n        int
	comps    []int
	bind     *planner.Binding
	parts    *partitions[partition] // PAIS; wild holds the events lacking the attribute
	single   *partition             // without PAIS
	cur      *partition             // the partition being searched
	keyed    int                    // bound events that have the partition attribute
	accept   *event.Event
	multiKey []byte
	// checks[j] are the checks of state j in the plan's order; key[j] is
	// the attribute slot the int checks read of state j's events (-1:
	// none), and keys/keyInts hold each bound state's value of it.
	checks  [][]check
	key     []int
	keys    []int64
	keyInts []bool
	// out, when set, is the transformation this scan hands its matches
	// to, whose columns are all events: construction writes each bound
	// event into the run's row at rowCol[j] (-1: not returned) and hands
	// the row over itself, without a binding to copy from.
	out    *transformStage
	rowCol []int
	// one[j] is state j's check when it is a single int check.
	one []*check
	// bindState writes state j's event into *slots[j], its place in the
	// binding (spareEv when nothing reads it), and cells[j], its cell of
	// the row (spare when the row does not return it or out is unset);
	// cell0 is cells[0], where leaf writes. checks0 are state 0's checks,
	// one0 the one int check they are when they are one; leaf0 is that
	// check with offsets too (leafChecked's, which adds them).
	slots   []**event.Event
	spareEv *event.Event
	cells   []*Cell
	spare   Cell
	checks0 []check
	one0    *check
	// mask0: state 0's checks read only states 0 and 1, so which of the
	// state-0 instances before a state-1 instance pass them is the same on
	// every visit, and the instance keeps it (searchMasked).
	mask0 bool
	// leafOK: out is set and there is no dynamic filtering (leafFits).
	leafOK, dynamic bool
	// masked3: three states, whose search of state 1 is searchMasked;
	// checksLast: the last state has checks of its own.
	masked3, checksLast bool
	// plain3: masked3 with PAIS, without Multi-PAIS, and one key
	// attribute for the three states, whose keyed events take enter3.
	plain3 bool
	// cut: the search stops at each state where no full chain of the
	// states before it can precede the instance; lo[j] is the earliest
	// timestamp of state j's instance in any chain through states 0..j
	// (bound, cutBelow).
	cut bool
	lo  []int64
}

type instance struct {
	ev  *event.Event
	rip int   // absolute index in the previous stack, -1 when none
	key int64 // the event's value of the state's key attribute, when keyInt
	// bits holds the flags below and, once masked, the mask in its low
	// maskLen bits: bit i set when the previous state's instance rip-i
	// passes its checks with this one (searchMasked). One word for both
	// keeps an instance in 32 bytes.
	bits uint64
}

const (
	maskLen   = 61
	keyIntBit = 1 << 61 // the key attribute holds an int
	wildBit   = 1 << 62 // the event lacks the partition attribute
	maskedBit = 1 << 63 // the mask is set
)

func (in *instance) keyInt() bool { return in.bits&keyIntBit != 0 }
func (in *instance) wild() bool   { return in.bits&wildBit != 0 }
func (in *instance) masked() bool { return in.bits&maskedBit != 0 }

// aisStack is one state's stack: buf[lo:] are its instances, base the
// absolute index of buf[lo], so RIPs stay valid while the bottom is pruned
// by the window. first is the ts of buf[lo]'s event, when there is one:
// pruneBefore reads it at every event instead of the event, often out of
// the cache (W2 on 100 symbols took 5% less time).
type aisStack struct {
	buf      []instance
	lo, base int
	first    int64
}

func (s *aisStack) items() []instance { return s.buf[s.lo:] }

// upTo returns the instances up to absolute index i.
func (s *aisStack) upTo(i int) []instance { return s.buf[s.lo : s.lo+i-s.base+1] }

// drop forgets the k oldest instances.
func (s *aisStack) drop(k int) { s.lo, s.base = s.lo+k, s.base+k }

// push adds an instance on top. When the array is full and at least half
// of it is pruned instances, the live ones move down instead of the array
// growing: a stack the window bounds stops allocating.
func (s *aisStack) push(in instance) {
	if queue.Due(len(s.buf), cap(s.buf), s.lo) {
		s.buf, s.lo = queue.Down(s.buf, s.lo), 0
	}
	if s.lo == len(s.buf) {
		s.first = in.ev.TS
	}
	s.buf = append(s.buf, in)
}

// check is one predicate of a state's checks. An int check compares the
// key attribute of this state's event with that of a later state k's
// (the state's value on the left), with no evaluator call; when either
// value is not an int it evaluates the predicate, as every other check
// does.
//
// Either side may add an int constant to its attribute (`b.price < a.price
// - 5`): offJ is added to this state's value and offK to state k's before
// they are compared; a sum int64 does not hold leaves the check to the
// evaluator, which stops the query with its overflow error. The search
// loops' inline tests (one) take only checks without offsets.
type check struct {
	pred       *planner.Pred
	isInt      bool
	k          int
	rel        order // bit 0 set when the check holds of a < b, bit 1 of a = b, bit 2 of a > b
	offJ, offK int64
}

func (c *check) holds(a, b int64) bool { return c.rel.intHolds(a, b) }

// noCheck stands for leaf0 where there is none.
var noCheck check

// bit is holds as 0 or 1, without a branch: for setMask, whose loop
// would otherwise mispredict about one comparison in two when the values
// are a random walk's (a loop that branches on the outcome anyway is
// better off with holds' fewer instructions).
func (c *check) bit(a, b int64) uint64 { return c.rel.intBit(a, b) }

// intHolds is whether a o b holds of ints, with branches.
func (o order) intHolds(a, b int64) bool {
	switch {
	case a < b:
		return o&0b001 != 0
	case a > b:
		return o&0b100 != 0
	}
	return o&0b010 != 0
}

// intBit is intHolds as 0 or 1, without a branch.
func (o order) intBit(a, b int64) uint64 {
	return uint64(o>>(b2u(a >= b)+b2u(a > b))) & 1
}

type partition struct {
	stacks []aisStack
	// multi[j] counts the instances of state j by their Multi-PAIS
	// attribute values, for cross-attribute transition filtering.
	multi []map[string]int
}

func newAISSSC(r *runner, op *planner.AISScan, next stage) *aisSSC {
	s := &aisSSC{r: r, op: op, next: next, n: len(op.Comps), comps: op.Comps, bind: r.bind(), filters: newStateFilters(r.plan, &op.SeqScan)}
	s.planChecks()
	s.planRow()
	for j, ci := range op.Comps {
		for _, t := range r.plan.Components[ci].Types {
			for len(s.typeStates) <= t {
				s.typeStates = append(s.typeStates, 0)
			}
			s.typeStates[t] |= 1 << j
		}
	}
	if s.cut = s.n >= cutFrom; s.cut {
		s.lo = ofRun[int64](s.r, s.n-2)
	}
	if op.Partition != nil {
		s.parts = &partitions[partition]{}
		s.parts.init(s.newPartition(), s.clonePartition, op.WindowPushed, op.Window)
		s.parts.reuse = s.reseed
	} else {
		s.single = s.newPartition()
	}
	return s
}

// planChecks sorts each state's checks into int checks and the others. A
// predicate v.x op w.y between a state's event and a later state's, on
// attributes in slots, is an int check when no other int check of either
// state reads another attribute of it.
func (s *aisSSC) planChecks() {
	s.key = ofRun[int](s.r, s.n)
	s.keys, s.keyInts = ofRun[int64](s.r, s.n), ofRun[bool](s.r, s.n)
	s.one = ofRun[*check](s.r, s.n)
	for j := range s.key {
		s.key[j] = -1
	}
	if s.op.Checks == nil {
		return
	}
	s.checks = make([][]check, s.n)
	for j, preds := range s.op.Checks {
		for _, pr := range preds {
			c := check{pred: pr}
			if k, x, y, op, ok := s.pairOf(j, pr); ok && s.keyOn(j, x.slot) && s.keyOn(k, y.slot) {
				c.isInt, c.k = true, k
				c.rel = orderOf(op)
				c.offJ, c.offK = x.off, y.off
			}
			s.checks[j] = append(s.checks[j], c)
		}
	}
	for j, cs := range s.checks {
		if len(cs) == 1 && cs[0].isInt && cs[0].offJ == 0 && cs[0].offK == 0 {
			s.one[j] = &cs[0]
		}
	}
	s.checksLast = len(s.checks[s.n-1]) > 0
	s.checks0, s.one0 = s.checks[0], s.one[0]
	if len(s.checks0) == 1 && s.checks0[0].isInt {
		s.leaf0 = &s.checks0[0]
	}
	s.mask0 = s.n >= 3 && len(s.checks0) > 0
	for _, c := range s.checks0 {
		for _, v := range c.pred.Vars {
			s.mask0 = s.mask0 && (v == s.comps[0] || v == s.comps[1])
		}
	}
}

// pairOf matches pr, a check of state j, as j.x op k.y with state k
// after j: a comparison of two plain attributes, each plus or minus an
// int constant or not, operands turned so that j's is on the left.
func (s *aisSSC) pairOf(j int, pr *planner.Pred) (k int, x, y offAttr, op ast.Op, ok bool) {
	e, isBin := pr.Expr.(*planner.Binary)
	if !isBin || !e.Op.IsComparison() {
		return 0, x, y, 0, false
	}
	x, okX := s.offAttrOf(e.X)
	y, okY := s.offAttrOf(e.Y)
	if !okX || !okY {
		return 0, x, y, 0, false
	}
	op = e.Op
	if x.state != j {
		x, y = y, x
		op = converse(op)
	}
	if x.state != j || y.state <= j {
		return 0, x, y, 0, false
	}
	return y.state, x, y, op, true
}

// offAttr is a plain attribute of state's events in slot, plus off.
type offAttr struct {
	state, slot int
	off         int64
}

// offAttrOf matches e as a plain attribute of a state (stateOf), alone
// or plus or minus an int constant (either side of +): what the
// evaluator computes as the attribute's int plus off when the attribute
// holds an int (and int64 holds the sum).
func (s *aisSSC) offAttrOf(e planner.Expr) (offAttr, bool) {
	var off int64
	if x, c, sub, ok := planner.AddedConst(e); ok {
		if !c.IsInt() {
			return offAttr{}, false
		}
		if off = c.Int(); sub {
			if off == math.MinInt64 {
				return offAttr{}, false // a - c is not a + -c: -c overflows
			}
			off = -off
		}
		e = x
	}
	a, ok := e.(*planner.Attr)
	if !ok {
		return offAttr{}, false
	}
	j := s.stateOf(a)
	return offAttr{state: j, slot: a.Slot, off: off}, j >= 0
}

// converse is the comparison that holds of (y, x) when op holds of (x, y).
func converse(op ast.Op) ast.Op {
	switch op {
	case ast.OpLt:
		return ast.OpGt
	case ast.OpLe:
		return ast.OpGe
	case ast.OpGt:
		return ast.OpLt
	case ast.OpGe:
		return ast.OpLe
	}
	return op // = and != are symmetric
}

// stateOf is the state of a plain attribute of a positive single's event
// in a slot, or -1.
func (s *aisSSC) stateOf(a *planner.Attr) int {
	if a.Index != 0 || a.Builtin != planner.NotBuiltin || s.r.plan.Components[a.Comp].Kind != planner.Single {
		return -1
	}
	return slices.Index(s.comps, a.Comp)
}

// keyOn makes slot state j's key attribute unless it has another.
func (s *aisSSC) keyOn(j, slot int) bool {
	if s.key[j] < 0 {
		s.key[j] = slot
	}
	return s.key[j] == slot
}

// keyOf reads state j's key attribute of ev.
func (s *aisSSC) keyOf(j int, ev *event.Event) (int64, bool) { return keyAt(s.key[j], ev) }

// keyAt reads ev's attribute in slot k (none when k < 0) as an int.
func keyAt(k int, ev *event.Event) (int64, bool) {
	if k >= 0 && k < len(ev.Attrs) && ev.Attrs[k].IsInt() {
		return ev.Attrs[k].Int(), true
	}
	return 0, false
}

// planRow sets out when the scan's next stage is the output and returns
// only events, each component at most once.
func (s *aisSSC) planRow() {
	t, ok := s.next.(*transformStage)
	if !ok {
		return
	}
	s.rowCol = make([]int, s.n)
	for j := range s.rowCol {
		s.rowCol[j] = -1
	}
	for i, col := range t.op.Columns {
		j := slices.Index(s.comps, col.Comp)
		if col.Kind != planner.ColEvent || j < 0 || s.rowCol[j] >= 0 {
			s.rowCol = nil
			return
		}
		s.rowCol[j] = i
	}
	s.out = t
}

// start drops the shortcut to the output for a run that times its
// operators or a worker that emits only its own matches: those need the
// transformation's own push.
func (s *aisSSC) start() {
	if s.r.clock.on || s.r.own != nil {
		s.out = nil
	}
	s.dynamic = len(s.op.Dynamic) > 0
	s.leafOK = s.out != nil && !s.dynamic
	s.masked3 = s.n == 3 && s.mask0 && s.leafOK && !s.cut
	s.plain3 = s.masked3 && len(s.op.Multi) == 0 && s.parts != nil && s.key[0] == s.key[1] && s.key[1] == s.key[2]
	// Without checks, the binding is read only by the stages after the
	// scan, which out bypasses.
	binds := s.out == nil || s.checks != nil
	s.slots, s.cells = ofRun[**event.Event](s.r, s.n), ofRun[*Cell](s.r, s.n)
	for j := range s.n {
		s.slots[j], s.cells[j] = &s.spareEv, &s.spare
		if binds {
			s.slots[j] = &s.bind.Events[s.comps[j]]
		}
		if s.out != nil && s.rowCol[j] >= 0 {
			s.cells[j] = &s.r.row[s.rowCol[j]]
		}
	}
	s.cell0 = s.cells[0]
	if s.pair = s.n == 2 && s.parts == nil && s.leafOK && !s.checksLast; s.pair {
		s.single.stacks, s.cell1, s.pairKey = s.stack0[:], s.cells[1], [2]int32{int32(s.key[0]), int32(s.key[1])}
		if s.window = -1; s.op.WindowPushed {
			s.window = s.op.Window // a plan's window is never negative (planner.Validate)
		}
		for t, m := range s.typeStates[:min(len(s.typeStates), 64)] {
			s.pairTypes[0] |= m & 1 << t
			s.pairTypes[1] |= m >> 1 & 1 << t
		}
		if f := s.filters.list; len(f) == 1 && f[0].bit == 1 && f[0].isConst { // states is 1
			s.filter0 = &f[0]
		}
		s.r.src = aisPair{s}
	}
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
	if m = s.filters.apply(s.bind, ev, m); m == 0 {
		return
	}
	if s.parts == nil {
		s.enter(s.single, ev, m, false)
		return
	}
	v := s.op.Partition.Value(ev)
	if v.IsAbsent() {
		for _, p := range s.parts.all() {
			s.steps.tick(s.r)
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
	if s.plain3 {
		s.enter3(p, ev, m)
		return
	}
	s.enter(p, ev, m, false)
}

// aisPair is the source of a run whose scan is a pair (start puts it in
// the scan's place), so that the run's call of process is a call of
// its own.
type aisPair struct{ *aisSSC }

// process is aisSSC's for pair: enter's and construct's steps for its
// two states written out, without the calls a state's loop and the
// cases pair rules out cost (a rulebook hands each of its rules a few
// events, each of which is most often a match or a start).
func (p aisPair) process(ev *event.Event) {
	s := p.aisSSC
	var m uint64
	if t := uint(ev.Type); t < 64 {
		m = s.pairTypes[0]>>t&1 | s.pairTypes[1]>>t&1<<1
	} else if t < uint(len(s.typeStates)) {
		m = s.typeStates[t]
	}
	if m == 0 {
		return
	}
	minTS := int64(math.MinInt64)
	if s.window >= 0 {
		minTS = satSub(ev.TS, s.window)
	}
	// filter0 set, state 0's is the only filter: tested in place.
	if f := s.filter0; f != nil && m&1 != 0 {
		if bit, ok := f.test(ev); ok {
			m &^= 1 - bit
		} else {
			m = s.filters.apply(s.bind, ev, m)
		}
	} else if f == nil && m&s.filters.states != 0 { // apply's call for the types filters read
		m = s.filters.apply(s.bind, ev, m)
	}
	if m == 0 {
		return
	}
	st := &s.stack0[0]
	if s.shared != nil { // the first state's events enter the shared stack
		if items := s.shared.between(minTS, ev.TS, &s.sharedAt); len(items) > 0 {
			s.pairMatches(items, ev)
		}
		return
	}
	st.pruneBefore(minTS)
	if m&0b10 != 0 {
		if rip := st.rip(ev.TS, minTS); rip >= 0 {
			s.pairMatches(st.upTo(rip), ev)
		}
	}
	if m&0b01 != 0 {
		key, isInt := keyAt(int(s.pairKey[0]), ev)
		st.push(instanceOf(ev, -1, key, isInt))
		s.r.stats.Instances++
	}
}

// pairMatches is construct for pair: state 1 bound to ev, the matches
// that items, state 0's instances up to ev's RIP, complete. When state
// 0's check is one int comparison (leaf0) and ev's key an int, its loop
// is leafChecked's, and the binding and keys are written only for an
// instance whose check needs the evaluator (bindPair): a rulebook's
// visit of a rule then touches fewer cache lines.
func (s *aisSSC) pairMatches(items []instance, ev *event.Event) {
	s.cell1.Event = ev
	key, isInt := keyAt(int(s.pairKey[1]), ev)
	one, k, kOK := s.leaf0, int64(0), false
	if one != nil {
		k, kOK = planner.AddInt(key, one.offK) // past int64: leaf's evaluator reports it
	}
	if !kOK || !isInt || len(items) > leafChunk {
		*s.slots[1], s.keys[1], s.keyInts[1] = ev, key, isInt // what state 0's checks read
		s.leaf(items)
		*s.slots[1] = nil
		return
	}
	r, out := s.r, s.cell0
	s.steps.tickN(r, uint(len(items)))
	for i := len(items) - 1; i >= 0; i-- {
		inst := &items[i]
		if x, ok := planner.AddInt(inst.key, one.offJ); ok && inst.keyInt() {
			if !one.holds(x, k) {
				continue
			}
		} else if !s.bindPair(inst, ev, key) {
			continue
		}
		out.Event = inst.ev
		r.emitRow()
	}
}

// bindPair binds both states, to inst's event and ev, whose key is an
// int, and evaluates state 0's checks.
func (s *aisSSC) bindPair(inst *instance, ev *event.Event, key int64) bool {
	*s.slots[1], s.keys[1], s.keyInts[1] = ev, key, true
	ok := s.bindHolds(0, inst, s.slots[0])
	*s.slots[0], *s.slots[1] = nil, nil
	return ok
}

// enter3 is enter for plain3 and an event with the partition attribute:
// its three states' steps written out, and prune's for the two stacks.
func (s *aisSSC) enter3(p *partition, ev *event.Event, m uint64) {
	s0, s1 := &p.stacks[0], &p.stacks[1]
	s0.pruneBefore(s.minTS)
	s1.pruneBefore(s.minTS)
	key, isInt := s.keyOf(0, ev) // every state's, with plain3
	if m&0b100 != 0 {
		if rip := s1.rip(ev.TS, s.minTS); rip >= 0 {
			s.construct3(p, ev, rip, key, isInt)
		}
	}
	if m&0b010 != 0 {
		if rip := s0.rip(ev.TS, s.minTS); rip >= 0 {
			in := instanceOf(ev, rip, key, isInt)
			s.maskOnPush(s0, &in)
			s1.push(in)
			s.r.stats.Instances++
		}
	}
	if m&0b001 != 0 {
		s0.push(instanceOf(ev, -1, key, isInt))
		s.r.stats.Instances++
	}
}

// instanceOf is the instance of ev with rip and key, an int if isInt.
func instanceOf(ev *event.Event, rip int, key int64, isInt bool) instance {
	in := instance{ev: ev, rip: rip, key: key}
	if isInt {
		in.bits |= keyIntBit
	}
	return in
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
			if rip = p.stacks[j-1].rip(ev.TS, s.minTS); rip < 0 || !s.multiAgrees(p, j-1, ev) {
				continue
			}
		}
		if j == s.n-1 {
			s.construct(p, ev, rip, wild)
			continue
		}
		key, isInt := s.keyOf(j, ev)
		in := instanceOf(ev, rip, key, isInt)
		if wild {
			in.bits |= wildBit
			if j == 1 && s.plain3 { // searchMasked3 reads every mask
				s.maskOnPush(&p.stacks[0], &in)
			}
		}
		p.stacks[j].push(in)
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
	s.reseed(from, p)
	return p
}

// reseed starts p, a new value's partition, empty (new, or emptied by a
// sweep: release), with from's instances and counts, in p's arrays.
func (s *aisSSC) reseed(from, p *partition) {
	for j, st := range from.stacks {
		p.stacks[j] = aisStack{buf: append(p.stacks[j].buf, st.items()...), base: st.base, first: st.first}
	}
	for j, counts := range from.multi {
		for k, n := range counts {
			p.multi[j][k] = n
		}
	}
}

// release empties p's stacks and counts, keeping their arrays, so that p
// holds no event while it waits for reuse (reseed).
func (p *partition) release() {
	for i := range p.stacks {
		st := &p.stacks[i]
		clear(st.buf)
		*st = aisStack{buf: st.buf[:0]}
	}
	for _, counts := range p.multi {
		clear(counts)
	}
}

func (p *partition) empty() bool {
	for i := range p.stacks {
		if len(p.stacks[i].items()) > 0 {
			return false
		}
	}
	return true
}

// rip returns the most recent instance of st with a timestamp before ts
// and inside the window, from minTS on, or -1.
func (st *aisStack) rip(ts, minTS int64) int {
	items := st.items()
	i := len(items) - 1
	for i >= 0 && items[i].ev.TS >= ts {
		i--
	}
	if i < 0 || items[i].ev.TS < minTS {
		return -1
	}
	return st.base + i
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
		from := st.lo
		if st.pruneBefore(s.minTS); st.lo > from && p.multi != nil {
			s.uncount(p, j, st.buf[from:st.lo])
		}
	}
}

// pruneBefore drops the instances before minTS.
func (st *aisStack) pruneBefore(minTS int64) {
	if st.first >= minTS || st.lo == len(st.buf) {
		return
	}
	// On buf and lo, not items: a slice costs its checks.
	lo := st.lo + 1
	for lo < len(st.buf) && st.buf[lo].ev.TS < minTS {
		lo++
	}
	if lo < len(st.buf) {
		st.first = st.buf[lo].ev.TS
	}
	st.drop(lo - st.lo)
}

// uncount takes gone, instances of state j that prune drops, out of the
// Multi-PAIS counts.
func (s *aisSSC) uncount(p *partition, j int, gone []instance) {
	for i := range gone {
		key := string(s.multiKeyOf(gone[i].ev))
		if p.multi[j][key]--; p.multi[j][key] == 0 {
			delete(p.multi[j], key)
		}
	}
}

// sweep prunes every partition and forgets the empty ones.
func (s *aisSSC) sweep() {
	s.prune(s.parts.wild)
	s.parts.sweep(func(p *partition) bool {
		s.prune(p)
		if !p.empty() {
			return true
		}
		p.release()
		return false
	})
}

// construct enumerates the sequences ending with ev in the accepting
// state, walking RIP ranges from rip in the last stack.
func (s *aisSSC) construct(p *partition, ev *event.Event, rip int, wild bool) {
	last := s.n - 1
	s.bindState(last, ev)
	s.accept, s.cur = ev, p
	s.keyed = 0
	if !wild {
		s.keyed = 1
	}
	key, isInt := s.keyOf(last, ev)
	s.keys[last], s.keyInts[last] = key, isInt // what the later checks compare with
	switch {
	case s.dynamic && !s.dynamicAgrees(ev) || s.checksLast && !s.checksHoldAt(last, key, isInt):
	case s.n == 1:
		s.emit()
	case s.masked3: // descend's and search's choice, without their calls
		s.searchMasked(p, p.stacks[1].upTo(rip))
	default:
		s.descend(p, s.n-2, rip)
	}
	s.bind.Events[s.comps[last]] = nil
}

// construct3 is construct for plain3 and a keyed event: the cases
// masked3 rules out left out.
func (s *aisSSC) construct3(p *partition, ev *event.Event, rip int, key int64, isInt bool) {
	slot := s.slots[2]
	*slot, s.cells[2].Event = ev, ev
	s.cur, s.keyed = p, 1
	s.keys[2], s.keyInts[2] = key, isInt // what the later checks compare with
	switch one := s.one[1]; {
	case s.checksLast && !s.checksHoldAt(2, key, isInt):
	case one != nil && one.k == 2 && isInt && !s.r.counts:
		s.searchMasked3(&p.stacks[0], p.stacks[1].upTo(rip), one, key)
	default:
		s.searchMasked(p, p.stacks[1].upTo(rip))
	}
	*slot = nil
}

// searchMasked3 is searchMasked for construct3 when state 1's check is
// one int comparison with the accepting event, whose key is an int, and
// the consumer takes each match: every instance is masked (maskOnPush)
// and fits, as the accepting event is keyed, so its loop tests only the
// check and whether the window holds older state-0 instances than the
// mask's (visitOld).
func (s *aisSSC) searchMasked3(st *aisStack, items []instance, one *check, key int64) {
	r, cell, out := s.r, s.cells[1], s.cell0
	s.steps.tickN(r, uint(len(items)))
	for i := len(items) - 1; i >= 0; i-- {
		b := &items[i]
		if b.keyInt() {
			if !one.holds(b.key, key) {
				continue
			}
		} else if !s.bindHolds(1, b, s.slots[1]) {
			continue
		}
		live := b.rip - st.base + 1 // prune leaves the instances after a chain's, so live >= 0
		if live > maskLen {
			s.visitOld(st, b, live)
			continue
		}
		n := min(uint(live), maskLen) // a shift the compiler knows is short
		m := b.bits & (1<<n - 1)
		s.steps.tickN(r, n)
		if m != 0 {
			cell.Event = b.ev
			// b.rip's instance in st.buf. A bit i of m is set only
			// for i < live, so each instance read, top's i-th below
			// it, is one of the live ones, in buf: they are read
			// without a bounds check.
			top := unsafe.Pointer(&st.buf[st.lo+live-1])
			// As in searchMasked, the first match before the loop.
			out.Event = instanceBelow(top, bits.TrailingZeros64(m)).ev
			r.emitRow()
			for m &= m - 1; m != 0; m &= m - 1 {
				out.Event = instanceBelow(top, bits.TrailingZeros64(m)).ev
				r.emitRow()
			}
		}
	}
	*s.slots[1] = nil
}

// instanceBelow is the instance i places below top in its array, which
// must hold it.
func instanceBelow(top unsafe.Pointer, i int) *instance {
	return (*instance)(unsafe.Add(top, -i*int(unsafe.Sizeof(instance{}))))
}

// visitOld is searchMasked3's visit of b when the window holds older
// state-0 instances than its mask's: leaf takes those.
func (s *aisSSC) visitOld(st *aisStack, b *instance, live int) {
	r, out := s.r, s.cell0
	s.cells[1].Event = b.ev
	*s.slots[1], s.keys[1], s.keyInts[1] = b.ev, b.key, b.keyInt()
	s.steps.tickN(r, maskLen)
	top := st.lo + live - 1
	for m := b.bits & (1<<maskLen - 1); m != 0; m &= m - 1 {
		out.Event = st.buf[top-bits.TrailingZeros64(m)].ev
		r.emitRow()
	}
	s.leaf(st.upTo(b.rip - maskLen))
}

// cutFrom is the shortest pattern whose search is cut by bound: with three
// states the cut would only skip instances of state 1 with an empty range,
// at the cost of the binary searches on every trigger.
const cutFrom = 4

// bound sets lo for p's stacks: lo[0] is the oldest instance's time of
// state 0 (prune has dropped those before the window), lo[j] the earliest
// time after lo[j-1] in state j, the earliest a chain through states 0..j
// can reach. When some state has none, no sequence can complete: false.
// Checks, partitions (wild instances are in p's stacks too) and dynamic
// filtering only take chains away, so no chain is earlier.
func (s *aisSSC) bound(p *partition) bool {
	for j := range s.lo {
		items := p.stacks[j].items()
		i := 0
		if j > 0 {
			i = after(items, s.lo[j-1])
		}
		if i == len(items) {
			return false
		}
		s.lo[j] = items[i].ev.TS
	}
	return true
}

// after is the index of the first of items later than ts (len(items) when
// none is): a binary search, as a stack is in time order.
func after(items []instance, ts int64) int {
	lo, hi := 0, len(items)
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); items[m].ev.TS > ts {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// bindState binds state j to ev, in the binding (when something reads
// it) and in the row.
func (s *aisSSC) bindState(j int, ev *event.Event) {
	*s.slots[j] = ev
	s.cells[j].Event = ev
}

// descend enumerates states j down to 0 from rip: by leaf when it fits.
func (s *aisSSC) descend(p *partition, j, rip int) {
	if j == 0 && s.leafFits() {
		s.leaf(p.stacks[0].upTo(rip))
		return
	}
	s.search(p, j, rip)
}

// leafFits says whether leaf can enumerate state 0 for the states bound:
// the scan hands its rows over itself, without dynamic filtering, and
// every sequence is a match, not one of wildcard events only that the
// wildcard partition finds.
func (s *aisSSC) leafFits() bool {
	return s.leafOK && (s.parts == nil || s.keyed > 0 || s.cur == s.parts.wild)
}

// search binds state j to each instance from rip down; the stack holds
// none before the window, which prune has cut.
func (s *aisSSC) search(p *partition, j, rip int) {
	items := p.stacks[j].upTo(rip)
	if s.cut {
		items = s.cutBelow(p, j, items)
	}
	if j == 1 && s.mask0 && s.leafOK {
		s.searchMasked(p, items)
		return
	}
	// The later state a single int check compares with stays bound
	// through the loop.
	one, key, keyInt := s.one[j], int64(0), false
	if one != nil {
		key, keyInt = s.keys[one.k], s.keyInts[one.k]
	}
	slot, cell := s.slots[j], s.cells[j]
	for i := len(items) - 1; i >= 0; i-- {
		s.steps.tick(s.r)
		inst := &items[i]
		if s.dynamic && !s.dynamicAgrees(inst.ev) {
			continue
		}
		// checksHold's case inline (keyInt: one is set) needs no binding,
		// so an instance it rejects is not bound.
		if keyInt && inst.keyInt() {
			if !one.holds(inst.key, key) {
				continue
			}
			s.keys[j], s.keyInts[j] = inst.key, true
		} else if s.checks != nil && !s.bindHolds(j, inst, slot) {
			continue
		}
		*slot, cell.Event = inst.ev, inst.ev
		if !inst.wild() {
			s.keyed++
		}
		switch {
		case j == 0:
			s.emit()
		case j == 1 && s.leafFits(): // descend's choice, without its call
			s.leaf(p.stacks[0].upTo(inst.rip))
		default:
			s.search(p, j-1, inst.rip)
		}
		if !inst.wild() {
			s.keyed--
		}
	}
	*slot = nil
}

// cutBelow is the part of items, state j's, that lo lets search visit: an
// instance no later than lo[j-1] has no chain before it, nor has any
// older one (state 0 needs none). Construct's call (the last stack) sets
// lo, and when bound finds no chain the part is empty. It stays out of
// line so that search's loop keeps its registers when no bound cuts.
//
//go:noinline
func (s *aisSSC) cutBelow(p *partition, j int, items []instance) []instance {
	switch {
	case j == 0:
		return items
	case j == s.n-2 && !s.bound(p):
		return items[:0]
	}
	return items[after(items, s.lo[j-1]):]
}

// leaf is search of state 0 when each instance that passes the checks
// completes a match for the row (leafFits): the loop that most matches
// take, cut down to the checks, one store into the row and the consumer's
// call (without checks, a consumer that only counts is handed the
// count). It counts only Stats.Matches; report counts the operators'
// sequences from it. It ticks once for each chunk of instances, and that
// is its only look at ctx: deliver's would cost a call.
func (s *aisSSC) leaf(items []instance) {
	for len(items) > leafChunk { // a stack the window does not bound
		s.leaf(items[len(items)-leafChunk:])
		items = items[:len(items)-leafChunk]
	}
	r, out := s.r, s.cell0
	s.steps.tickN(r, uint(len(items)))
	switch {
	case len(s.checks0) > 0:
		s.leafChecked(items)
		return
	case r.counts:
		r.stats.Matches += int64(len(items))
		return
	}
	for i := len(items) - 1; i >= 0; i-- {
		out.Event = items[i].ev
		r.stats.Matches++
		if !r.emit(r.out) {
			stop()
		}
	}
}

// leafChecked is leaf's loop when state 0 has checks; the commonest, one
// int comparison with a later state (leaf0, offsets added), is tested
// inline.
func (s *aisSSC) leafChecked(chunk []instance) {
	r, out, slot := s.r, s.cell0, s.slots[0]
	one, key, keyInt := s.leaf0, int64(0), false
	if one != nil {
		var ok bool
		key, ok = planner.AddInt(s.keys[one.k], one.offK)
		keyInt = ok && s.keyInts[one.k]
	} else {
		one = &noCheck // keyInt is false: the loop only adds its offset
	}
	for i := len(chunk) - 1; i >= 0; i-- {
		inst := &chunk[i]
		if x, ok := planner.AddInt(inst.key, one.offJ); ok && keyInt && inst.keyInt() {
			if !one.holds(x, key) {
				continue
			}
		} else if !s.bindHolds(0, inst, slot) {
			continue
		}
		out.Event = inst.ev
		r.stats.Matches++
		if !r.emit(r.out) {
			stop()
		}
	}
	*slot = nil
}

// key0 is one0 and the key of the state it compares with: not an int
// without one0.
func (s *aisSSC) key0() (*check, int64, bool) {
	if one := s.one0; one != nil {
		return one, s.keys[one.k], s.keyInts[one.k]
	}
	return nil, 0, false
}

// bindHolds binds state j to inst in slot and evaluates its checks: the
// search loops test the commonest, one int comparison with a later
// state, inline, and call it for the rest.
func (s *aisSSC) bindHolds(j int, inst *instance, slot **event.Event) bool {
	*slot = inst.ev
	return s.checksHoldAt(j, inst.key, inst.keyInt())
}

// searchMasked is search of state 1's items when leaf enumerates state
// 0 and mask0 holds: each instance b that passes its checks keeps, from
// its first visit, a mask of which of the maskLen latest state-0 instances up
// to its rip pass theirs (setMask), and a visit emits the ones prune has
// left without testing them again; older ones, in a stack the window
// does not bound to maskLen, take leaf; a consumer that only counts
// (runner.counts) is handed the masks' counts. Its loop makes no call
// but the consumer's and the rare ones, so that few values are spilled
// around it.
func (s *aisSSC) searchMasked(p *partition, items []instance) {
	one, key, keyInt := s.one[1], int64(0), false
	if one != nil {
		key, keyInt = s.keys[one.k], s.keyInts[one.k]
	}
	// leafFits for an instance: a wild one's sequences need a keyed
	// event in the states bound when it is not the wild partition's.
	fits := s.parts == nil || s.keyed > 0 || s.cur == s.parts.wild
	st := &p.stacks[0]
	slot, cell := s.slots[1], s.cells[1]
	r, out := s.r, s.cell0
	s.steps.tickN(r, uint(len(items)))
	for i := len(items) - 1; i >= 0; i-- {
		b := &items[i]
		if keyInt && b.keyInt() {
			if !one.holds(b.key, key) {
				continue
			}
		} else if !s.bindHolds(1, b, slot) {
			continue
		}
		cell.Event = b.ev
		live := b.rip - st.base + 1 // prune leaves the instances after a chain's, so live >= 0
		if !b.masked() || live > maskLen || !fits && b.wild() {
			// What reads the binding and state 1's key.
			*slot, s.keys[1], s.keyInts[1] = b.ev, b.key, b.keyInt()
			if !fits && b.wild() {
				s.search(p, 0, b.rip)
				continue
			}
			if !b.masked() {
				s.setMask(st.upTo(b.rip), b)
			}
		}
		n := min(uint(live), maskLen) // a shift the compiler knows is short
		m := b.bits & (1<<n - 1)
		s.steps.tickN(r, n)
		top := st.lo + live - 1 // b.rip's index in st.buf
		if r.counts {
			r.stats.Matches += int64(bits.OnesCount64(m))
			m = 0
		}
		if m != 0 {
			// The first match before the loop: the loop is entered
			// from a call, with only its own values in registers, and
			// after each of its calls restores only those, not every
			// value this loop keeps (about 6 instructions a match).
			out.Event = st.buf[top-bits.TrailingZeros64(m)].ev
			r.emitRow()
			for m &= m - 1; m != 0; m &= m - 1 {
				out.Event = st.buf[top-bits.TrailingZeros64(m)].ev
				r.emitRow()
			}
		}
		if live > maskLen {
			s.leaf(st.upTo(b.rip - maskLen))
		}
	}
	*slot = nil
}

// maskOnPush sets the mask of in, state 1's instance of an event, from
// st, state 0's stack of its partition, before it is pushed: with plain3
// every visit reads it (searchMasked3; searchMasked sets the masks of
// the other plans on a first visit), and its computation here, where the
// state-0 instances up to its rip are those setMask would see or older,
// spares the visits the call. The commonest check, one int comparison
// with state 1, needs no binding; setMask's others read the event's key
// and binding.
func (s *aisSSC) maskOnPush(st *aisStack, in *instance) {
	items := st.upTo(in.rip)
	if one := s.one0; one != nil && one.k == 1 && in.keyInt() {
		if m, ok := intMask(items[max(len(items)-maskLen, 0):], one.rel, in.key); ok {
			in.bits |= m | maskedBit
			return
		}
	}
	*s.slots[1], s.keys[1], s.keyInts[1] = in.ev, in.key, in.keyInt()
	s.setMask(items, in)
	*s.slots[1] = nil
}

// setMask sets b's mask from items, the state-0 instances up to its rip
// that the window holds. When the check is one int comparison and every
// instance has an int key, intMask sets it.
func (s *aisSSC) setMask(items []instance, b *instance) {
	one, key, keyInt := s.key0()
	top := items[max(len(items)-maskLen, 0):]
	if keyInt { // one is set
		if m, ok := intMask(top, one.rel, key); ok {
			b.bits |= m | maskedBit
			return
		}
	}
	slot, m := s.slots[0], uint64(0)
	for i := range top {
		inst := &top[i]
		var bit uint64
		if keyInt && inst.keyInt() {
			bit = one.bit(inst.key, key)
		} else if s.bindHolds(0, inst, slot) {
			bit = 1
		}
		m = m<<1 | bit
	}
	b.bits |= m | maskedBit
	*slot = nil
}

// intMask is the mask of top, instances oldest first (so that the latest
// ends in bit 0), whose keys k' hold k' rel k: a loop without a branch,
// one for each order (a switch on rel, the same on every call, costs
// less than intSetOf's). false when some key is not an int.
func intMask(top []instance, rel order, k int64) (uint64, bool) {
	m, ints := uint64(0), uint64(keyIntBit)
	switch rel {
	case 0b001: // <
		for i := range top {
			ints &= top[i].bits
			m = m<<1 | uint64(b2u(top[i].key < k))
		}
	case 0b011: // <=
		for i := range top {
			ints &= top[i].bits
			m = m<<1 | uint64(b2u(top[i].key <= k))
		}
	case 0b100: // >
		for i := range top {
			ints &= top[i].bits
			m = m<<1 | uint64(b2u(top[i].key > k))
		}
	case 0b110: // >=
		for i := range top {
			ints &= top[i].bits
			m = m<<1 | uint64(b2u(top[i].key >= k))
		}
	default: // a member of the ints that pass (intSet)
		in := intSetOf(rel, k)
		for i := range top {
			ints &= top[i].bits
			m = m<<1 | in.has(top[i].key)
		}
	}
	return m, ints != 0
}

// leafChunk bounds the matches leaf emits between two ticks.
const leafChunk = 1024

// checksHoldAt evaluates the predicates placed at state j, all of whose
// variables are bound once j is; key is j's key value, if isInt.
func (s *aisSSC) checksHoldAt(j int, key int64, isInt bool) bool {
	s.keys[j], s.keyInts[j] = key, isInt
	cs := s.checks[j]
	for i := range cs {
		c := &cs[i]
		if c.isInt && isInt && s.keyInts[c.k] {
			x, okx := planner.AddInt(key, c.offJ)
			if y, oky := planner.AddInt(s.keys[c.k], c.offK); okx && oky {
				if !c.holds(x, y) {
					return false
				}
				continue
			}
		}
		if !c.pred.Eval(s.bind) {
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
	switch {
	case s.out != nil:
		s.r.deliver() // report counts the operators' sequences
	case s.next != nil:
		s.r.stats.Operators[0].Out++
		s.next.push(s.bind)
	default:
		s.r.stats.Operators[0].Out++
	}
}

func (s *aisSSC) report(st *Stats) {
	instances(st)
	st.Operators[0].Counters = append(st.Operators[0].Counters, Counter{"steps", int64(s.steps)})
	if s.out != nil {
		// Every match went through leaf or pushRow, once each.
		st.Operators[0].Out = st.Matches
		st.Operators[s.out.id].In = st.Matches
		st.Operators[s.out.id].Out = st.Matches
	}
}
