package source

import (
	"bytes"
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

// fingerprintSize is how much of a followed file's start is compared at
// each poll and after each read: a file rewritten in place (truncated and
// written again, to beyond the offset read so far, between two polls or
// two reads) differs there, while one that was only appended to does not.
const fingerprintSize = 1024

// Follow is LOAD 'path' FOLLOW: a live stream that reads the file to its
// end, then keeps reading what is appended, like tail -f, until Close.
// format is as Load takes it ("" from the extension); path may be a
// file:// URL.
func Follow(name, path, format string, opts Options, errs io.Writer) (*Live, error) {
	file, err := localPath(path)
	if err != nil {
		return nil, err
	}
	c := newConfig(WithName(name), WithFormat(format), WithOptions(opts), WithErrors(errs))
	src, err := timedOpen(openFollow(file, c))(c)
	if err != nil {
		return nil, err
	}
	return NewLive(name, src), nil
}

// openFollow opens a followed file. At each poll at its end it checks that
// the path still names the file it reads (device and inode), that the file
// is not shorter than what was read, and, then and after each read, that
// its first bytes are those read: a file replaced (rotated) is read to its end and the new one from
// its start; a file truncated or rewritten is read again from its start.
// Either way a CSV file's header is read again first. Line numbers count
// from the start of the file being read.
func openFollow(path string, c Config) (Source, error) {
	format, err := formatOf(path, c.Format)
	if err != nil {
		return nil, err
	}
	c.Format = format
	f, err := os.Open(path) // now, so that a wrong path is the statement's error
	if err != nil {
		return nil, err
	}
	fl := &follower{path: path, f: f, errs: c.Errors}
	return newLineSource(path, c, fl.run, func() { fl.f.Close() })
}

// follower reads a followed file, one generation (the file from its start
// to a replacement, truncation or rewrite) after another.
type follower struct {
	path string
	f    *os.File
	errs io.Writer
}

type genEnd uint8

const (
	genOn        genEnd = iota
	genClosed           // the stream was closed
	genRotated          // the path names another file, open in next
	genTruncated        // the file is shorter than what was read
	genRewritten        // the file's first bytes changed
)

func (fl *follower) run(ctx context.Context, feed func(Producer) error) error {
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	for {
		g := &generation{path: fl.path, f: fl.f, done: ctx.Done(), tick: tick.C}
		if err := feed(Producer{Name: fl.path, R: g, Cut: g.cut}); err != nil {
			if g.next != nil {
				g.next.Close()
			}
			return err
		}
		switch g.end {
		case genRotated:
			fmt.Fprintf(fl.errs, "%s: replaced (rotated); reading the new file from its start\n", fl.path)
			fl.f.Close()
			fl.f = g.next
			continue
		case genTruncated:
			fmt.Fprintf(fl.errs, "%s: truncated; reading it again from its start\n", fl.path)
		case genRewritten:
			fmt.Fprintf(fl.errs, "%s: rewritten (its first bytes changed); reading it again from its start\n", fl.path)
		default: // closed, or the feed stopped
			return nil
		}
		if _, err := fl.f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("%s: %w", fl.path, err)
		}
	}
}

// generation is an io.Reader over one generation of a followed file: it
// waits at the file's end, and returns io.EOF when the generation ends.
type generation struct {
	path  string
	f     *os.File
	done  <-chan struct{}
	tick  <-chan time.Time
	off   int64
	fp    []byte // the first bytes read, up to fingerprintSize
	buf   []byte // for the file's first bytes as they are now
	atEnd bool   // the last read found the end: check the file before reading on
	end   genEnd
	next  *os.File // genRotated: the new file
}

func (g *generation) Read(p []byte) (int, error) {
	for g.end == genOn {
		if g.atEnd {
			g.end, g.next = g.changed()
			if g.end == genRotated {
				// The old file may have grown before it was renamed: read
				// it to its end first, and notice the rotation again then.
				if n, _ := g.f.Read(p); n > 0 {
					g.next.Close()
					g.end, g.next = genOn, nil
					g.took(p[:n])
					return n, nil
				}
			}
			if g.end != genOn {
				break
			}
		}
		n, err := g.f.Read(p)
		if n > 0 {
			// Rewritten since the last look, these would be the new
			// content's bytes past the old offset: its start tells.
			if g.end = g.startChanged(); g.end != genOn {
				break
			}
			g.took(p[:n])
			return n, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		if g.atEnd { // checked, and nothing new: wait
			select {
			case <-g.done:
				g.end = genClosed
				return 0, io.EOF
			case <-g.tick:
			}
		}
		g.atEnd = true
	}
	return 0, io.EOF
}

// took records n bytes read.
func (g *generation) took(b []byte) {
	g.atEnd = false
	g.off += int64(len(b))
	if len(g.fp) < fingerprintSize {
		g.fp = append(g.fp, b[:min(len(b), fingerprintSize-len(g.fp))]...)
	}
}

// changed checks, at the file's end, whether the generation has ended.
// A failed check is no change: the path may be missing mid-rotation.
func (g *generation) changed() (genEnd, *os.File) {
	cur, err := g.f.Stat()
	if err != nil {
		return genOn, nil
	}
	if next, err := os.Stat(g.path); err == nil && !os.SameFile(cur, next) {
		if f, err := os.Open(g.path); err == nil {
			return genRotated, f
		}
	}
	if cur.Size() < g.off {
		return genTruncated, nil
	}
	return g.startChanged(), nil
}

// startChanged checks the file's first bytes against those read.
func (g *generation) startChanged() genEnd {
	if len(g.fp) == 0 {
		return genOn
	}
	if len(g.buf) < len(g.fp) {
		g.buf = make([]byte, fingerprintSize)
	}
	buf := g.buf[:len(g.fp)]
	if n, _ := g.f.ReadAt(buf, 0); bytes.Equal(buf[:n], g.fp) {
		return genOn
	}
	// The writer may have truncated the file since.
	if cur, err := g.f.Stat(); err == nil && cur.Size() < g.off {
		return genTruncated
	}
	return genRewritten
}

// cut is why a last line without its newline is incomplete: a rotated
// file has ended, as cat gives it; otherwise the writer was cut off.
func (g *generation) cut() string {
	switch g.end {
	case genRotated:
		return ""
	case genTruncated:
		return "the file was truncated"
	case genRewritten:
		return "the file was rewritten"
	}
	return "the stream was closed"
}
