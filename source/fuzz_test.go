package source

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sase-cep/sase/event"
)

// reproducers are issue 16's inputs and the like: FOLLOW's rotated
// header, a producer cut off mid-line, binary input, invalid UTF-8, an
// unterminated quote, a flood of bad lines.
var reproducers = []string{
	"type,ts,x\nA,1,1\nB,2,2\n",
	"type,x,ts\nA,500,10\nB,600,11\n",
	"type,ts,x\nA,1,1\nB,4,1",
	strings.Repeat("\x00", 5000),
	"type,ts,s\nA,1,x\xffy\n",
	"\xfftype,ts\nA\xe2\x82,1\n",
	"type,ts,s\nA,1,\"abc\nA,2,x\n",
	"type,ts,s\nA,1,\"a\nb\"\nA,2,\"c\"\n",
	"type,ts\n" + strings.Repeat("A,x\n", 20) + "A,1\n",
	"type,ts,x\r\nA,1,2\r\nA,2,3",
	"{\"type\":\"A\",\"ts\":1,\"x\":1}\n{\"type\":\"B\",\"ts\":4,\"x\":1",
	"{\"type\":\"A\",\"ts\":1,\"s\":\"x\xffy\"}\n",
	"{\"type\":\"A\",\"ts\":1,\"f\":1e400,\"g\":1.0,\"n\":null}\n",
	"type,ts,i,f,b,s\nA,1,-7,2.50,true,\n",
	"type,ts,vol\nA,2,1\nD,1,3\n", // issue 29: D's only line rejected
	"{\"type\":\"A\",\"ts\":1,\"a\":[1, [\"x\\u00e9\", {\"k\": null}]],\"o\":{\"b\":[]}}\n{\"type\":\"A\",\"ts\":2,\"a\":[1,\n", // issue 29: arrays
}

// fuzzOptions keep lines short, so that the limit is reached too.
var fuzzOptions = Options{MaxLine: 1 << 12}

// canoner renders events by names, attributes sorted, with their kinds:
// streams typed by different schemas compare equal if their events do.
// It sorts the schema's slots once, by their quoted names (a quoted name
// is a prefix of no other, so the rendered attributes sort the same),
// and appends rather than formats: the fast-path tests render hundreds
// of thousands of events, and fmt was most of the package's test CPU.
type canoner struct {
	s      *event.Schema
	slots  []int    // by quoted name
	quoted [][]byte // by slot
	buf    []byte
}

func newCanoner(s *event.Schema) *canoner {
	c := &canoner{s: s}
	for slot, name := range s.Attrs {
		c.slots = append(c.slots, slot)
		c.quoted = append(c.quoted, strconv.AppendQuote(nil, name))
	}
	slices.SortFunc(c.slots, func(a, b int) int { return bytes.Compare(c.quoted[a], c.quoted[b]) })
	return c
}

func (c *canoner) canon(e *event.Event) string {
	b := strconv.AppendQuote(c.buf[:0], c.s.Types[e.Type].Name)
	b = strconv.AppendInt(append(b, '@'), e.TS, 10)
	b = strconv.AppendInt(append(b, '#'), e.Seq, 10)
	b = append(b, ' ')
	sep := false
	for _, slot := range c.slots {
		if slot >= len(e.Attrs) || e.Attrs[slot].IsAbsent() {
			continue
		}
		if sep {
			b = append(b, ' ')
		}
		sep = true
		v := e.Attrs[slot]
		b = append(v.AppendText(append(append(b, c.quoted[slot]...), '=')), ':')
		b = append(b, v.Kind().String()...)
	}
	c.buf = b
	return string(b)
}

func canonAll(s *event.Stream) []string {
	c := newCanoner(s.Schema)
	out := make([]string, len(s.Events))
	for i, e := range s.Events {
		out[i] = c.canon(e)
	}
	return out
}

// toJSONL writes a stream's events as JSON Lines, attributes by name
// with their values' JSON.
func toJSONL(s *event.Stream) []byte {
	var b []byte
	for _, e := range s.Events {
		b = append(b, `{"type":`...)
		b = event.AppendJSONString(b, s.Schema.Types[e.Type].Name)
		b = fmt.Appendf(b, `,"ts":%d`, e.TS)
		for slot, v := range e.Attrs {
			if !v.IsAbsent() {
				b = append(b, ',')
				b = event.AppendJSONString(b, s.Schema.Attrs[slot])
				b = append(b, ':')
				b = v.AppendJSON(b)
			}
		}
		b = append(b, "}\n"...)
	}
	return b
}

// checkLoadError checks what every loader's error must be: named by its
// input, with no stream.
func checkLoadError(t *testing.T, s *event.Stream, err error, name string) {
	t.Helper()
	if !strings.HasPrefix(err.Error(), name+":") {
		t.Fatalf("error %q does not name %s", err, name)
	}
	if s != nil {
		t.Fatal("a stream with an error")
	}
}

// FuzzLoadCSV loads CSV text; whatever it accepts, written as JSON Lines
// by the values' types, loads to the same events: the two loaders agree
// on typing.
func FuzzLoadCSV(f *testing.F) {
	for _, tc := range csvCases {
		f.Add([]byte(tc.in))
	}
	for _, r := range reproducers {
		f.Add([]byte(r))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := LoadCSV(bytes.NewReader(data), "f.csv", fuzzOptions)
		if err != nil {
			checkLoadError(t, s, err, "f.csv")
			return
		}
		j, err := LoadJSONL(bytes.NewReader(toJSONL(s)), "f.jsonl", Options{})
		if err != nil {
			t.Fatalf("the JSON Lines of %q: %v", data, err)
		}
		if got, want := canonAll(j), canonAll(s); !slices.Equal(got, want) {
			t.Fatalf("%q:\ncsv   %q\njsonl %q", data, want, got)
		}
	})
}

// FuzzLoadJSONL loads JSON Lines; what it accepts, written out again,
// loads to the same events (an infinite float, which JSON cannot write, is
// written null: absent).
func FuzzLoadJSONL(f *testing.F) {
	for _, tc := range jsonlCases {
		f.Add([]byte(tc.in))
	}
	for _, r := range reproducers {
		f.Add([]byte(r))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := LoadJSONL(bytes.NewReader(data), "f.jsonl", fuzzOptions)
		if err != nil {
			checkLoadError(t, s, err, "f.jsonl")
			return
		}
		again, err := LoadJSONL(bytes.NewReader(toJSONL(s)), "g.jsonl", Options{})
		if err != nil {
			t.Fatalf("%q written again: %v", data, err)
		}
		for _, e := range s.Events {
			for i, v := range e.Attrs {
				if v.Kind() == event.Float && math.IsInf(v.Float(), 0) {
					e.Attrs[i] = event.Value{}
				}
			}
		}
		if got, want := canonAll(again), canonAll(s); !slices.Equal(got, want) {
			t.Fatalf("%q:\nloaded %q\nagain  %q", data, want, got)
		}
	})
}

// liveDecode reads data as one producer of a live source: cut says
// whether its end cuts a last line off (a connection) or not (standard
// input).
func liveDecode(t *testing.T, data []byte, format string, cut bool) ([]string, Stats, error) {
	t.Helper()
	p := Producer{Name: "p", R: bytes.NewReader(data)}
	if cut {
		p.Cut = func() string { return "the connection closed" }
	}
	src, err := newLineSource("p", Config{Name: "s", Format: format, Options: fuzzOptions}, func(_ context.Context, feed func(Producer) error) error {
		return feed(p)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var events []*event.Event
	err = src.Read(context.Background(), func(b []*event.Event) bool {
		events = append(events, b...)
		return true
	})
	var out []string
	src.Schema(func(s *event.Schema) {
		c := newCanoner(s)
		for _, e := range events {
			out = append(out, c.canon(e))
		}
	})
	return out, src.Stats(), err
}

// FuzzLiveDecoder reads bytes as a live stream's producer does. Its
// counts add up; it delivers what the file loader does when that accepts
// the input (a CSV record spanning lines aside, which only a file may
// hold); and a connection's end only costs the fragment after its last
// newline, rejected.
func FuzzLiveDecoder(f *testing.F) {
	for _, tc := range csvCases {
		f.Add([]byte(tc.in), false)
	}
	for _, tc := range jsonlCases {
		f.Add([]byte(tc.in), true)
	}
	for _, r := range reproducers {
		f.Add([]byte(r), false)
		f.Add([]byte(r), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, jsonl bool) {
		format, load := "csv", LoadCSV
		if jsonl {
			format, load = "jsonl", LoadJSONL
		}
		got, st, err := liveDecode(t, data, format, false)
		if st.Read != st.Used+st.Rejected || st.Used != int64(len(got)) {
			t.Fatalf("%q: counts %+v for %d events", data, st, len(got))
		}
		if s, lerr := load(bytes.NewReader(data), "p", fuzzOptions); lerr == nil {
			// A CSV record (the header too) may span lines only in a file.
			if (err != nil || st.Rejected > 0) && (jsonl || !bytes.Contains(data, []byte{'"'})) {
				t.Fatalf("%q: the file loads, but live: %v, %+v", data, err, st)
			}
			if st.Rejected == 0 && !slices.Equal(got, canonAll(s)) {
				t.Fatalf("%q:\nlive %q\nfile %q", data, got, canonAll(s))
			}
		}

		whole := data[:bytes.LastIndexByte(data, '\n')+1]
		wantEvents, wantSt, werr := liveDecode(t, whole, format, false)
		cutEvents, cutSt, _ := liveDecode(t, data, format, true)
		if werr == nil && len(bytes.TrimSpace(data[len(whole):])) > 0 { // the producer reaches the fragment
			wantSt.Read++
			wantSt.Rejected++
		}
		if !slices.Equal(cutEvents, wantEvents) || cutSt != wantSt {
			t.Fatalf("%q cut off:\n%q %+v\nwant %q %+v", data, cutEvents, cutSt, wantEvents, wantSt)
		}
	})
}
