package session

import (
	"bufio"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/sase-cep/sase/output"
)

// outputs serializes the writes of the session and of its background
// queries to stdout, stderr and \o's file. Background queries write whole
// lines (see order.go); the session's own results are written as its
// buffer fills.
type outputs struct {
	mu sync.Mutex
}

// lockedWriter writes to w (stdout, stderr or a file) under the lock.
type lockedWriter struct {
	o *outputs
	w io.Writer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.o.mu.Lock()
	defer w.o.mu.Unlock()
	return w.w.Write(p)
}

// vectoredOut is the session's buffered results (s.out) with the
// vectored writes of where they go: a split run's rows, which its workers
// encoded, go there after what the buffer holds, under the lock, without
// a copy into the buffer.
type vectoredOut struct {
	*bufio.Writer
	o   *outputs
	vec output.BuffersWriter
}

func (w vectoredOut) WriteBuffers(bufs [][]byte) (int64, error) {
	if err := w.Flush(); err != nil {
		return 0, err
	}
	w.o.mu.Lock()
	defer w.o.mu.Unlock()
	return w.vec.WriteBuffers(bufs)
}

// results is where query results go: stdout, or the file \o named. A file
// is closed once \o has moved on and the live queries that were started
// while it was the target have ended.
type results struct {
	w    io.Writer
	file *os.File     // nil for stdout
	refs atomic.Int32 // holders: the session while it is the target, live queries
}

func (r *results) hold() *results {
	r.refs.Add(1)
	return r
}

func (r *results) release() error {
	if r.refs.Add(-1) == 0 && r.file != nil {
		return r.file.Close()
	}
	return nil
}
