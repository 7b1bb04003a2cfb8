package source

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sase-cep/sase/internal/testkit"
)

// TestFollowRotationReorderedHeader is issue 16's first defect: after a
// rotation the new file's header is read as its header (not as a bad data
// line) and its rows are mapped by it, not by the old file's order.
func TestFollowRotationReorderedHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.csv")
	if err := os.WriteFile(path, []byte("type,ts,x\nA,1,1\nB,2,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var errs testkit.SyncBuffer
	l, err := Follow("g", path, "", Options{}, &errs)
	if err != nil {
		t.Fatal(err)
	}
	ch := reader(t, l)
	for range 2 {
		next(t, ch)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("type,x,ts\nA,500,10\nB,600,11\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"A@10#2 x=500", "B@11#3 x=600"} {
		e := next(t, ch)
		if got := text(l.Snapshot().Schema, e); got != want {
			t.Errorf("after rotation: %s, want %s", got, want)
		}
	}
	if _, _, rejected := l.Counts(); rejected != 0 {
		t.Errorf("%d lines rejected; stderr:\n%s", rejected, errs.String())
	}
}

// TestFollowRewritePastOffset is issue 16's second defect: a file
// rewritten in place to beyond the offset read so far is noticed (its
// first bytes changed) and read again from its start, so no event of the
// new content is lost.
func TestFollowRewritePastOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.csv")
	old := "type,ts,x\nA,1,1\nB,2,2\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	var errs testkit.SyncBuffer
	l, err := Follow("g", path, "", Options{}, &errs)
	if err != nil {
		t.Fatal(err)
	}
	ch := reader(t, l)
	for range 2 {
		next(t, ch)
	}
	// One write replaces the content and grows the file past the offset,
	// so that no poll sees it shorter.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	neu := "type,ts,x\nC,3,3\nD,4,4\nE,5,5\n"
	if len(neu) <= len(old) {
		t.Fatal("the new content must be longer than the old")
	}
	if _, err := f.WriteAt([]byte(neu), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, want := range []string{"C@3#2 x=3", "D@4#3 x=4", "E@5#4 x=5"} {
		e := next(t, ch)
		if got := text(l.Snapshot().Schema, e); got != want {
			t.Errorf("after the rewrite: %s, want %s", got, want)
		}
	}
	if !strings.Contains(errs.String(), "rewritten") {
		t.Errorf("stderr does not say the file was rewritten:\n%s", errs.String())
	}
}

// TestListenFragment is issue 16's third defect: a producer that
// disconnects in the middle of a line has that fragment rejected, counted
// and reported, not taken as an event.
func TestListenFragment(t *testing.T) {
	for _, tt := range []struct{ format, text, want, msg string }{
		{"csv", "type,ts,x\nA,1,1\nB,4,1", "A@1#0 x=1", ":3: incomplete line"},
		{"jsonl", "{\"type\":\"A\",\"ts\":1,\"x\":1}\n{\"type\":\"B\",\"ts\":4,\"x\":1", "A@1#0 x=1", ":2: incomplete line"},
		// Valid JSON, but without its newline nothing says the line is whole.
		{"jsonl", "{\"type\":\"A\",\"ts\":1,\"x\":1}\n{\"type\":\"B\",\"ts\":4,\"x\":1}", "A@1#0 x=1", ":2: incomplete line"},
	} {
		t.Run(tt.format, func(t *testing.T) {
			var errs testkit.SyncBuffer
			l, err := Listen("feed", "tcp://127.0.0.1:0", tt.format, Options{}, &errs)
			if err != nil {
				t.Fatal(err)
			}
			ch := reader(t, l)
			c, err := net.DialTimeout("tcp", strings.TrimPrefix(l.Source(), "tcp://"), deadline)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprint(c, tt.text)
			c.Close()
			e := next(t, ch)
			if got := text(l.Snapshot().Schema, e); got != tt.want {
				t.Errorf("event %s, want %s", got, tt.want)
			}
			testkit.WaitFor(t, &errs, "disconnected")
			select {
			case e := <-ch:
				t.Errorf("the fragment became an event: %s", text(l.Snapshot().Schema, e))
			case <-time.After(50 * time.Millisecond):
			}
			if read, used, rejected := l.Counts(); read != 2 || used != 1 || rejected != 1 {
				t.Errorf("read %d, used %d, rejected %d; want 2, 1, 1", read, used, rejected)
			}
			if !strings.Contains(errs.String(), tt.msg) {
				t.Errorf("stderr does not report the fragment:\n%s", errs.String())
			}
		})
	}
}
