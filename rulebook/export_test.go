package rulebook

// SetBatch sets the items a pass reads between flushes and returns a
// func that restores it.
func SetBatch(n int) (restore func()) {
	old := batch
	batch = n
	return func() { batch = old }
}

// SetChunk sets the items a split's reader hands each pass at a time and
// returns a func that restores it.
func SetChunk(n int) (restore func()) {
	old := chunk
	chunk = n
	return func() { chunk = old }
}

// Shares are the rules of each of the split's passes.
func (s *Split) Shares() [][]int {
	var out [][]int
	for _, sh := range s.shares {
		out = append(out, sh.rules)
	}
	return out
}

// SetShare sets whether Start groups the rules that begin alike, and how
// many rules a group needs for each type they are gated on, and returns
// a func that restores both.
func SetShare(on bool, rulesPerGate int) (restore func()) {
	old, oldPer := shareStarts, perGate
	shareStarts, perGate = on, rulesPerGate
	return func() { shareStarts, perGate = old, oldPer }
}

// Grouped is how many of the pass's rules read their starts from a
// group's, and how many groups there are.
func (p *Pass) Grouped() (rules, groups int) {
	for i := range p.runs {
		if p.grouped.has(int32(i)) {
			rules++
		}
	}
	return rules, len(p.groups)
}
