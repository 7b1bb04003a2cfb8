package rowpattern

import "slices"

// The matcher runs a program from one start row over a partition's
// consecutive rows, as a Pike VM does: all threads advance together, one
// row at a time, kept in the standard's preference order (a split's first
// branch before its second). A thread that reaches opDone is a match; the
// threads after it in the order can no longer win, so they are cut, and
// the ones before it run on, since a match of theirs would be preferred.
// When no thread is left, the last match found is the preferred one.
//
// A thread's state is its instruction and its rows' labels: DEFINE may
// read any earlier row of the match, so threads at one instruction are
// merged (the later one dropped) only when their labels are equal too.
// When no DEFINE reads more than the row it tests (and rows around it, by
// PREV and NEXT), every way on from an instruction is open to all its
// threads alike and the first one's is preferred: then the later ones are
// dropped whatever their labels, and a row has at most one thread per
// instruction. Such a DEFINE's value depends on the row alone, so it is
// evaluated once per row and variable in a partition, whatever the start
// rows that reach it.
//
// A thread's labels are a chain of nodes in an arena, each a row's label
// and its predecessor's node: advancing a thread adds one node instead of
// copying its labels, and threads share their common prefix.

// label is a row's variable; excluded marks a row matched inside {- -}.
type label int32

const excluded label = 1 << 30

func (l label) v() int { return int(l &^ excluded) }

// node is a row's label in a thread's chain; parent -1 ends it.
type node struct {
	l      label
	parent int32
}

type thread struct {
	pc   int
	node int32 // the last row's node, -1 for none
}

// matcher holds a program's buffers between runs.
type matcher struct {
	prog   program
	define func(c *evalCtx) bool // DEFINE of c's current row's variable
	tests  []rowTest             // the DEFINEs compiled to read the row alone
	// fromStart marks the DEFINEs that read the row alone and the
	// match's start row (Query.fromStart): evaluated per start row.
	fromStart []bool
	names     []string // the variables', for CLASSIFIER()
	within    int64    // -1: none
	history   bool     // DEFINE reads the match's history
	cur       []thread
	next      []thread
	nodes     []node
	visited   []int // closure stamps by pc
	stamp     int
	byPC      [][]int // next's threads at each pc, for merging
	// eps is, by pc, the instructions its closure reaches (nil: not yet
	// known; empty: an anchor is on the way, so it depends on the row).
	eps     [][]int
	touched []int
	ctx     evalCtx
	labels  []label // a thread's labels, materialized
	// labeled is the node whose chain is labels[:labeledLen] (-2: none;
	// node numbers restart with each start row).
	labeled    int32
	labeledLen int
	result     []label
	profile    *Profile // counts, for EXPLAIN ANALYZE; nil: none
	// first and second are the variables a match's first row and (when
	// none is shorter than two rows) its second must satisfy one of:
	// a start row that fails them is no match, with no thread run.
	first, second []int
	memo          bool // DEFINEs without history evaluated once per row (partition.memo)
}

func newMatcher(prog program, define func(*evalCtx) bool, tests []rowTest, fromStart []bool, names []string, within int64, history bool) *matcher {
	m := &matcher{labeled: -2, prog: prog, define: define, tests: tests, fromStart: fromStart, names: names, within: within, history: history, ctx: evalCtx{names: names},
		visited: make([]int, len(prog)), byPC: make([][]int, len(prog)), eps: make([][]int, len(prog))}
	for v, t := range tests {
		m.memo = m.memo || !history && t == nil && !fromStart[v]
	}
	pcs, empty := prog.reach([]int{0})
	if !empty {
		m.first = prog.vars(pcs)
		next := make([]int, len(pcs))
		for i, pc := range pcs {
			next[i] = pc + 1
		}
		if pcs, short := prog.reach(next); !short {
			m.second = prog.vars(pcs)
		}
	}
	return m
}

// reach is the var instructions the program reaches from pcs without
// consuming a row, and whether it reaches opDone: a superset, as anchors
// are taken to hold.
func (p program) reach(pcs []int) (vars []int, done bool) {
	seen := make([]bool, len(p))
	for len(pcs) > 0 {
		pc := pcs[len(pcs)-1]
		pcs = pcs[:len(pcs)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		switch in := p[pc]; in.op {
		case opVar:
			vars = append(vars, pc)
		case opDone:
			done = true
		case opJump:
			pcs = append(pcs, in.x)
		case opSplit:
			pcs = append(pcs, in.x, in.y)
		default: // ^ and $
			pcs = append(pcs, pc+1)
		}
	}
	return vars, done
}

// vars is the variables of var instructions pcs, each once.
func (p program) vars(pcs []int) []int {
	var vs []int
	for _, pc := range pcs {
		if !slices.Contains(vs, p[pc].v) {
			vs = append(vs, p[pc].v)
		}
	}
	return vs
}

// mayStart reports whether a match can start at row start, by the
// variables its first two rows must satisfy one of (a row the partition
// lacks yet may satisfy any).
func (m *matcher) mayStart(rows *partition, start int) bool {
	return m.first == nil || m.anyHolds(rows, start, start, m.first) &&
		(m.second == nil || start+1 >= rows.len() || m.anyHolds(rows, start, start+1, m.second))
}

// anyHolds reports whether row pos of a match from row start may satisfy
// one of vars: a DEFINE that reads the match's other rows may hold.
func (m *matcher) anyHolds(rows *partition, start, pos int, vars []int) bool {
	for _, v := range vars {
		if m.history && m.tests[v] == nil || m.test(rows, start, pos, -1, label(v)) {
			return true
		}
	}
	return false
}

// outcome is what match decided.
type outcome int8

const (
	noMatch outcome = iota
	matched
	pending // an open partition's next rows decide it
	tooMany // more than maxThreads threads at one row
)

// maxThreads bounds the threads at one row. Without history a row has at
// most one thread per instruction; with it, threads whose rows differ do
// not merge, and an ambiguous pattern such as (B | C)+ doubles them at
// each row (and merging costs the square of the threads): the query fails
// with an error rather than take exponential time and memory.
const maxThreads = 1 << 14

// match finds the preferred match starting at row start of rows: none,
// or a match whose labels have one label per matched row (none for an
// empty match), valid until the next call. A live partition is open: a
// thread that needs a row it does not have yet, within the window at
// stream time now, leaves the outcome pending.
func (m *matcher) match(rows *partition, start int, open bool, now int64) (labels []label, out outcome) {
	if m.memo && len(rows.memo) < rows.len()*len(m.names) {
		rows.memo = append(rows.memo, make([]uint8, rows.len()*len(m.names)-len(rows.memo))...)
	}
	waiting := false
	found := int32(-2)
	pos := start
	if s := &rows.paused; s.valid && s.start == rows.base+start {
		// Go on where the rows ran out: a run from start again would
		// reach the same threads there.
		s.valid = false
		pos, found = s.pos-rows.base, s.found
		m.cur, s.cur = s.cur, m.cur[:0]
		m.nodes, s.nodes = s.nodes, m.nodes[:0]
		m.labeled = -2
	} else {
		if m.profile != nil {
			m.profile.Starts++
		}
		if !m.mayStart(rows, start) {
			return nil, noMatch
		}
		m.nodes = m.nodes[:0]
		m.labeled = -2
		m.cur = m.cur[:0]
		m.closure(&m.cur, rows, thread{node: -1}, 0, start)
		m.flush()
	}
	for ; len(m.cur) > 0; pos++ {
		m.next = m.next[:0]
		for _, th := range m.cur {
			in := m.prog[th.pc]
			if in.op == opDone {
				found = th.node
				break // the rest are less preferred
			}
			if pos >= rows.len() {
				waiting = waiting || open && (m.within < 0 || now-rows.ts(start) <= m.within)
				continue
			}
			if m.within >= 0 && rows.ts(pos)-rows.ts(start) > m.within {
				continue
			}
			l := label(in.v)
			if in.excl {
				l |= excluded
			}
			if m.profile != nil {
				m.profile.Tried[th.pc]++
			}
			if !m.test(rows, start, pos, th.node, l) {
				continue
			}
			if m.profile != nil {
				m.profile.Took[th.pc]++
			}
			m.nodes = append(m.nodes, node{l: l, parent: th.node})
			m.closure(&m.next, rows, thread{node: int32(len(m.nodes) - 1)}, th.pc+1, pos+1)
		}
		m.flush()
		if len(m.next) > maxThreads {
			return nil, tooMany
		}
		m.cur, m.next = m.next, m.cur
	}
	switch {
	case waiting:
		// The last step's threads (now m.next) waited for row pos-1, the
		// first the partition lacks: kept for the next call, with
		// positions counted from the partition's first row ever (a live
		// partition drops rows).
		s := &rows.paused
		s.valid, s.start, s.pos, s.found = true, rows.base+start, rows.base+pos-1, found
		s.cur, m.next = m.next, s.cur[:0]
		s.nodes, m.nodes = m.nodes, s.nodes[:0]
		m.labeled = -2
		return nil, pending
	case found == -2:
		return nil, noMatch
	}
	m.result = m.chain(found, m.result[:0])
	return m.result, matched
}

// test is DEFINE of l at row pos, after the rows of node's chain.
func (m *matcher) test(rows *partition, start, pos int, n int32, l label) bool {
	if t := m.tests[l.v()]; t != nil {
		// Cheaper than a lookup in the memo.
		return m.counted(l, t(rows, start, pos))
	}
	if m.history {
		m.labels = append(m.labelsOf(n), l)
		m.setCtx(rows, start, len(m.labels)-1, start)
		return m.counted(l, m.define(&m.ctx))
	}
	// Without history the row alone decides, and the start row when the
	// DEFINE reads it (then per start row, not memoized).
	if m.fromStart[l.v()] {
		return m.alone(rows, pos, l, start)
	}
	at := pos*len(m.names) + l.v()
	if v := rows.memo[at]; v != 0 {
		return v == 2
	}
	ok := m.alone(rows, pos, l, pos)
	rows.memo[at] = 1
	if ok {
		rows.memo[at] = 2
	}
	return ok
}

// alone is DEFINE of l at row pos evaluated as a match of that row alone,
// from row origin.
func (m *matcher) alone(rows *partition, pos int, l label, origin int) bool {
	m.labels, m.labeled = append(m.labels[:0], l), -2
	m.setCtx(rows, pos, 0, origin)
	return m.counted(l, m.define(&m.ctx))
}

// setCtx points the context DEFINE is evaluated in at m.labels, from
// row start, its current row cur, the match's start row origin (field by
// field: a pointer is written only when it changes).
func (m *matcher) setCtx(rows *partition, start, cur, origin int) {
	if m.ctx.rows != rows {
		m.ctx.rows = rows
	}
	m.ctx.labels = m.labels
	m.ctx.start, m.ctx.cur, m.ctx.origin, m.ctx.matchNo = start, cur, origin, 0
}

// counted is a DEFINE's outcome ok of l, counted for EXPLAIN ANALYZE.
func (m *matcher) counted(l label, ok bool) bool {
	if m.profile != nil {
		m.profile.Evals[l.v()]++
		if ok {
			m.profile.Trues[l.v()]++
		}
	}
	return ok
}

// labelsOf is node n's labels in m.labels: the last ones extended by a
// row when n follows their node (a thread's next row: a test per row
// then costs no walk of its chain), else its chain anew.
func (m *matcher) labelsOf(n int32) []label {
	switch {
	case n == m.labeled:
		m.labels = m.labels[:m.labeledLen]
	case n >= 0 && m.labeled != -2 && m.nodes[n].parent == m.labeled:
		m.labels = append(m.labels[:m.labeledLen], m.nodes[n].l)
	default:
		m.labels = m.chain(n, m.labels[:0])
	}
	m.labeled, m.labeledLen = n, len(m.labels)
	return m.labels
}

// chain appends node n's labels, first row first, to buf.
func (m *matcher) chain(n int32, buf []label) []label {
	k := len(buf)
	for ; n >= 0; n = m.nodes[n].parent {
		buf = append(buf, m.nodes[n].l)
	}
	for i, j := k, len(buf)-1; i < j; i, j = i+1, j-1 {
		buf[i], buf[j] = buf[j], buf[i]
	}
	return buf
}

// sameChain reports whether two chains of one length have equal labels.
func (m *matcher) sameChain(a, b int32) bool {
	for a != b {
		if m.nodes[a].l != m.nodes[b].l {
			return false
		}
		a, b = m.nodes[a].parent, m.nodes[b].parent
	}
	return true
}

// closure adds to list the threads th reaches from pc at row pos without
// consuming a row, in preference order. A pc seen twice in one closure is
// a loop's empty iteration, which is cut. Without an anchor on the way,
// the instructions reached are pc's alone: they are walked once and kept.
func (m *matcher) closure(list *[]thread, rows *partition, th thread, pc, pos int) {
	if m.eps[pc] == nil {
		m.stamp++
		var targets []int
		if m.reachable(&targets, pc) {
			m.eps[pc] = targets
		} else {
			m.eps[pc] = []int{} // an anchor: walked at each row
		}
	}
	if targets := m.eps[pc]; len(targets) > 0 {
		for _, t := range targets {
			m.add(list, th, t)
		}
		return
	}
	m.stamp++
	m.walk(list, rows, th, pc, pos)
}

// reachable appends to targets the var and done instructions pc reaches
// without consuming a row, in walk's order; false when an anchor is on
// the way.
func (m *matcher) reachable(targets *[]int, pc int) bool {
	for {
		if m.visited[pc] == m.stamp {
			return true
		}
		m.visited[pc] = m.stamp
		switch in := m.prog[pc]; in.op {
		case opJump:
			pc = in.x
		case opSplit:
			if !m.reachable(targets, in.x) {
				return false
			}
			pc = in.y
		case opStart, opEnd:
			return false
		default:
			*targets = append(*targets, pc)
			return true
		}
	}
}

func (m *matcher) walk(list *[]thread, rows *partition, th thread, pc, pos int) {
	for {
		if m.visited[pc] == m.stamp {
			return
		}
		m.visited[pc] = m.stamp
		in := m.prog[pc]
		switch in.op {
		case opJump:
			pc = in.x
			continue
		case opSplit:
			m.walk(list, rows, th, in.x, pos)
			pc = in.y
			continue
		case opStart:
			if rows.base+pos != 0 {
				return
			}
			pc++
			continue
		case opEnd:
			if pos != rows.len() {
				return
			}
			pc++
			continue
		}
		m.add(list, th, pc)
		return
	}
}

// add adds th at var or done instruction pc to list, unless an equal,
// preferred thread is there.
func (m *matcher) add(list *[]thread, th thread, pc int) {
	for _, i := range m.byPC[pc] {
		if !m.history || m.sameChain((*list)[i].node, th.node) {
			return
		}
	}
	if len(m.byPC[pc]) == 0 {
		m.touched = append(m.touched, pc)
	}
	m.byPC[pc] = append(m.byPC[pc], len(*list))
	th.pc = pc
	*list = append(*list, th)
}

// flush forgets the merge index of the list just built.
func (m *matcher) flush() {
	for _, pc := range m.touched {
		m.byPC[pc] = m.byPC[pc][:0]
	}
	m.touched = m.touched[:0]
}

// soleFirst is the variable whose row is a match's first row and no
// other (-1: none): the only variable the program reaches before
// consuming a row, at its only instruction. That instruction is in no
// loop: a loop begins with a split before its body, which would reach
// the loop's exit (another instruction, or opDone) without a row too; and
// a quantifier's minimum count is copies of its body.
func (p program) soleFirst() int {
	pcs, empty := p.reach([]int{0})
	if empty || len(pcs) != 1 {
		return -1
	}
	first := pcs[0]
	for pc, in := range p {
		if in.op == opVar && in.v == p[first].v && pc != first {
			return -1
		}
	}
	return p[first].v
}
