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
