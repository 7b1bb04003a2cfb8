package output

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// fileWriter writes to a file with writev.
type fileWriter struct {
	f   *os.File
	rc  syscall.RawConn
	iov []syscall.Iovec
}

// iovMax is the most buffers one writev takes (IOV_MAX).
const iovMax = 1024

func fileBuffers(f *os.File) BuffersWriter {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return &fileWriter{f: f, rc: rc}
}

// WriteBuffers writes bufs with writev, up to iovMax at a time, going on
// after a partial write. A failed writev hands the rest to the file's
// Write, whose error (and SIGPIPE on standard output) is the one a plain
// Write gives.
func (w *fileWriter) WriteBuffers(bufs [][]byte) (int64, error) {
	var total int64
	for {
		for len(bufs) > 0 && len(bufs[0]) == 0 {
			bufs = bufs[1:]
		}
		if len(bufs) == 0 {
			return total, nil
		}
		w.iov = w.iov[:0]
		for _, b := range bufs[:min(len(bufs), iovMax)] {
			if len(b) > 0 {
				w.iov = append(w.iov, syscall.Iovec{Base: &b[0]})
				w.iov[len(w.iov)-1].SetLen(len(b))
			}
		}
		var n uintptr
		var errno syscall.Errno
		err := w.rc.Write(func(fd uintptr) bool {
			for {
				n, _, errno = syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&w.iov[0])), uintptr(len(w.iov)))
				if errno != syscall.EINTR {
					return errno != syscall.EAGAIN // else wait until the file takes more
				}
			}
		})
		clear(w.iov) // the bytes are the caller's
		if err != nil || errno != 0 || n == 0 {
			m, err := writeEach(w.f, bufs)
			return total + m, err
		}
		total += int64(n)
		for n > 0 { // past what was written
			k := min(n, uintptr(len(bufs[0])))
			bufs[0] = bufs[0][k:]
			n -= k
			if len(bufs[0]) == 0 {
				bufs = bufs[1:]
			}
		}
	}
}

// writeEach is a vectored write as one Write per buffer, for what writev
// cannot do.
func writeEach(w io.Writer, bufs [][]byte) (int64, error) {
	var n int64
	for _, b := range bufs {
		m, err := w.Write(b)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
