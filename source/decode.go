package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sase-cep/sase/event"
)

// decoding is what every decoding source shares: the builder (so the
// schema) under the lock Schema takes, and the counts.
type decoding struct {
	mu       sync.Mutex
	b        *builder
	read     int64
	rejected int64
}

func (d *decoding) Schema(f func(*event.Schema)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.b.tally.Flush(d.b.schema)
	f(d.b.schema)
}

func (d *decoding) Unit() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.b.unit()
}

func (d *decoding) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := Stats{Read: d.read, Used: d.b.seq, Rejected: d.rejected}
	if r := d.b.ord; r != nil {
		st.Late, st.Held, st.Behind, st.Time, st.MaxTS, st.HasTime = r.late, r.held(), r.behind, r.now, r.max, r.hasNow
	}
	return st
}

// Rejecter is a source whose transport rejects lines before they reach
// it (a NATS message past its line limit, say).
type Rejecter interface {
	// Reject counts n lines read and rejected, reported by the caller, so
	// that the stream's totals add up.
	Reject(n int64)
}

func (d *decoding) Reject(n int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.read += n
	d.rejected += n
}

// lineReader frames an input into lines of at most max bytes (the '\n'
// not counted), numbering them from 1, in place in a read buffer of size
// bytes (larger while a longer line is read): a line costs a search for
// its '\n' and little else.
type lineReader struct {
	r     io.Reader
	name  string // prefixes the error of a line over the limit
	max   int
	size  int
	buf   []byte
	pos   int   // buf[pos:] is unread
	start int   // where the line last returned starts in buf
	rerr  error // r's error, once it has returned one
	line  int   // lines returned
	whole int   // buf[:whole] ends with a whole line (ready)
	// held, if not nil, counts a line that outgrows twice the read
	// buffer against its source's max_pending.
	held *heldLine
}

// newLineReader reads r in pieces of size bytes, or of r's length and
// a byte when it is known and smaller (readSize).
func newLineReader(r io.Reader, name string, max, size int) *lineReader {
	return &lineReader{r: r, name: name, max: max, size: readSize(r, size)}
}

// readSize is size, or, for a reader that knows how many bytes it has
// left (a strings.Reader, a bytes.Reader, a regular file) and has fewer,
// that many and one more, so that one read ends it: a small input, such
// as a test's table, should not allocate and clear a megabyte.
func readSize(r io.Reader, size int) int {
	left := int64(-1)
	switch r := r.(type) {
	case interface{ Len() int }:
		left = int64(r.Len())
	case *os.File:
		if info, err := r.Stat(); err == nil && info.Mode().IsRegular() {
			if at, err := r.Seek(0, io.SeekCurrent); err == nil {
				left = info.Size() - at
			}
		}
	}
	if left < 0 || left >= int64(size) {
		return size
	}
	return max(int(left)+1, 512)
}

// next returns the next line with its '\n' (a last one may lack it), valid
// until the next call, and the input's error at its end (io.EOF, or a
// failed read) with a last line that lacks its '\n', or alone. A line over
// the limit is an error.
func (r *lineReader) next() ([]byte, error) {
	if text, ok := r.bufferedLine(); ok {
		return text, nil
	}
	text, ok, err := r.nextLine()
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, io.EOF
	case text[len(text)-1] != '\n':
		return text, r.rerr
	}
	return text, nil
}

// bufferedLine returns the next line, with its '\n', when it is buffered whole
// and within the limit: nextLine's common case, inlined. ok false: ask
// nextLine.
func (r *lineReader) bufferedLine() ([]byte, bool) {
	rest := r.buf[r.pos:]
	i := bytes.IndexByte(rest, '\n')
	if i < 0 || i > r.max {
		return nil, false
	}
	r.line++
	r.start = r.pos
	r.pos += i + 1
	return rest[:i+1], true
}

// nextLine returns the next line with its '\n' (a last one may lack it),
// counted, in place in the read buffer (its capacity reaching the
// buffer's end); ok is false at the end of the input. A line over the
// limit, or a failed read, is an error.
func (r *lineReader) nextLine() ([]byte, bool, error) {
	for {
		rest := r.buf[r.pos:]
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			r.line++
			if i > r.max {
				return nil, false, lineTooLong(r.name, r.line, r.max)
			}
			r.start = r.pos
			r.pos += i + 1
			return rest[:i+1], true, nil
		}
		if len(rest) > r.max {
			return nil, false, lineTooLong(r.name, r.line+1, r.max)
		}
		if r.rerr != nil {
			if len(rest) == 0 {
				if r.rerr == io.EOF {
					return nil, false, nil
				}
				return nil, false, r.rerr
			}
			r.line++
			r.start, r.pos = r.pos, len(r.buf)
			return rest, true, nil // the last line, without its '\n'
		}
		r.fill()
	}
}

// fill reads more input after the unread bytes, moved to the front; a
// buffer grown for a long line is not kept for good.
func (r *lineReader) fill() {
	if r.cutOff() {
		return
	}
	rest := r.buf[r.pos:]
	if cap(r.buf) > 2*r.size && len(rest) < r.size/2 {
		r.buf = make([]byte, r.size)
		if r.held != nil {
			r.held.release()
		}
	}
	n := len(rest)
	if cap(r.buf)-n < r.size/2 { // a long line: room for more of it
		if !r.grow() {
			r.cutOff()
			return
		}
	} else {
		copy(r.buf[:cap(r.buf)], rest)
	}
	r.buf, r.pos, r.whole = r.buf[:cap(r.buf)], 0, 0
	m, err := io.ReadAtLeast(r.r, r.buf[n:], 1)
	r.buf = r.buf[:n+m]
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = io.EOF
		}
		r.rerr = err
		r.cutOff() // the read a cut's closing failed
	}
}

// cutOff reports whether max_pending cut the producer, then ending its
// input with the cut's error in place of what it read last (the
// unfinished line, rejected).
func (r *lineReader) cutOff() bool {
	if r.held == nil {
		return false
	}
	held := r.held.cut.Load()
	if held == 0 {
		return false
	}
	if _, done := r.rerr.(*pendingCutError); !done {
		r.rerr = &pendingCutError{name: r.name, source: r.held.p.source, line: r.line + 1,
			held: held, max: r.held.p.max, partial: len(r.buf) > r.pos}
		if cap(r.buf) >= growCollect {
			defer runtime.GC() // as grow does: the line's bytes go at once
		}
		r.buf, r.pos, r.whole = nil, 0, 0
	}
	return true
}

// growCollect is the size from which a buffer that a long line outgrew
// is collected at once: the garbage of a line of hundreds of MB, left to
// the collector's pace, would double the memory it takes.
const growCollect = 64 << 20

// grow moves the unread bytes, a line longer than the buffer has room
// for, to the front of a buffer twice as large, or once that passes half
// the longest line allowed (max_line), to one that holds that line and a
// read: what a line holds is bounded by max_line, not by the line, and
// the last move holds at most 1.5 times it. A buffer past twice the read
// buffer counts against max_pending first (what the line holds beyond the
// read buffer, at most max_line): false when that cut the producer.
func (r *lineReader) grow() bool {
	n, old := len(r.buf)-r.pos, cap(r.buf)
	size := 2 * old
	if size > r.max/2 {
		size = r.max + 1 + r.size
	}
	size = max(n+r.size, size)
	if r.held != nil && size > 2*r.size && !r.held.hold(int64(min(size-r.size, r.max))) {
		return false
	}
	buf := make([]byte, size)
	copy(buf, r.buf[r.pos:])
	r.buf, r.pos = buf[:n], 0
	if old >= growCollect {
		runtime.GC() // the old buffer: bytes, nothing to scan, so it costs little
	}
	return true
}

// ready reports whether a whole line is buffered, so reading it does not
// wait for the producer.
func (r *lineReader) ready() bool {
	if r.pos < r.whole {
		return true
	}
	// The last '\n' buffered, found once: the lines before it need no
	// search each (a message-bus producer hands many at once).
	r.whole = r.pos + bytes.LastIndexByte(r.buf[r.pos:], '\n') + 1
	return r.pos < r.whole
}

// lineTooLongError is a line over Options.MaxLine.
type lineTooLongError struct {
	name      string
	line, max int
}

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("%s:%d: line longer than %s (the max_line limit; WITH (max_line = ...) raises it)", e.name, e.line, FormatBytes(int64(e.max)))
}

func lineTooLong(name string, line, max int) error {
	return &lineTooLongError{name: name, line: line, max: max}
}

// lineLimit passes a reader through, failing at a line over max bytes:
// encoding/csv, which frames a CSV file's records, has no limit of its own.
type lineLimit struct {
	r    io.Reader
	name string
	max  int
	run  int // bytes since the last '\n'
	line int // '\n's seen
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for rest := p[:n]; ; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 || l.run+i > l.max {
			l.run += len(rest)
			break
		}
		l.run, l.line, rest = 0, l.line+1, rest[i+1:]
	}
	if l.run > l.max {
		return 0, lineTooLong(l.name, l.line+1, l.max)
	}
	return n, err
}

// FormatBytes renders a size for messages: 512 bytes, 64 KB, 1.5 GB
// (binary units).
func FormatBytes(n int64) string {
	if n < 1<<10 {
		return plural(n, "byte")
	}
	units := []string{"KB", "MB", "GB", "TB"}
	f, u := float64(n)/(1<<10), 0
	for f >= 1<<10 && u < len(units)-1 {
		f /= 1 << 10
		u++
	}
	return strings.TrimSuffix(strconv.FormatFloat(f, 'f', 1, 64), ".0") + " " + units[u]
}

// plural is "1 line", "2 lines".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}

// validUTF8 replaces each byte of s that is not part of valid UTF-8 with
// U+FFFD, as encoding/json (and so the JSON Lines loader) does in strings.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

// reportFirst is how many rejected lines a live stream reports in full
// before it reports at most one a second.
const reportFirst = 10

// reporter writes a live stream's rejected lines, rate-limited so that a
// flood of bad input does not flood the terminal: the first reportFirst,
// then at most one a second with the count so far, and at the end how
// many were not shown.
type reporter struct {
	w      io.Writer
	now    func() time.Time
	what   string // what the lines are: "" is "rejected", or "late"
	shown  int64
	hidden int64
	next   time.Time // when the next line past the first ones may be shown
}

// skipped reports a rejected line that the stream skips; rejected counts
// it.
func (r *reporter) skipped(err error, rejected int64) {
	if r.shown < reportFirst {
		r.shown++
		fmt.Fprintf(r.w, "%v (line skipped)\n", err)
		return
	}
	now := r.now()
	if now.Before(r.next) {
		r.hidden++
		return
	}
	r.next = now.Add(time.Second)
	r.shown++
	fmt.Fprintf(r.w, "%v (line skipped; %s %s so far, reported at most once a second)\n", err, plural(rejected, "line"), r.verb())
}

// finish says how many rejected lines were not shown, if any.
func (r *reporter) finish(name string, rejected int64) {
	if r.hidden > 0 {
		fmt.Fprintf(r.w, "%s: %s %s in all, %d of them not shown\n", name, plural(rejected, "line"), r.verb(), r.hidden)
	}
}

func (r *reporter) verb() string {
	if r.what == "" {
		return "rejected"
	}
	return r.what
}
