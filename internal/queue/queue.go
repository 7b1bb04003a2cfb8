// Package queue holds what the engines' window queues share: a slice
// whose live items are s[lo:], its head dropped by moving lo up as the
// window passes, appended to at its end.
package queue

// Due says whether a queue of n items in a slice of capacity c, lo of
// them dropped, moves its live items down before its next append: only
// when the append would grow it and half of it or more is dropped, so
// that it does not grow for dropped items and each item moves at most
// about once per pass of the window.
func Due(n, c, lo int) bool { return lo > 0 && n == c && 2*lo >= n }

// Down moves s's live items s[lo:] to its front and clears the slots
// past them, so that what the dropped items point to can be collected;
// it returns the live items.
func Down[T any](s []T, lo int) []T {
	n := copy(s, s[lo:])
	clear(s[n:])
	return s[:n]
}
