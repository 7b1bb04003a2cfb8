package exec

// SetSegments makes time segments of at least items items, reading again
// at most 1/ratio more (0: no bound, so a segment may be shorter than its
// overlap), and returns a func that restores the defaults.
func SetSegments(items, ratio int) (restore func()) {
	oldItems, oldRatio := segmentItems, overlapRatio
	segmentItems, overlapRatio = items, ratio
	return func() { segmentItems, overlapRatio = oldItems, oldRatio }
}
