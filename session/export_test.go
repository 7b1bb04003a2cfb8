package session

// SetBookBatch sets how many items a live rulebook's pass pushes before
// its rules read them (0: the default) and returns what it was, for a
// test to compare batches of every size.
func SetBookBatch(n int64) int64 { return bookBatch.Swap(n) }
