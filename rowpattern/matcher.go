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
// instruction.

// label is a row's variable; excluded marks a row matched inside {- -}.
type label int32

const excluded label = 1 << 30

func (l label) v() int { return int(l &^ excluded) }

type thread struct {
	pc     int
	labels []label
}

// matcher holds a program's buffers between runs.
type matcher struct {
	prog    program
	define  func(c *evalCtx) bool // DEFINE of c's current row's variable
	within  int64                 // -1: none
	history bool                  // DEFINE reads the match's history
	cur     []thread
	next    []thread
	visited []int // closure stamps by pc
	stamp   int
	byPC    [][]int // next's threads at each pc, for merging
	touched []int
	ctx     evalCtx
	scratch []label
}

func newMatcher(prog program, define func(*evalCtx) bool, within int64, history bool) *matcher {
	return &matcher{prog: prog, define: define, within: within, history: history,
		visited: make([]int, len(prog)), byPC: make([][]int, len(prog))}
}

// match finds the preferred match starting at row start of rows: ok is
// false when there is none, else labels has one label per matched row
// (none for an empty match).
func (m *matcher) match(rows *partition, start int) (labels []label, ok bool) {
	m.cur = m.cur[:0]
	m.closure(&m.cur, rows, thread{}, 0, start)
	m.flush()
	for pos := start; len(m.cur) > 0; pos++ {
		m.next = m.next[:0]
		for _, th := range m.cur {
			in := m.prog[th.pc]
			if in.op == opDone {
				labels, ok = th.labels, true
				break // the rest are less preferred
			}
			if pos >= rows.len() || (m.within >= 0 && rows.ts(pos)-rows.ts(start) > m.within) {
				continue
			}
			l := label(in.v)
			if in.excl {
				l |= excluded
			}
			// The candidate labels go into a scratch slice: a thread's own
			// are copied only when the row matches.
			m.scratch = append(append(m.scratch[:0], th.labels...), l)
			m.ctx = evalCtx{rows: rows, start: start, labels: m.scratch, cur: len(m.scratch) - 1}
			if m.define(&m.ctx) {
				m.closure(&m.next, rows, thread{labels: slices.Clone(m.scratch)}, th.pc+1, pos+1)
			}
		}
		m.flush()
		m.cur, m.next = m.next, m.cur
	}
	return labels, ok
}

// closure adds to list the threads th reaches from pc at row pos without
// consuming a row, in preference order. A pc seen twice in one closure is
// a loop's empty iteration, which is cut.
func (m *matcher) closure(list *[]thread, rows *partition, th thread, pc, pos int) {
	m.stamp++
	m.walk(list, rows, th, pc, pos)
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
			if pos != 0 {
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
		for _, i := range m.byPC[pc] {
			if !m.history || slices.Equal((*list)[i].labels, th.labels) {
				return // an equal, preferred thread is there
			}
		}
		if len(m.byPC[pc]) == 0 {
			m.touched = append(m.touched, pc)
		}
		m.byPC[pc] = append(m.byPC[pc], len(*list))
		th.pc = pc
		*list = append(*list, th)
		return
	}
}

// flush forgets the merge index of the list just built.
func (m *matcher) flush() {
	for _, pc := range m.touched {
		m.byPC[pc] = m.byPC[pc][:0]
	}
	m.touched = m.touched[:0]
}
