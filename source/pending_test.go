package source

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sase-cep/sase/internal/testkit"
)

// TestMaxPending is issue 30's sixth defect, its last part: connections
// each sending a long line without its newline held memory without
// bound, max_line bounding only each line. max_pending bounds them
// together: the connection holding the oldest unfinished line is cut and
// told, its line rejected, and the others' lines still load.
func TestMaxPending(t *testing.T) {
	var errs testkit.SyncBuffer
	src, err := listen("tcp://127.0.0.1:0", newConfig(WithName("feed"), WithOptions(Options{MaxLine: 1 << 20, MaxPending: 1 << 20}), WithErrors(&errs)))
	if err != nil {
		t.Fatal(err)
	}
	pend := src.(*lineSource).pending
	l := NewLive("feed", src)
	ch := reader(t, l)
	addr := strings.TrimPrefix(l.Source(), "tcp://")
	long := func(c byte) string { return strings.Repeat(string(c), 300<<10) }
	dial := func(text string, held int64) net.Conn {
		t.Helper()
		c, err := net.DialTimeout("tcp", addr, deadline)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprint(c, text)
		waitPending(t, pend, held)
		return c
	}
	// A 300 KB line grows a 64 KB read buffer to 512 KB: 448 KB held.
	c1 := dial("type,ts,note\nA,1,a\nA,2,"+long('a'), 448<<10)
	if got := text(l.Snapshot().Schema, next(t, ch)); got != "A@1#0 note=a" {
		t.Fatalf("event %s", got)
	}
	c2 := dial("type,ts,note\nA,3,"+long('b'), 896<<10)
	// The third line's growth passes 1 MB: the first connection is cut.
	c3 := dial("type,ts,note\nA,4,"+long('c'), 896<<10)
	c1.SetReadDeadline(time.Now().Add(deadline))
	// A close with the line's bytes unread in the kernel's buffer is a
	// reset rather than an end of file: either says the cut.
	if _, err := io.ReadAll(c1); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the oldest line's connection was not closed: %v", err)
	}
	who := "feed/" + c1.LocalAddr().String()
	testkit.WaitFor(t, &errs, who+": disconnected")
	want := who + ":3: connection cut: the unfinished lines of feed held more than max_pending (1 MB), and this line, holding 448 KB, was the oldest (WITH (max_pending = ...) raises it) (stopped reading " + who + ")"
	if !strings.Contains(errs.String(), want) {
		t.Errorf("stderr does not say the cut:\n%s\nwant %s", errs.String(), want)
	}
	fmt.Fprint(c2, "\n")
	if got := text(l.Snapshot().Schema, next(t, ch)); got != "A@3#1 note="+long('b') {
		t.Errorf("event %.40s..., want A@3#1 note=bbb...", got)
	}
	fmt.Fprint(c3, "\n")
	if got := text(l.Snapshot().Schema, next(t, ch)); got != "A@4#2 note="+long('c') {
		t.Errorf("event %.40s..., want A@4#2 note=ccc...", got)
	}
	waitPending(t, pend, 0)
	fmt.Fprint(c2, "A,5,d\n")
	if got := text(l.Snapshot().Schema, next(t, ch)); got != "A@5#3 note=d" {
		t.Errorf("event %s, want A@5#3 note=d", got)
	}
	if read, used, rejected := l.Counts(); read != 5 || used != 4 || rejected != 1 {
		t.Errorf("read %d, used %d, rejected %d; want 5, 4, 1", read, used, rejected)
	}
}

// waitPending waits until p's lines hold n bytes together.
func waitPending(t *testing.T, p *pendingLines, n int64) {
	t.Helper()
	for end := time.Now().Add(deadline); ; time.Sleep(time.Millisecond) {
		p.mu.Lock()
		total := p.total
		p.mu.Unlock()
		if total == n {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the unfinished lines hold %d bytes, want %d", total, n)
		}
	}
}

// TestPendingLinesOldest checks which line max_pending cuts: the one held
// longest, a line released and held again being the newest, and the
// growing line itself when it is the oldest.
func TestPendingLinesOldest(t *testing.T) {
	p := newPendingLines("s", 100)
	dropped := map[string]bool{}
	line := func(name string) *heldLine { return p.line(func() { dropped[name] = true }) }
	a, b, c := line("a"), line("b"), line("c")
	for _, step := range []struct {
		h       *heldLine
		n       int64 // 0: release
		ok      bool
		total   int64
		dropped string
	}{
		{a, 40, true, 40, ""},
		{b, 30, true, 70, ""},
		{a, 0, true, 30, ""},    // a's line ended
		{a, 50, true, 80, ""},   // a new line: now the newest
		{c, 40, true, 90, "b"},  // 120 passes 100: b is the oldest
		{a, 70, false, 40, "a"}, // 110: a's line, older than c's, is cut as it grows
		{a, 10, false, 40, "a"}, // cut for good
		{c, 120, false, 0, "c"}, // a line alone over the cap cuts itself
	} {
		if step.n == 0 {
			step.h.release()
		} else if ok := step.h.hold(step.n); ok != step.ok {
			t.Fatalf("hold(%d) = %v", step.n, ok)
		}
		if p.total != step.total {
			t.Fatalf("after hold(%d): total %d, want %d", step.n, p.total, step.total)
		}
		if step.dropped != "" && !dropped[step.dropped] {
			t.Fatalf("after hold(%d): %s not dropped (%v)", step.n, step.dropped, dropped)
		}
	}
	if b.cut.Load() != 30 || a.cut.Load() != 70 || c.cut.Load() != 120 {
		t.Errorf("cut at %d, %d, %d; want 30, 70, 120", b.cut.Load(), a.cut.Load(), c.cut.Load())
	}
}
