package source

// The tests that measure memory (ReadMemStats, AllocsPerRun, a GC
// percent or memory limit) do not call t.Parallel, and those that take
// the most CPU and share nothing do: Go runs these after the others, at
// once, so that no other test's garbage reaches a measure.

import (
	"io"
	"strings"
)

// OneLineReader reads s one line a Read, as a producer that writes an
// event at a time does: a live source then delivers a batch a line.
func OneLineReader(s string) io.Reader { return &oneLine{s: s} }

type oneLine struct{ s string }

func (r *oneLine) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := strings.IndexByte(r.s, '\n') + 1
	if n == 0 || n > len(p) {
		n = min(len(r.s), len(p))
	}
	n = copy(p, r.s[:n])
	r.s = r.s[n:]
	return n, nil
}
