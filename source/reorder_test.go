package source

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sase-cep/sase/event"
)

// items renders what a source delivered: events as type@ts#seq, ticks as
// tick@ts.
func items(sc *event.Schema, es []*event.Event) string {
	var parts []string
	for _, e := range es {
		if e.IsTick() {
			parts = append(parts, fmt.Sprintf("tick@%d", e.TS))
		} else {
			parts = append(parts, fmt.Sprintf("%s@%d#%d", sc.Types[e.Type].Name, e.TS, e.Seq))
		}
	}
	return strings.Join(parts, " ")
}

// TestLoadEventTime: a batch LOAD with a slack, sort = true or on_error =
// 'skip': what it keeps, in which order, and counts that add up.
func TestLoadEventTime(t *testing.T) {
	const csv = "type,ts\nA,5\nB,3\nC,9\nD,2\nE,9\nF,x\nG,8\n"
	for _, tt := range []struct {
		name, in string
		opts     Options
		want     string
		stats    Stats
		errs     string // in the report
		err      string
	}{
		{name: "slack 0 stops", in: csv, err: "in.csv:3: timestamp 3 is before the previous event's 5"},
		{name: "skip", in: csv, opts: Options{SkipBad: true}, want: "A@5#0 C@9#1 E@9#2",
			stats: Stats{Read: 7, Used: 3, Rejected: 4}, errs: "in.csv:7: bad timestamp \"x\""},
		{name: "slack 2", in: csv, opts: Options{Slack: 2, SkipBad: true}, want: "B@3#0 A@5#1 G@8#2 C@9#3 E@9#4",
			stats: Stats{Read: 7, Used: 5, Late: 1, Rejected: 1}, errs: "in.csv:5: late event: ts 2 is below the stream's time 7 (largest ts 9, slack 2)"},
		{name: "slack fails on a bad line", in: csv, opts: Options{Slack: 2}, err: "in.csv:7: bad timestamp"},
		{name: "sort", in: "type,ts\nA,5\nB,3\nC,9\nD,2\nE,9\nG,8\n", opts: Options{Sort: true}, want: "D@2#0 B@3#1 A@5#2 G@8#3 C@9#4 E@9#5",
			stats: Stats{Read: 6, Used: 6}},
		{name: "ties keep arrival order", in: "type,ts\nA,5\nB,4\nC,5\nD,4\n", opts: Options{Slack: 1}, want: "B@4#0 D@4#1 A@5#2 C@5#3",
			stats: Stats{Read: 4, Used: 4}},
		{name: "punctuation dropped", in: "type,ts,x\nA,1,1\n,5,\nB,3,2\n", opts: Options{Slack: 2}, want: "A@1#0 B@3#1",
			stats: Stats{Read: 2, Used: 2}},
		{name: "jsonl", in: "{\"type\":\"A\",\"ts\":5}\n{\"ts\":6}\n{\"type\":\"B\",\"ts\":1}\n{\"type\":\"C\",\"ts\":4}\n", opts: Options{Slack: 1},
			want: "C@4#0 A@5#1", stats: Stats{Read: 3, Used: 2, Late: 1}, errs: "in.jsonl:3: late event: ts 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := "in.csv"
			if strings.HasPrefix(tt.in, "{") {
				name = "in.jsonl"
			}
			path := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(path, []byte(tt.in), 0o644); err != nil {
				t.Fatal(err)
			}
			var errs strings.Builder
			s, st, err := LoadReportContext(context.Background(), path, "", tt.opts, &errs)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := items(s.Schema, s.Events); got != tt.want {
				t.Errorf("events %s, want %s", got, tt.want)
			}
			st.Time, st.MaxTS, st.HasTime = 0, 0, false
			if st != tt.stats || st.Read != st.Used+st.Late+st.Rejected {
				t.Errorf("stats %+v, want %+v", st, tt.stats)
			}
			if !strings.Contains(errs.String(), tt.errs) {
				t.Errorf("report %q lacks %q", errs.String(), tt.errs)
			}
		})
	}
}

// TestLateFile: late lines are appended unchanged to an existing file; a
// path that cannot be written fails before any line is read.
func TestLateFile(t *testing.T) {
	dir := t.TempDir()
	late := filepath.Join(dir, "late.jsonl")
	os.WriteFile(late, []byte("kept\n"), 0o644)
	in := "{\"type\":\"A\",\"ts\":9}\n{\"type\": \"B\", \"ts\": 1, \"x\": 2}\n{\"type\":\"C\",\"ts\":2}"
	if _, err := LoadJSONL(strings.NewReader(in), "in.jsonl", Options{Slack: 3, Late: late}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(late)
	if want := "kept\n{\"type\": \"B\", \"ts\": 1, \"x\": 2}\n{\"type\":\"C\",\"ts\":2}\n"; string(got) != want {
		t.Errorf("late file %q, want %q", got, want)
	}
	_, err := Open(context.Background(), "-", WithStdin(strings.NewReader(in)), WithFormat("jsonl"),
		WithOptions(Options{Slack: 1, Late: filepath.Join(dir, "no", "such", "dir", "late.jsonl")}))
	if err == nil || !strings.Contains(err.Error(), "late = '") {
		t.Fatalf("unwritable late path: %v", err)
	}
}

// TestLiveTicks: a live stream releases an event once its time (M −
// slack, or a punctuation) passes it, each followed by a tick at that
// time; punctuation is not an event line.
func TestLiveTicks(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		opts     Options
		want     string
	}{
		{name: "slack 0", in: "type,ts\nA,1\nB,4\n", want: "A@1#0 B@4#1"},
		{name: "slack 0 punctuation", in: "type,ts\nA,1\n,7\nB,7\n,9\n", want: "A@1#0 tick@7 B@7#1 tick@9"},
		{name: "slack 0 late", in: "type,ts\nA,3\nB,2\nC,3\nD,5\n", want: "A@3#0 C@3#1 D@5#2"},
		{name: "slack 0 late after punctuation", in: "type,ts\nA,1\n,7\nB,6\nC,7\n", want: "A@1#0 tick@7 C@7#1"},
		{name: "slack 2", in: "type,ts\nA,1\nB,4\nC,3\nD,8\n", opts: Options{Slack: 2},
			want: "tick@-1 A@1#0 tick@2 C@3#1 B@4#2 tick@6 D@8#3"},
		{name: "punctuation passes held events", in: "type,ts\nA,5\nB,4\n,6\n,5\nC,6\n", opts: Options{Slack: 3},
			want: "tick@2 B@4#0 A@5#1 tick@6 C@6#2"},
		{name: "late after punctuation", in: "type,ts\nA,5\n,9\nB,8\nC,9\n", opts: Options{Slack: 3},
			want: "tick@2 A@5#0 tick@9 C@9#1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, err := Open(context.Background(), "-", WithStdin(OneLineReader(tt.in)), WithOptions(tt.opts))
			if err != nil {
				t.Fatal(err)
			}
			var got []*event.Event
			if err := src.Read(context.Background(), func(b []*event.Event) bool { got = append(got, b...); return true }); err != nil {
				t.Fatal(err)
			}
			var sc *event.Schema
			src.Schema(func(s *event.Schema) { sc = s })
			if s := items(sc, got); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
			if st := src.Stats(); st.Read != st.Used+st.Late+st.Rejected {
				t.Errorf("stats %+v do not add up", st)
			}
		})
	}
}

// TestWallClock: on a clock = 'wall' stream the stream's time follows an
// injected clock (now − slack − lag): a tick comes out while no event
// arrives, and an event older than the time is late.
func TestWallClock(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	var mu sync.Mutex
	now := base
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ticks := make(chan time.Time)
	advance := func(d time.Duration) { // the clock moves, and the stream looks
		mu.Lock()
		now = base.Add(d)
		mu.Unlock()
		ticks <- now
	}
	pr, pw := io.Pipe()
	opts := Options{Clock: "wall", Slack: 1, SlackUnit: time.Second, Lag: time.Second}
	src, err := Open(context.Background(), "-", WithStdin(pr), WithFormat("jsonl"), WithOptions(opts), WithClock(clock, ticks))
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive("s", src)
	ch := reader(t, l)
	ms := func(d time.Duration) int64 { return base.Add(d).UnixMilli() }
	want := func(typ int, ts int64) {
		t.Helper()
		if e := next(t, ch); e.Type != typ || e.TS != ts {
			t.Fatalf("got type %d at %d, want type %d at %d", e.Type, e.TS, typ, ts)
		}
	}
	read := func(n int64) { // the lines written so far have been decoded
		t.Helper()
		for end := time.Now().Add(deadline); src.Stats().Read < n; time.Sleep(time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%d lines not read", n)
			}
		}
	}
	fmt.Fprintln(pw, `{"type":"A","ts":"2026-01-01T00:00:09Z"}`)
	read(1)
	// The unit is ms from the first RFC 3339 timestamp on; time is 10 s
	// − 1 s − 1 s: A, at 9 s, is held.
	want(event.TickType, ms(-2*time.Second))
	advance(2 * time.Second) // time 10 s: A comes out, on a quiet stream
	want(0, ms(-time.Second))
	want(event.TickType, ms(0))
	fmt.Fprintln(pw, `{"type":"B","ts":"2026-01-01T00:00:09.500Z"}`) // below 10 s: late
	fmt.Fprintln(pw, `{"type":"C","ts":"2026-01-01T00:00:11Z"}`)
	read(3)
	advance(4 * time.Second)
	want(2, ms(time.Second))
	want(event.TickType, ms(2*time.Second))
	pw.Close()
	<-l.Done()
	if st := src.Stats(); st.Late != 1 || st.Used != 2 || st.Read != 3 {
		t.Errorf("stats %+v, want 3 read, 2 used, 1 late", st)
	}
}

// TestLateMessage: a late event's message says what set the stream's
// time; before any event there is no largest ts to name.
func TestLateMessage(t *testing.T) {
	clock := func() time.Time { return time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC) }
	for _, tt := range []struct {
		name, in string
		opts     Options
		want     string
	}{
		{name: "largest ts", in: "type,ts\nA,9\nB,6\n", opts: Options{Slack: 2},
			want: "stdin:3: late event: ts 6 is below the stream's time 7 (largest ts 9, slack 2)"},
		{name: "punctuation first", in: "type,ts\n,7\nA,5\n",
			want: "stdin:3: late event: ts 5 is below the stream's time 7 (no event yet, slack 0)"},
		{name: "wall clock first", in: "type,ts\nA,2026-01-01T00:00:08Z\n", opts: Options{Clock: "wall", Lag: time.Second},
			want: "stdin:2: late event: ts 1767225608000 is below the stream's time 1767225609000 (clock = 'wall' less slack 0 and lag 1000; no event yet)"},
		{name: "wall clock after an event", in: "type,ts\nA,2026-01-01T00:00:09.500Z\nB,2026-01-01T00:00:08Z\n", opts: Options{Clock: "wall", Lag: time.Second},
			want: "stdin:3: late event: ts 1767225608000 is below the stream's time 1767225609500 (clock = 'wall' less slack 0 and lag 1000; largest ts 1767225609500)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var errs strings.Builder
			src, err := Open(context.Background(), "-", WithStdin(OneLineReader(tt.in)), WithOptions(tt.opts), WithErrors(&errs), WithClock(clock, nil))
			if err != nil {
				t.Fatal(err)
			}
			if err := src.Read(context.Background(), func([]*event.Event) bool { return true }); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(errs.String(), tt.want+" (line skipped)") {
				t.Errorf("report %q lacks %q", errs.String(), tt.want)
			}
		})
	}
}

// TestEventTimeUnits: a slack with a unit counts the stream's ticks; on a
// stream of unit-less integers it, like clock = 'wall', stops the stream
// at its first event, with the line.
func TestEventTimeUnits(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		opts     Options
		want     string // items, or the error
	}{
		{name: "slack in seconds on RFC 3339", in: "type,ts\nA,2026-01-01T00:00:05Z\nB,2026-01-01T00:00:01Z\nC,2026-01-01T00:00:00Z\n",
			opts: Options{Slack: 4, SlackUnit: time.Second}, want: "tick@1767225601000 B@1767225601000#0 A@1767225605000#1"},
		{name: "slack in seconds, time_unit s", in: "type,ts\nA,10\nB,6\nC,5\n",
			opts: Options{Slack: 4000, SlackUnit: time.Millisecond, TimeUnit: time.Second}, want: "tick@6 B@6#0 A@10#1"},
		{name: "slack with a unit on unit-less ts", in: "type,ts\nA,10\n", opts: Options{Slack: 4, SlackUnit: time.Second},
			want: "stdin:2: slack = '4 s' is a duration, but the stream's timestamps are unit-less integers"},
		{name: "wall clock on unit-less ts", in: "type,ts\nA,10\n", opts: Options{Clock: "wall"},
			want: "stdin:2: clock = 'wall' needs wall-clock timestamps (RFC 3339, or a time_unit)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var errs strings.Builder
			src, err := Open(context.Background(), "-", WithStdin(OneLineReader(tt.in)), WithOptions(tt.opts), WithErrors(&errs))
			if err != nil {
				t.Fatal(err)
			}
			var got []*event.Event
			err = src.Read(context.Background(), func(b []*event.Event) bool { got = append(got, b...); return true })
			if err != nil {
				if !strings.Contains(err.Error(), tt.want) || !strings.Contains(errs.String(), tt.want) {
					t.Fatalf("err = %v (reported %q), want %q", err, errs.String(), tt.want)
				}
				return
			}
			var sc *event.Schema
			src.Schema(func(s *event.Schema) { sc = s })
			if s := items(sc, got); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
		})
	}
}

// TestLateFileCSVHeader: a CSV source's late file gets the source's
// header line (in its delimiter) before its first line when it is new or
// empty, so that it loads as CSV; an existing one is appended to without
// repeating it. Live and batch sources alike.
func TestLateFileCSVHeader(t *testing.T) {
	const in = "type;ts;x\nA;9;1\nB;1;\"a;b\"\nC;2;3\n"
	const lines = "B;1;\"a;b\"\nC;2;3\n"
	for _, tt := range []struct {
		name, existing string
		create, live   bool
		want           string
	}{
		{name: "created", create: true, want: "type;ts;x\n" + lines},
		{name: "empty", want: "type;ts;x\n" + lines},
		{name: "not empty", existing: "type;ts;x\nZ;0;0\n", want: "type;ts;x\nZ;0;0\n" + lines},
		{name: "created, live", create: true, live: true, want: "type;ts;x\n" + lines},
		{name: "not empty, live", existing: "type;ts;x\n", live: true, want: "type;ts;x\n" + lines},
	} {
		t.Run(tt.name, func(t *testing.T) {
			late := filepath.Join(t.TempDir(), "late.csv")
			if !tt.create {
				os.WriteFile(late, []byte(tt.existing), 0o644)
			}
			opts := Options{Slack: 3, Late: late, Delimiter: ';'}
			var err error
			if tt.live {
				var src Source
				src, err = Open(context.Background(), "-", WithStdin(strings.NewReader(in)), WithOptions(opts))
				if err == nil {
					err = src.Read(context.Background(), func([]*event.Event) bool { return true })
				}
			} else {
				_, err = LoadCSV(strings.NewReader(in), "in.csv", opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(late)
			if string(got) != tt.want {
				t.Errorf("late file %q, want %q", got, tt.want)
			}
			if st, err := LoadCSV(strings.NewReader(string(got)), "late.csv", Options{Delimiter: ';'}); err != nil || len(st.Events) == 0 {
				t.Errorf("the late file does not load: %v", err)
			}
		})
	}
}
