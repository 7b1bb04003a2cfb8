package session

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/sase-cep/sase/output"
)

// outputs serializes the writes of the session and of its background
// queries to stdout, stderr and \o's file. Background queries write whole
// lines (see lineSink); the session's own results are written as its
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

// lineSink passes a background query's output to its results in whole
// lines, so that two queries' lines never mix; each line gets prefix (the
// shell's "[n] "). A partial line waits for its end.
type lineSink struct {
	o      *outputs
	dst    io.Writer
	prefix []byte
	tail   []byte // a partial line
	buf    []byte
}

func (s *lineSink) Write(p []byte) (int, error) {
	end := bytes.LastIndexByte(p, '\n') + 1
	if end == 0 {
		s.tail = append(s.tail, p...)
		return len(p), nil
	}
	head, lines := s.tail, p[:end]
	if len(s.prefix) > 0 {
		b := s.buf[:0]
		for _, part := range [][]byte{s.tail, lines} {
			for len(part) > 0 {
				if len(b) == 0 || b[len(b)-1] == '\n' {
					b = append(b, s.prefix...)
				}
				nl := bytes.IndexByte(part, '\n') + 1
				if nl == 0 {
					nl = len(part)
				}
				b = append(b, part[:nl]...)
				part = part[nl:]
			}
		}
		s.buf, head, lines = b, nil, b
	}
	s.o.mu.Lock()
	var err error
	if len(head) > 0 {
		_, err = s.dst.Write(head)
	}
	if err == nil {
		_, err = s.dst.Write(lines)
	}
	s.o.mu.Unlock()
	s.tail = append(s.tail[:0], p[end:]...)
	return len(p), err
}

// close writes a last line that has no line break.
func (s *lineSink) close() {
	if len(s.tail) > 0 {
		s.Write([]byte{'\n'})
	}
}
