package session

import (
	"bytes"
	"io"
	"sync"
)

// outputs serializes the writes of the session and of its background
// queries to stdout and stderr. Background queries write whole lines (see
// lineSink); the session's own results are written as its buffer fills.
type outputs struct {
	mu       sync.Mutex
	out, err io.Writer
}

// lockedWriter writes to stdout or stderr under the lock.
type lockedWriter struct {
	o      *outputs
	stderr bool
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.o.mu.Lock()
	defer w.o.mu.Unlock()
	if w.stderr {
		return w.o.err.Write(p)
	}
	return w.o.out.Write(p)
}

// lineSink passes a background query's output to stdout in whole lines, so
// that two queries' lines never mix; each line gets prefix (the shell's
// "[n] "). A partial line waits for its end.
type lineSink struct {
	o      *outputs
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
		_, err = s.o.out.Write(head)
	}
	if err == nil {
		_, err = s.o.out.Write(lines)
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
