package source

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/testkit"
)

const deadline = testkit.Deadline

// reader subscribes to l, starts it and delivers its events on a channel,
// closed when the stream ends.
func reader(t *testing.T, l *Live) <-chan *event.Event {
	t.Helper()
	sub, err := l.Subscribe()
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *event.Event, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		l.Close()
	})
	go func() {
		defer close(ch)
		defer sub.Close()
		for e := range sub.Events(ctx, func() {}) {
			ch <- e
		}
	}()
	l.Start()
	return ch
}

// next waits for the next event.
func next(t *testing.T, ch <-chan *event.Event) *event.Event {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatal("the stream ended")
		}
		return e
	case <-time.After(deadline):
		t.Fatal("no event within the deadline")
	}
	return nil
}

// text renders an event by names: "A@3#1 x=5", attributes sorted by name.
func text(s *event.Schema, e *event.Event) string {
	out := fmt.Sprintf("%s@%d#%d", s.Types[e.Type].Name, e.TS, e.Seq)
	var attrs []string
	for slot, v := range e.Attrs {
		if !v.IsAbsent() {
			attrs = append(attrs, fmt.Sprintf("%s=%s", s.Attrs[slot], v.AppendText(nil)))
		}
	}
	slices.Sort(attrs)
	return strings.Join(append([]string{out}, attrs...), " ")
}

// TestLiveEventByEvent writes lines into a pipe one at a time and reads
// each event before writing the next: nothing waits for the end of input.
// The events equal those of the same text loaded as a file.
func TestLiveEventByEvent(t *testing.T) {
	for _, tt := range []struct {
		format, text string
	}{
		{"csv", "type,ts,x,name\nA,1,5,a\nB,2,6.5,\nA,2,true,\"q, r\"\n\nB,7,-3,b\n"},
		{"jsonl", `{"type":"A","ts":1,"x":5}` + "\n" + `{"type":"B","ts":2,"y":"s"}` + "\n\n" + `{"type":"A","ts":2,"x":null,"z":true}` + "\n" + `{"type":"B","ts":7,"x":1.5}` + "\n"},
	} {
		t.Run(tt.format, func(t *testing.T) {
			load := LoadCSV
			if tt.format == "jsonl" {
				load = LoadJSONL
			}
			want, err := load(strings.NewReader(tt.text), "f", Options{})
			if err != nil {
				t.Fatal(err)
			}
			pr, pw := io.Pipe()
			defer pw.Close()
			l, err := LiveReader("s", pr, tt.format, Options{}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			ch := reader(t, l)
			lines := strings.SplitAfter(tt.text, "\n")
			i := 0
			for _, w := range want.Events {
				// Write lines until one makes an event, then read it.
				for {
					line := lines[i]
					i++
					if _, err := pw.Write([]byte(line)); err != nil {
						t.Fatal(err)
					}
					if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "type,") {
						break
					}
				}
				e := next(t, ch)
				snap := l.Snapshot().Schema
				if got, w := text(snap, e), text(want.Schema, w); got != w {
					t.Errorf("event %s, want %s", got, w)
				}
			}
			pw.Close()
			if e, ok := <-ch; ok {
				t.Errorf("extra event %v", e)
			}
			if err := l.Err(); err != nil {
				t.Error(err)
			}
			read, used, rejected := l.Counts()
			if read != int64(len(want.Events)) || used != read || rejected != 0 {
				t.Errorf("counts %d %d %d", read, used, rejected)
			}
		})
	}
}

// TestLiveBadLines checks that bad lines are reported with their line,
// counted and skipped, or stop the stream with on_error = 'stop'.
func TestLiveBadLines(t *testing.T) {
	input := "type,ts,x\nA,1,5\nB,x,6\nB,2,6,7\nA,0,1\nB,3,\"a\nB,4,9\n"
	var errs testkit.SyncBuffer
	l, err := LiveReader("s", strings.NewReader(input), "csv", Options{}, &errs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for e := range reader(t, l) {
		got = append(got, text(l.Snapshot().Schema, e))
	}
	if want := "A@1#0 x=5|B@4#1 x=9"; strings.Join(got, "|") != want {
		t.Errorf("events %q, want %q", got, want)
	}
	for _, want := range []string{
		`stdin:3: bad timestamp "x"`,
		"stdin:4: 4 fields, header has 3 (line skipped)",
		"stdin:5: timestamp 0 is before the previous event's 1",
		`stdin:6: extraneous or missing " in quoted-field (line skipped)`,
	} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs.String())
		}
	}
	if read, used, rejected := l.Counts(); read != 6 || used != 2 || rejected != 4 {
		t.Errorf("read %d, used %d, rejected %d; want 6, 2, 4", read, used, rejected)
	}

	errs = testkit.SyncBuffer{}
	l, _ = LiveReader("s", strings.NewReader(input), "csv", Options{StopOnError: true}, &errs)
	n := 0
	for range reader(t, l) {
		n++
	}
	if n != 1 || l.Err() == nil || !strings.Contains(errs.String(), "stdin:3: bad timestamp \"x\" (want an integer, an RFC 3339 time, YYYY-MM-DD HH:MM:SS[.fff] or epoch seconds with a fraction) (stopped reading stdin)") {
		t.Errorf("on_error = 'stop': %d events, err %v, stderr %s", n, l.Err(), errs.String())
	}
}

// TestLiveSchemaGrows checks that names registered before the events and
// names appearing later keep their ids and slots.
func TestLiveSchemaGrows(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	l, _ := LiveReader("s", pr, "jsonl", Options{}, io.Discard)
	l.Update(func(s *event.Schema) {
		s.AddType("B")
		s.AddAttr("price")
	})
	before := l.Snapshot().Schema
	ch := reader(t, l)
	fmt.Fprintln(pw, `{"type":"A","ts":1,"volume":3}`)
	a := next(t, ch)
	fmt.Fprintln(pw, `{"type":"B","ts":2,"price":7}`)
	b := next(t, ch)
	if id, _ := before.TypeID("B"); b.Type != id || a.Type == id {
		t.Errorf("type ids: A %d, B %d, registered B %d", a.Type, b.Type, id)
	}
	slot, _ := before.AttrSlot("price")
	if b.Attr(slot).Int() != 7 {
		t.Errorf("price slot %d: %v", slot, b.Attrs)
	}
	after := l.Snapshot().Schema
	if vs, ok := after.AttrSlot("volume"); !ok || a.Attr(vs).Int() != 3 || len(before.Types) != 1 || len(after.Types) != 2 {
		t.Errorf("schema did not grow as expected: %v, %v", after.Attrs, len(after.Types))
	}
}

// TestFollow appends to a real file, truncates it and rotates it.
func TestFollow(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.csv")
	write := func(name, text string, flag int) {
		t.Helper()
		f, err := os.OpenFile(name, flag|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	write(path, "type,ts,x\nA,1,1\n", os.O_TRUNC)
	var errs testkit.SyncBuffer
	l, err := Follow("app", path, "", Options{}, &errs)
	if err != nil {
		t.Fatal(err)
	}
	ch := reader(t, l)
	if e := next(t, ch); e.TS != 1 {
		t.Fatalf("first event at %d", e.TS)
	}
	write(path, "A,2,2\n", os.O_APPEND)
	if e := next(t, ch); e.TS != 2 || e.Seq != 1 {
		t.Fatalf("appended event at %d #%d", e.TS, e.Seq)
	}
	// Truncated: read again from the start, its header first.
	write(path, "type,ts,x\nA,3,3\n", os.O_TRUNC)
	if e := next(t, ch); e.TS != 3 {
		t.Fatalf("after truncation: event at %d", e.TS)
	}
	// Rotated: the path names a new file.
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	write(path, "type,ts,x\nA,4,4\nA,5,5\n", os.O_TRUNC)
	if e := next(t, ch); e.TS != 4 {
		t.Fatalf("after rotation: event at %d", e.TS)
	}
	next(t, ch)
	for _, want := range []string{"truncated", "rotated"} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("stderr lacks %q: %s", want, errs.String())
		}
	}
	l.Close()
	select {
	case <-l.Done():
	case <-time.After(deadline):
		t.Fatal("Close did not end the stream")
	}
}

// TestListen connects real TCP producers: each sends its own CSV header,
// their lines are merged, and a closed client does not end the stream.
func TestListen(t *testing.T) {
	var errs testkit.SyncBuffer
	l, err := Listen("feed", "tcp://127.0.0.1:0", "csv", Options{}, &errs)
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(l.Source(), "tcp://")
	ch := reader(t, l)
	dial := func() net.Conn {
		t.Helper()
		c, err := net.DialTimeout("tcp", addr, deadline)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	c1 := dial()
	fmt.Fprint(c1, "type,ts,x\nA,1,10\n")
	if e := next(t, ch); e.TS != 1 {
		t.Fatalf("event at %d", e.TS)
	}
	c2 := dial()
	fmt.Fprint(c2, "ts,type,y\n2,B,20\n")
	e := next(t, ch)
	snap := l.Snapshot().Schema
	if got := text(snap, e); got != "B@2#1 y=20" {
		t.Fatalf("second producer's event: %s", got)
	}
	c2.Close()
	fmt.Fprint(c1, "A,0,1\nA,3,30\n") // ts 0 lags behind: rejected
	if e := next(t, ch); e.TS != 3 || e.Seq != 2 {
		t.Fatalf("after a client closed: event at %d #%d", e.TS, e.Seq)
	}
	if !strings.Contains(errs.String(), ":3: timestamp 0 is before") {
		t.Errorf("stderr: %s", errs.String())
	}
	l.Close()
	select {
	case <-l.Done():
	case <-time.After(deadline):
		t.Fatal("Close did not end the stream")
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("still listening after Close")
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		"tcp://127.0.0.1:7000": "tcp 127.0.0.1:7000",
		"tcp://:7000":          "tcp 127.0.0.1:7000",
		":0":                   "tcp 127.0.0.1:0",
		"tcp://0.0.0.0:7000":   "tcp4 0.0.0.0:7000", // IPv4's wildcard binds IPv4 only
		"tcp://[::]:7000":      "tcp [::]:7000",
		"tcp://[::1]:7000":     "tcp [::1]:7000",
	} {
		network, hp, err := listenAddr(in)
		if got := network + " " + hp; got != want || err != nil {
			t.Errorf("%s: %s %v, want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"7000", "tcp://host", "tcp://h:1/x"} {
		if _, _, err := listenAddr(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
