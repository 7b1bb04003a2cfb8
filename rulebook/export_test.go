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
