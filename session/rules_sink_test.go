package session_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/sase-cep/sase/output"
)

// memSinks are the rows the memsink:// sinks were written, as JSON Lines,
// by the URL's host and the query the sink is for.
var memSinks = struct {
	sync.Mutex
	rows map[string]*bytes.Buffer
}{rows: map[string]*bytes.Buffer{}}

func init() {
	output.RegisterSink("memsink", func(_ context.Context, u *url.URL, c output.SinkConfig) (output.Writer, error) {
		memSinks.Lock()
		defer memSinks.Unlock()
		key := u.Host + "/" + c.Query
		if memSinks.rows[key] != nil {
			return nil, fmt.Errorf("sink %s opened twice", key)
		}
		buf := &bytes.Buffer{}
		memSinks.rows[key] = buf
		return output.New(output.JSONL, lockedBuffer{buf}, c.Schema), nil
	})
}

// lockedBuffer writes to its buffer under memSinks' lock: the test reads
// the buffers as the queries' goroutines write them.
type lockedBuffer struct{ b *bytes.Buffer }

func (l lockedBuffer) Write(p []byte) (int, error) {
	memSinks.Lock()
	defer memSinks.Unlock()
	return l.b.Write(p)
}

// TestLiveRulesToSink: under SET output, a live stream's rules run in its
// rulebook (one read of each event for all), each writing its rows to a
// sink of its own, opened as the query alone opens it: each rule's sink
// gets what the query alone sends its sink, on 1 and 2 passes.
func TestLiveRulesToSink(t *testing.T) {
	in := disordered(3000, 4)
	rules := append([]string{"PATTERN SEQ(A a, !(B n)) WHERE a.x > 50 WITHIN 6 RETURN a.seq, a.x"}, liveRules...)
	for _, workers := range []int{1, 2} {
		var book, alone strings.Builder
		for _, s := range []*strings.Builder{&book, &alone} {
			fmt.Fprintf(s, "SET workers = %d; SET limit = 0; SET output = 'memsink://%s-w%d/'; LOAD '-' AS s WITH (slack = 4);\n",
				workers, map[*strings.Builder]string{&book: "book", &alone: "alone"}[s], workers)
		}
		for i, q := range rules {
			fmt.Fprintf(&book, "RULE r%d: %s;\n", i, q)
			fmt.Fprintf(&alone, "%s;\n", q)
		}
		_, notes := runPipedNotes(t, book.String(), in, 512)
		if !strings.Contains(notes, "query 1 (rule r0) started on s") {
			t.Errorf("W%d: the rules did not start as a rulebook's:\n%s", workers, notes)
		}
		runPiped(t, alone.String(), in, 512)
		memSinks.Lock()
		for i := range rules {
			q := fmt.Sprint("q", i+1)
			got, want := memSinks.rows[fmt.Sprintf("book-w%d/%s", workers, q)], memSinks.rows[fmt.Sprintf("alone-w%d/%s", workers, q)]
			switch {
			case got == nil || want == nil:
				t.Errorf("W%d: %s: no sink (book %v, alone %v)", workers, q, got != nil, want != nil)
			case got.String() != want.String():
				t.Errorf("W%d: rule r%d's sink got\n%.1500s\nthe query's alone:\n%.1500s", workers, i, got, want)
			case i < 2 && got.Len() == 0:
				t.Errorf("W%d: rule r%d wrote nothing: the stream does not try it", workers, i)
			}
		}
		memSinks.Unlock()
	}
}
