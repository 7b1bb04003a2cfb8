package output

import (
	"io"
	"os"
)

// BuffersWriter is an io.Writer's vectored write: WriteBuffers writes the
// bytes of bufs one after the other, as one Write of them joined would,
// without joining them (writev), and returns how many it wrote; fewer
// than all only with an error. It may change bufs' elements, not their
// bytes, and keeps none of them. JSON Lines and CSV writers over an
// io.Writer that has it write the rows of a split run's workers with it.
type BuffersWriter interface {
	WriteBuffers(bufs [][]byte) (int64, error)
}

// BuffersOf returns w's vectored write: its own if it has one, writev for
// an *os.File on Linux, io.Discard's (which writes nothing), else nil.
func BuffersOf(w io.Writer) BuffersWriter {
	switch w := w.(type) {
	case BuffersWriter:
		return w
	case *os.File:
		return fileBuffers(w)
	}
	if w == io.Discard {
		return discard{}
	}
	return nil
}

// discard is io.Discard's vectored write.
type discard struct{}

func (discard) WriteBuffers(bufs [][]byte) (int64, error) {
	var n int64
	for _, b := range bufs {
		n += int64(len(b))
	}
	return n, nil
}
