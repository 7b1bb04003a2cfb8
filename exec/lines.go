package exec

import "unsafe"

// A split run's workers build their runners one after the other, so the
// small arrays of one size that two workers' engines write at each match
// lie side by side in the heap, often on one cache line: each write then
// takes the line from the other core, and the other worker's next read of
// its own array waits for it (false sharing). On W2 with 100 symbols and
// RETURN, two workers took 2.4-2.8x the CPU of one and ran 0.85x as fast,
// a load of AIS's keys taking a fifth of the samples; with the arrays on
// lines of their own, 2.1x as fast (sase bench workers, 2026-12-07).
//
// ofRun returns n zero Ts for one of r's engines: on a split run's
// worker, with a cache line of their own on each side, which no other
// object can share; else packed, as a rulebook's thousands of rules read
// theirs from the fewest lines.
func ofRun[T any](r *runner, n int) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	if !r.split || size == 0 {
		return make([]T, n)
	}
	pad := (cacheLine + size - 1) / size
	return make([]T, n+2*pad)[pad : pad+n : pad+n]
}

// cacheLine is the size of a cache line on the machines sase runs on
// (amd64 and arm64 have 64 bytes; a longer line only shares more).
const cacheLine = 64
