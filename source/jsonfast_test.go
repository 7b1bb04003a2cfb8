package source

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sase-cep/sase/event"
)

// TestJSONNumber checks jsonNumber against the scanner's number grammar.
func TestJSONNumber(t *testing.T) {
	for _, lit := range []string{"0", "-0", "12", "1.5", "-1.25e+3", "1E-2", "0.0", "1e400", "123456789012345678901",
		"01", "1.", ".5", "-", "1e", "1e+", "+1", "-.5", "1.e3", "0x1", "00"} {
		text := []byte(lit + "}")
		var s flatScanner
		s.data = text
		v, err := s.number()
		end, ok := jsonNumber(text, 0)
		if ok != (err == nil) || ok && end != len(v.text) {
			t.Errorf("jsonNumber(%q) = %d, %v; the scanner reads %q, %v", lit, end, ok, v.text, err)
		}
	}
}

// TestShortName checks shortName against simpleString on every string
// of up to eight bytes after its quote made of bytes around those it
// must tell apart.
func TestShortName(t *testing.T) {
	t.Parallel()
	alphabet := []byte{'"', '\\', 0x1f, ' ', 0x7f, 0x80, '"' ^ 1, '\\' ^ 1} // the last two: where firstZeros borrows
	text := []byte(`"12345678`)
	w := text[1:]
	var try func(k int)
	try = func(k int) {
		if k == len(w) {
			end, ok := shortName(binary.LittleEndian.Uint64(w))
			s, next, sok := simpleString(text, 0)
			if ok != sok || ok && (end != len(s) || next != end+2) {
				t.Fatalf("shortName(%q) = %d, %v; simpleString reads %q, %v", w, end, ok, s, sok)
			}
			return
		}
		for _, c := range alphabet {
			w[k] = c
			try(k + 1)
		}
	}
	try(0)
}

// TestFastLine reads lines with fastLine (parse when it refuses one) and
// with parse alone, each with its own builder: the two must agree on every
// event and error and on the schema, and each line must take the path it
// should.
func TestFastLine(t *testing.T) {
	lines := []struct {
		text string
		fast bool
		pad  string // what follows the line's newline in its read buffer; "bare": no newline, digits
	}{
		{`{"type":"A","ts":1,"x":1,"s":"a"}`, false, ""}, // the first line makes the shape
		{`{"type":"A","ts":2,"x":-2,"s":"b"}`, true, ""},
		{`{"type":"B","ts":3,"x":3,"s":""}`, true, ""}, // a new type
		{`{"type":"A","ts":4,"x":2.5,"s":"c"}`, true, ""},
		{`{"type":"A","ts":4,"x":1e3,"s":"c"}`, true, ""},
		{`{"type":"A","ts":4,"x":12345678901234567890,"s":"c"}`, true, ""}, // over int64: a float
		{`{"type":"A","ts":4,"x":-9223372036854775808,"s":"c"}`, true, ""},
		{`{"type":"A","ts":5,"x":true,"s":false}`, true, ""},
		{`{"type":"A","ts":5,"x":01,"s":"c"}`, false, ""}, // not JSON
		{`{"type":"A","ts":5,"x":1.,"s":"c"}`, false, ""},
		{`{"type":"A","ts":5,"x":null,"s":"c"}`, false, ""},
		{`{"type":"A","ts":5,"x":1,"s":"\u0041"}`, false, ""},
		{`{"type":"A","ts":5,"x":1,"s":"é"}`, false, ""},
		{`{"type":"A","ts":5,"x":1,"s":"c"} `, false, ""},
		{`{"type":"A","ts":5,"x":1,"s":"c"}` + "\r", false, ""},
		{`{"type":"A", "ts":5,"x":1,"s":"c"}`, false, ""},
		{`{"type":"A","ts":5,"x":1,"s":"c"}}`, false, ""},
		{`{"type":"A","ts":5,"x":1,"s":"c"`, false, ""},
		{`{"type":"A","ts":5,"x":1,"s":"c","y":1}`, false, ""}, // another shape
		{`{"type":"A","ts":6,"x":1,"s":"c","y":2}`, true, ""},
		{`{"type":"A","ts":6,"x":1,"s":"c"}`, false, ""}, // and back
		{`{"type":"A","ts":6,"x":1,"s":"c"}`, true, ""},
		{`{"type":1,"ts":6,"x":1,"s":"c"}`, false, ""},
		{`{"type":"","ts":6,"x":1,"s":"c"}`, true, ""}, // an empty type: the same error
		{`{"type":"A","ts":true,"x":1,"s":"c"}`, false, ""},
		{`{"type":"A","ts":"7","x":1,"s":"c"}`, true, ""},
		{`{"type":"A","ts":5,"x":1,"s":"c"}`, true, ""}, // before the previous ts
		{`{"type":"A","ts":1.5,"x":1,"s":"c"}`, true, ""},
		{`{"type":"A","ts":1e3,"x":1,"s":"c"}`, true, ""},
		{`{"type":"A","ts":"2026-01-01T00:00:00Z","x":1,"s":"c"}`, true, ""},
		{`{"type":"A","ts":8,"x":0,"s":"c"}`, true, ""},
		{`{"type":"A","ts":8,"x":-0,"s":"c"}`, true, ""},
		{`{"type":"A","ts":8,"x":12345678,"s":"c"}`, true, ""},
		{`{"type":"A","ts":8,"x":-1234567890123456,"s":"c"}`, true, ""},
		{`{"type":"A","ts":8,"x":12345678901234567,"s":"c"}`, true, ""}, // 17 digits: read as the scanner does
		{`{"type":"A","ts":8,"x":-01,"s":"c"}`, false, ""},
		{`{"type":"A","ts":8,"x":-,"s":"c"}`, false, ""},
		{`{"type":"A","ts":8,"x":-x,"s":"c"}`, false, ""},
		{`{"type":"A","ts":8,"x":tru,"s":"c"}`, false, ""},
		{`{"type":"A","ts":8,"x":falsy,"s":"c"}`, false, ""},
		{`{"type":"A","ts":8,"x":1,"s":true}`, true, ""},
		{`{"type":"A","ts":8,"x":1,"s":"c"}`, false, "\n"}, // the read buffer ends: parse's
		{`{"type":true,"ts":8,"x":1,"s":"c"}`, false, ""},
		{`{"type":"A","ts":false,"x":1,"s":"c"}`, false, ""},
		{`{"type":"A","ts":8,"x":1,"s":"c"]`, false, ""},
		{`{"type":"A","ts":8,"x":1,"s":"c"`, false, ""},
		{`{"type":"A","ts":8,"x":1,"s":12`, false, "bare"}, // the last line, and digits after it in the buffer
		{`{"type":"A","ts":8,"x":1,"s":-`, false, "bare"},
		{`{"type":"A","ts":8,"x":1,"s":"c"}`, true, "bare"},
		{`{"ts":8,"x":1,"s":"c","type":"A"}`, false, ""}, // the type last
		{`{"ts":8,"x":1,"s":"c","type":"A"}`, true, ""},
		{`{"ts":8,"x":1,"s":"c","type":"A`, false, "bare quote"},
		{`{"type":"A","ts":8,"x":1,"s":"c"}`, false, ""},
		{`{"type":"ABCDEFG`, false, "bare quote"},                       // its name's quote past the line
		{`{"type":"A\u0041","ts":8,"x":1,"s":"c"}`, false, ""},          // type names: an escape,
		{`{"type":"é","ts":8,"x":1,"s":"c"}`, false, ""},                // a non-ASCII byte,
		{"{\"type\":\"a\tb\",\"ts\":8,\"x\":1,\"s\":\"c\"}", false, ""}, // a control character,
		{`{"type":"Abcdefg","ts":8,"x":1,"s":"c"}`, true, ""},           // seven bytes,
		{`{"type":"Abcdefgh","ts":8,"x":1,"s":"c"}`, true, ""},          // eight,
		{`{"type":"Abcdefghijk\"","ts":8,"x":1,"s":"c"}`, false, ""},
		{`{"type":"Abcdefghijk","ts":8,"x":1,"s":"c"}`, true, ""},
		{``, false, ""},
		{`{"ts":7,"type":"A","x":1,"s":"c"}`, false, ""},
		// A shape that sets no value in a slot below its highest: the slot
		// is absent, whatever the event given back by the line before held.
		{`{"type":"A","ts":9,"x":1,"s":"c"}`, false, ""},
		{`{"type":"A","ts":9,"x":7,"s":"c"`, false, ""}, // x set, then given back
		{`{"type":"A","ts":9,"s":"d"}`, false, ""},
		{`{"type":"A","ts":10,"s":"e"}`, true, ""},
	}
	fast, slow := newBuilder("t.jsonl", Options{}), newBuilder("t.jsonl", Options{})
	var fr, sr jsonRecord
	render := func(b *builder, e *event.Event, err error) string {
		switch {
		case err != nil:
			return "error " + err.Error()
		case e == nil:
			return "nothing"
		case e.IsTick():
			return fmt.Sprintf("tick %d", e.TS)
		}
		return text(b.schema, e)
	}
	for n, tc := range lines {
		line := n + 1
		var buf []byte
		switch tc.pad {
		case "":
			buf = inBuffer(tc.text+"\n", roomy)
		case "bare":
			buf = inBuffer(tc.text, roomy)
		case "bare quote": // the line ends in a string, a quote after it in the buffer
			buf = inBuffer(tc.text, `"`+roomy[:15])
		default:
			buf = inBuffer(tc.text+"\n", tc.pad)
		}
		e, ok, ferr := fr.fastLine(fast, buf, line)
		if ok != tc.fast {
			t.Errorf("%q: fast path %v, want %v", tc.text, ok, tc.fast)
		}
		if !ok {
			e, ferr = fr.event(fast, buf, line)
		}
		se, serr := sr.event(slow, buf, line)
		if got, want := render(fast, e, ferr), render(slow, se, serr); got != want {
			t.Errorf("%q: %s, want %s", tc.text, got, want)
		}
		if ferr == nil && serr == nil && len(e.Attrs) != len(se.Attrs) {
			t.Errorf("%q: %d attrs, want %d", tc.text, len(e.Attrs), len(se.Attrs))
		}
	}
	for i, want := range slow.schema.Types {
		if got := fast.schema.Types[i]; fmt.Sprintf("%+v", *got) != fmt.Sprintf("%+v", *want) {
			t.Errorf("type %+v, want %+v", *got, *want)
		}
	}
	if len(fast.schema.Types) != len(slow.schema.Types) {
		t.Errorf("%d types, want %d", len(fast.schema.Types), len(slow.schema.Types))
	}
}

// TestFastLineRandom reads random lines both ways: values of every kind,
// the keys of the shape mostly, another order or key now and then, in read
// buffers that end at the line or go on.
func TestFastLineRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 10))
	values := []string{"0", "-1", "12345678", "1234567890123456", "12345678901234567", "99999999999999999999", "01",
		"2.5", "-0.125", "1e3", "1E-2", `"abc"`, `""`, `"a\"b"`, `"é"`, "true", "false", "null", "[1]", "{}", "tru"}
	keys := []string{`"x"`, `"y"`, `"z"`}
	fast, slow := newBuilder("t.jsonl", Options{}), newBuilder("t.jsonl", Options{})
	var fr, sr jsonRecord
	render := func(b *builder, e *event.Event, err error) string {
		if err != nil {
			return "error " + err.Error()
		}
		return fmt.Sprintf("%s %d", text(b.schema, e), len(e.Attrs))
	}
	ts := 0
	for line := 1; line < 20_000; line++ {
		order := keys
		if r.IntN(30) == 0 {
			order = []string{`"y"`, `"x"`, `"z"`}
		}
		typ := `"` + "AB"[r.IntN(2):][:1] + `"`
		if r.IntN(100) == 0 {
			typ = values[r.IntN(len(values))]
		}
		text := `{"type":` + typ + `,"ts":` + strconv.Itoa(ts)
		ts += r.IntN(3)
		for _, k := range order[:len(order)-r.IntN(30)/29] {
			text += "," + k + ":" + values[r.IntN(len(values))]
		}
		text += "}\n"
		pad := roomy[:r.IntN(len(roomy)+1)]
		buf := inBuffer(text, pad)
		e, ok, ferr := fr.fastLine(fast, buf, line)
		if !ok {
			e, ferr = fr.event(fast, buf, line)
		}
		se, serr := sr.event(slow, buf, line)
		if got, want := render(fast, e, ferr), render(slow, se, serr); got != want {
			t.Fatalf("%q: %s, want %s", text, got, want)
		}
	}
}

// TestParseSimpleRandom reads random lines with parseSimple and with the
// general scanner: what parseSimple reads (floats included, so that a line
// of floats gets a shape for fastLine) must be what the scanner reads, bit
// for bit.
func TestParseSimpleRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	values := []string{"0", "-0", "-1", "12345678", "1234567890123456789", "99999999999999999999", "01", "01.5", "-01",
		"2.5", "-0.125", "0.1", "123456789.0123456", "1e3", "1E-2", "-1.5e+2", "1e999", "-1e999", "1e-999", "0.0", "-0.0",
		"1.", ".5", "1e", "-", `"abc"`, `""`, "true", "false", "null"}
	keys := []string{`"x"`, `"y"`, `"z"`}
	sb, gb := newBuilder("t.jsonl", Options{}), newBuilder("t.jsonl", Options{})
	var sr, gr jsonRecord
	read := func(b *builder, rec *jsonRecord) string {
		out := fmt.Sprintf("%q %v %q %v", rec.typ, rec.hasTyp, rec.ts, rec.hasTS)
		for i, slot := range rec.slots {
			v := rec.values[i]
			out += fmt.Sprintf(" %s=%s:%s:%x", b.schema.Attrs[slot], v, v.Kind(), math.Float64bits(v.Float()))
		}
		return out
	}
	floats := 0
	for line := 1; line < 20_000; line++ {
		text := `{"type":"A","ts":` + strconv.Itoa(line)
		for _, k := range keys[:1+r.IntN(len(keys))] {
			text += "," + k + ":" + values[r.IntN(len(values))]
		}
		text += "}\n"
		if !sr.parseSimple([]byte(text), sb) {
			continue
		}
		if err := gr.parseGeneral([]byte(text), gb, line); err != nil {
			t.Fatalf("%q: parseSimple reads it, the scanner says %v", text, err)
		}
		if got, want := read(sb, &sr), read(gb, &gr); got != want {
			t.Fatalf("%q:\nsimple  %s\ngeneral %s", text, got, want)
		}
		if strings.ContainsAny(text, ".eE") {
			floats++
		}
	}
	if floats == 0 {
		t.Fatal("parseSimple read no line with a float")
	}
}

// TestFastRun checks the lines a JSON Lines file's fast path reads
// straight from its read buffer against the same file read a line a Read,
// where every line is framed first (see checkFastRun).
func TestFastRun(t *testing.T) {
	t.Parallel()
	lines := make([]string, 30_000) // over a megabyte: lines at a buffer's end
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"type":"t%d","ts":%d,"a":%d,"s":"%s"}`, i%3, i, i*7, strings.Repeat("x", i%23))
	}
	longest := len(slices.MaxFunc(lines, func(a, b string) int { return len(a) - len(b) }))
	checkFastRun(t, LoadJSONL, "f.jsonl", lines, []fastRunCase{
		{name: "other keys", line: `{"ts":TS,"type":"t1","b":true}`},
		{name: "escape and newline in a string", line: `{"type":"t1","ts":TS,"a":2,"s":"a\nb"}`},
		{name: "a number that goes on", line: `{"type":"t1","ts":TS,"a":2.5e3,"s":""}`},
		{name: "trailing bytes", line: `{"type":"t1","ts":TS,"a":2,"s":""} `},
		{name: "bad line", line: `{"type":"t1","ts":TS,"a":2,"s":"x"`, wantErr: "f.jsonl:25001:"},
		{name: "bad timestamp", line: `{"type":"t1","ts":-1,"a":2,"s":"x"}`, wantErr: "f.jsonl:25001:"},
		{name: "line at the limit", opts: Options{MaxLine: longest}},
		{name: "line over the limit", line: `{"type":"t1","ts":TS,"a":2,"s":"` + strings.Repeat("x", longest) + `"}`, opts: Options{MaxLine: longest}, wantErr: "f.jsonl:25001: line longer than"},
	})
}

// TestFastRunKinds is TestFastRun for lines whose attributes are all
// integers, which the schema's tally takes by the shape's name for their
// kinds, and lines of the same shape but of other kinds among them.
func TestFastRunKinds(t *testing.T) {
	t.Parallel()
	lines := make([]string, 30_000)
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"type":"t%d","ts":%d,"a":%d,"b":-%d}`, i%3, i, i*7, i%1000)
	}
	checkFastRun(t, LoadJSONL, "f.jsonl", lines, []fastRunCase{
		{name: "a float", line: `{"type":"t1","ts":TS,"a":2.5,"b":1}`},
		{name: "a string", line: `{"type":"t1","ts":TS,"a":2,"b":"x"}`},
		{name: "a bool", line: `{"type":"t1","ts":TS,"a":true,"b":1}`},
		{name: "a long integer", line: `{"type":"t1","ts":TS,"a":12345678901234567,"b":1}`},
		{name: "a string timestamp", line: `{"type":"t1","ts":"TS","a":2,"b":1}`},
	})
}

// fastRunCase is lines with line, if not "", in place of lines 25001 and
// 29001 (TS there their timestamp), loaded with opts.
type fastRunCase struct {
	name, line string
	opts       Options
	wantErr    string // a part of the error, "" for none
}

// checkFastRun checks a loader's fast path, which reads lines straight
// from its read buffer, against the same input read a line a Read, where
// every line is framed first: the same events, typed alike, the same
// schema, the same error on the same line, whatever the reads' sizes and
// wherever a line falls in the read buffer. lines (those of a CSV file
// its header first) with their '\n', without the last one's, with \r\n
// and with blank lines are cases of their own.
func checkFastRun(t *testing.T, loader func(io.Reader, string, Options) (*event.Stream, error), name string, lines []string, cases []fastRunCase) {
	edit := func(f func(i int, l string) string) string {
		var b strings.Builder
		for i, l := range lines {
			b.WriteString(f(i, l))
		}
		return b.String()
	}
	type input struct {
		name, in string
		fastRunCase
	}
	inputs := []input{
		{name: "plain", in: edit(func(_ int, l string) string { return l + "\n" })},
		{name: "last line without its newline", in: strings.Join(lines, "\n")},
		{name: "crlf", in: edit(func(i int, l string) string { return l + "\r\n"[i%3/2:] })},
		{name: "blank lines", in: edit(func(i int, l string) string { return l + "\n" + []string{"", "\n", "\r\n", "\n\n"}[i%4] })},
	}
	for _, tc := range cases {
		inputs = append(inputs, input{name: tc.name, fastRunCase: tc, in: edit(func(i int, l string) string {
			if tc.line != "" && (i == 25_000 || i == 29_000) {
				l = strings.ReplaceAll(tc.line, "TS", strconv.Itoa(i))
			}
			return l + "\n"
		})})
	}
	load := func(r io.Reader, opts Options) ([]string, error) {
		s, err := loader(r, name, opts)
		if err != nil {
			return nil, err
		}
		out := canonAll(s)
		for _, ty := range s.Schema.Types {
			out = append(out, fmt.Sprintf("%+v", *ty))
		}
		return append(out, s.Schema.Attrs...), nil
	}
	for _, tc := range inputs {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each input is read on its own
			want, werr := load(OneLineReader(tc.in), tc.opts)
			if tc.wantErr == "" && werr != nil || tc.wantErr != "" && (werr == nil || !strings.Contains(werr.Error(), tc.wantErr)) {
				t.Fatalf("framed: error %v, want %q", werr, tc.wantErr)
			}
			readers := []io.Reader{strings.NewReader(tc.in), &chunky{r: rand.New(rand.NewPCG(1, 2)), buf: []byte(tc.in)}, &cutAfter{s: tc.in, c: lines[1][len(lines[1])-1]}}
			for _, r := range readers {
				got, err := load(r, tc.opts)
				if fmt.Sprint(err) != fmt.Sprint(werr) {
					t.Fatalf("%T: error %v, want %v", r, err, werr)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%T: %d events and schema lines differ from the framed %d", r, len(got), len(want))
				}
			}
		})
	}
}

// cutAfter reads s a piece a Read, each up to and including the next c:
// a line's last byte at the end of its read buffer, its '\n' not yet read.
type cutAfter struct {
	s string
	c byte
}

func (r *cutAfter) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := strings.IndexByte(r.s[1:], r.c) + 2
	if n == 1 || n > len(p) {
		n = min(len(r.s), len(p))
	}
	n = copy(p, r.s[:n])
	r.s = r.s[n:]
	return n, nil
}
