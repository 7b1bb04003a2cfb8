package rowpattern

// SetMaxBuffered sets maxBuffered for a test.
func SetMaxBuffered(n int64) (restore func()) {
	old := maxBuffered
	maxBuffered = n
	return func() { maxBuffered = old }
}
