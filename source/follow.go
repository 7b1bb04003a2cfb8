package source

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// followPoll is how often a followed file at its end is checked for growth.
// Polling works on every file system and platform; a tenth of a second is
// a latency nobody watching a log notices.
const followPoll = 100 * time.Millisecond

// Follow is LOAD 'path' FOLLOW: a live stream that reads the file to its
// end, then keeps reading what is appended, like tail -f, until Close. A
// file that shrinks (truncated) is read again from its start; when path
// names a new file (rotated), the old one is read to its end and the new
// one from its start. format is as Load takes it ("" from the extension).
func Follow(name, path, format string, opts Options, errs io.Writer) (*Live, error) {
	format, err := formatOf(path, format)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path) // now, so that a wrong path is the statement's error
	if err != nil {
		return nil, err
	}
	l := newLive(name, path, format, opts, errs)
	l.run = func(ctx context.Context) error {
		fl := &follower{path: path, f: f, done: ctx.Done(), errs: errs}
		defer func() { fl.f.Close() }()
		return l.feed(path, fl)
	}
	return l, nil
}

// follower is an io.Reader over a growing file; it returns io.EOF only when
// done is closed.
type follower struct {
	path string
	f    *os.File
	off  int64
	done <-chan struct{}
	errs io.Writer
}

func (fl *follower) Read(p []byte) (int, error) {
	var tick *time.Ticker // made when the file is at its end
	defer func() {
		if tick != nil {
			tick.Stop()
		}
	}()
	for {
		n, err := fl.f.Read(p)
		fl.off += int64(n)
		if n > 0 {
			return n, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		if fl.reopen() {
			continue
		}
		if tick == nil {
			tick = time.NewTicker(followPoll)
		}
		select {
		case <-fl.done:
			return 0, io.EOF
		case <-tick.C:
		}
	}
}

// reopen handles a truncated or rotated file at the end of the current
// one, and reports whether there may be something new to read.
func (fl *follower) reopen() bool {
	cur, err := fl.f.Stat()
	if err != nil {
		return false
	}
	if cur.Size() < fl.off {
		if _, err := fl.f.Seek(0, io.SeekStart); err == nil {
			fmt.Fprintf(fl.errs, "%s: truncated; reading it again from the start\n", fl.path)
			fl.off = 0
			return true
		}
		return false
	}
	next, err := os.Stat(fl.path)
	if err != nil || os.SameFile(cur, next) {
		return false // the same file, or none for now (mid-rotation)
	}
	f, err := os.Open(fl.path)
	if err != nil {
		return false
	}
	fmt.Fprintf(fl.errs, "%s: replaced (rotated); reading the new file\n", fl.path)
	fl.f.Close()
	fl.f, fl.off = f, 0
	return true
}
