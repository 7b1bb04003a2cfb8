package source

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// pendingLines bounds the bytes that the producers of one line source (a
// LISTEN's connections) hold together for unfinished lines longer than
// their read buffers (max_pending): when a line's growth would pass it,
// the producer holding the oldest such line is cut. Only a growing line
// costs it anything: a short line never reaches it.
type pendingLines struct {
	source string // names the stream in a cut's error
	max    int64
	mu     sync.Mutex
	total  int64
	seq    int64 // orders the lines held, oldest first
	held   map[*heldLine]struct{}
}

func newPendingLines(source string, max int64) *pendingLines {
	return &pendingLines{source: source, max: max, held: map[*heldLine]struct{}{}}
}

// heldLine is one producer's share of its source's pendingLines.
type heldLine struct {
	p     *pendingLines
	drop  func()       // ends the producer's input (closes its connection), or nil
	bytes int64        // held for the unfinished line, under p.mu
	since int64        // when the line began to be held, under p.mu
	cut   atomic.Int64 // the bytes its line held when it was cut; 0 while not
}

func (p *pendingLines) line(drop func()) *heldLine {
	return &heldLine{p: p, drop: drop}
}

// hold makes the bytes h's line holds n, cutting the producers of the
// oldest lines held while the total passes the cap; false if h is (or
// was) cut, its line not to be grown.
func (h *heldLine) hold(n int64) bool {
	p := h.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if h.cut.Load() != 0 {
		return false
	}
	if h.bytes == 0 {
		p.seq++
		h.since = p.seq
		p.held[h] = struct{}{}
	}
	p.total += n - h.bytes
	h.bytes = n
	for p.total > p.max {
		var old *heldLine
		for o := range p.held {
			if old == nil || o.since < old.since {
				old = o
			}
		}
		p.total -= old.bytes
		delete(p.held, old)
		old.cut.Store(old.bytes)
		old.bytes = 0
		if old.drop != nil {
			old.drop() // wakes its reader, which may be waiting for input
		}
	}
	return h.cut.Load() == 0
}

// release ends h's hold: its line ended, or its producer did.
func (h *heldLine) release() {
	p := h.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if h.bytes != 0 {
		p.total -= h.bytes
		delete(p.held, h)
		h.bytes = 0
	}
}

// pendingCutError ends a producer that max_pending cut; partial: it had
// begun a line, which is rejected.
type pendingCutError struct {
	name, source string
	line         int
	held, max    int64
	partial      bool
}

func (e *pendingCutError) Error() string {
	return fmt.Sprintf("%s:%d: connection cut: the unfinished lines of %s held more than max_pending (%s), and this line, holding %s, was the oldest (WITH (max_pending = ...) raises it)",
		e.name, e.line, e.source, FormatBytes(e.max), FormatBytes(e.held))
}
