package natsio

import (
	"sync"
	"testing"
)

// busy has a place for each test that works at once (see TestMain).
var busy chan struct{}

// releases are, for each test that holds a place in busy, what gives it up.
var releases sync.Map // testing.TB: func()

// SetBusy makes n places in busy.
func SetBusy(n int) { busy = make(chan struct{}, n) }

// Parallel runs t in parallel with the other tests once it has a place in
// busy, which it holds until Quiet or its end.
func Parallel(t *testing.T) {
	t.Parallel()
	busy <- struct{}{}
	release := sync.OnceFunc(func() { <-busy })
	releases.Store(t, release)
	t.Cleanup(func() {
		releases.Delete(t)
		release()
	})
}

// Quiet gives t's place in busy up: t now only waits, its members idle,
// for a match stored late or twice, and another test may work meanwhile.
func Quiet(t testing.TB) {
	if release, ok := releases.Load(t); ok {
		release.(func())()
	}
}
