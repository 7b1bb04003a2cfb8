package rulebook

// SetBatch sets the items a pass reads between flushes and returns a
// func that restores it.
func SetBatch(n int) (restore func()) {
	old := batch
	batch = n
	return func() { batch = old }
}
