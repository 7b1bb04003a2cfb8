package exec

// SetSegments makes time segments of at least items items, reading again
// at most 1/ratio more (0: no bound, so a segment may be shorter than its
// overlap), and returns a func that restores the defaults. A test that
// calls it, or draws cases for a time budget, does not call t.Parallel:
// the tests that do run after every one that does not, so they never see
// another's segment sizes, and do not take a budget's CPU.
func SetSegments(items, ratio int) (restore func()) {
	oldItems, oldRatio := segmentItems, overlapRatio
	segmentItems, overlapRatio = items, ratio
	return func() { segmentItems, overlapRatio = oldItems, oldRatio }
}
