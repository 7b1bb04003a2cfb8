package source

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sase-cep/sase/event"
)

// inBuffer returns text as a line of a read buffer: followed by pad (what
// the buffer holds after the line), its capacity the buffer's end.
func inBuffer(text, pad string) []byte {
	buf := []byte(text + pad)
	return buf[:len(text):len(buf)]
}

// roomy is what follows a line in the middle of a read buffer: more
// digits, which must not be read as the line's.
const roomy = "9876543210987654321"

// csvPair is a layout over a builder each for fastEvent and for split and
// event, on the same header; with live set, the fast side reads its lines
// as a live CSV source does (csvLines, which reads a line with fastEvent
// where it can).
type csvPair struct {
	fast, slow   *builder
	lfast, lslow *csvLayout
	live         *csvLines
}

func newCSVPair(t *testing.T, header ...string) *csvPair {
	t.Helper()
	p := &csvPair{fast: newBuilder("t.csv", Options{}), slow: newBuilder("t.csv", Options{})}
	var err error
	if p.lfast, err = newCSVLayout(p.fast, header, 1); err != nil {
		t.Fatal(err)
	}
	p.lslow, _ = newCSVLayout(p.slow, header, 1)
	return p
}

// read reads a line (followed in its read buffer by pad) both ways, as
// csvFile.record does, and returns both renderings and whether fastEvent
// read it.
func (p *csvPair) read(text, pad string, line int) (got, want string, fast bool) {
	render := func(b *builder, e *event.Event, err error) string {
		switch {
		case err != nil:
			return "error " + err.Error()
		case e.IsTick():
			return fmt.Sprintf("tick %d", e.TS)
		}
		var attrs []string
		for slot, v := range e.Attrs {
			attrs = append(attrs, fmt.Sprintf("%s=%s:%s", b.schema.Attrs[slot], v, v.Kind()))
		}
		return fmt.Sprintf("%s@%d %v", b.schema.Types[e.Type].Name, e.TS, attrs)
	}
	general := func(b *builder, l *csvLayout, buf []byte) string {
		rec, _ := split(nil, buf, ',')
		if len(rec) != l.width {
			return render(b, nil, l.fieldCount(b, len(rec), line))
		}
		e, err := l.event(b, rec, line)
		return render(b, e, err)
	}
	buf := inBuffer(text, pad)
	if p.live != nil {
		p.live.layout, p.live.cr.FieldsPerRecord = p.lfast, p.lfast.width // as its header would set them
		e, err := p.live.decode(p.fast, inBuffer(text+"\n", pad), line)
		got = render(p.fast, e, err)
		if strings.Contains(text, `"`) { // encoding/csv's on both sides: fastEvent refuses it
			ref := newCSVLines()
			ref.layout, ref.cr.FieldsPerRecord = p.lslow, p.lslow.width
			e, err := ref.decode(p.slow, []byte(text+"\n"), line)
			return got, render(p.slow, e, err), false
		}
		return got, general(p.slow, p.lslow, buf), false
	}
	e, fast, err := p.lfast.fastEvent(p.fast, buf, ',', line)
	if fast {
		got = render(p.fast, e, err)
	} else {
		got = general(p.fast, p.lfast, buf)
	}
	return got, general(p.slow, p.lslow, buf), fast
}

// TestFastEventCells reads one cell at a time both ways: integers are
// read eight digits at a time, and must come out as parseCell reads them.
func TestFastEventCells(t *testing.T) {
	p := newCSVPair(t, "type", "ts", "x")
	for n, tc := range []struct {
		cell, pad string
		fast      bool
	}{
		{"0", roomy, true},
		{"7", roomy, true},
		{"-7", roomy, true},
		{"+7", roomy, true},
		{"-0", roomy, true},
		{"007", roomy, true},
		{"12345678", roomy, true},          // one word, all digits
		{"123456789", roomy, true},         // into the second word
		{"1234567890123456", roomy, true},  // both words
		{"-9999999999999999", roomy, true}, // 16 digits and a sign
		{"12345678901234567", roomy, true}, // 17 digits: parseCell's
		{"123456789012345678901", roomy, true},
		{"12345678901234567", "", false}, // the buffer ends: split's
		{"1234567890123456", "7" + roomy, true},
		{"", roomy, true}, // empty: absent, not 0
		{"-", roomy, true},
		{"+", roomy, true},
		{"1.5", roomy, true},
		{"1e3", roomy, true},
		{" 1", roomy, true},
		{"1 ", roomy, true},
		{"1/", roomy, true}, // the bytes either side of the digits
		{"1:", roomy, true},
		{"/1", roomy, true},
		{"abc", roomy, true},
		{"abcdefgh", roomy, true}, // a word, then the line's end
		{"abcdefghijklmnopq", roomy, true},
		{"--1", roomy, true},
		{"true", roomy, true},
		{"x\xff", roomy, true},
		{"1;2", roomy, true}, // not the separator
		{"1,", roomy, false}, // a field more
		{"\"1\"", roomy, false},
		{"1\"", roomy, false},
		{"abcdefg\"", roomy, false},
		{"abcdefgh\"", roomy, false},
	} {
		got, want, fast := p.read("A,"+strconv.Itoa(n)+","+tc.cell, tc.pad, n+2)
		if got != want || fast != tc.fast {
			t.Errorf("cell %q: %s (fast %v), want %s (fast %v)", tc.cell, got, fast, want, tc.fast)
		}
	}
}

// TestFastEventDigits checks every length of digits, and every digit in
// every position, in the middle of a line and at its end.
func TestFastEventDigits(t *testing.T) {
	p := newCSVPair(t, "type", "x", "ts")
	line := 2
	for n := 1; n <= 17; n++ {
		for d := '0'; d <= '9'; d++ {
			for pos := range n {
				digits := []byte(strings.Repeat("3", n))
				digits[pos] = byte(d)
				for _, text := range []string{"A," + string(digits) + ",1", "A,1," + string(digits)} {
					got, want, fast := p.read(text, roomy, line)
					line++
					if got != want || !fast {
						t.Fatalf("%q: %s (fast %v), want %s", text, got, fast, want)
					}
				}
			}
		}
	}
}

func TestCellEnd(t *testing.T) {
	for _, tc := range []struct {
		text   string
		i      int
		end    int
		quoted bool
	}{
		{"", 0, 0, false},
		{"abc", 0, 3, false},
		{"abc,d", 0, 3, false},
		{"abc,d", 4, 5, false},
		{",", 0, 0, false},
		{"a\"b", 0, 1, true},
		{"abcdefghij,k", 0, 10, false}, // past the first word
		{"abcdefgh,\"", 0, 8, false},   // a quote after the comma is the next field's
		{"abcdefghi\"j,", 0, 9, true},
		{"abc\"efgh,", 0, 3, true},  // in the word, before the comma
		{"abc,efg\"", 0, 3, false},  // in the word, after it
		{"abcdefg\",", 0, 7, true},  // the last byte of the word
		{"a;b,c", 0, 3, false},      // ';' is a byte like any other
		{"a\rb,c", 0, 3, false},     // so is a lone \r
		{"é,x", 0, len("é"), false}, // and UTF-8
		{"0123456789abcdefg", 3, 17, false},
	} {
		end, quoted := cellEnd([]byte(tc.text), tc.i, ',')
		if end != tc.end || quoted != tc.quoted {
			t.Errorf("cellEnd(%q, %d) = %d, %v; want %d, %v", tc.text, tc.i, end, quoted, tc.end, tc.quoted)
		}
	}
}

// TestFastEvent reads lines in place (fastEvent) and through split and
// event, each with its own builder, and checks that the two agree on
// every event and error, and that each line takes the path it should: a
// fast path that took a line it must not, or refused one it can read,
// fails here.
func TestFastEvent(t *testing.T) {
	header := []string{"type", "ts", "i", "f", "s"}
	lines := []struct {
		text string
		pad  string // what follows in the buffer
		fast bool
	}{
		{"A,1,2,3,4", roomy, true},
		{"A,1,-2,+3,0", roomy, true},
		{"A,2,,,", roomy, true}, // empty cells are absent
		{"A,2,2.5,1e3,x", roomy, true},
		{"B,3,true,false,é", roomy, true}, // a new type
		{"B,3,abc,\xff\xfe,", roomy, true},
		{"B,4,12345678901234567,123456789012345678,-1234567890123456789", roomy, true}, // over 16 digits: parseCell
		{"B,5,9999999999999999999,1,1", roomy, true},                                   // over int64: a float
		{"\xffC,6,1,1,1", roomy, true},                                                 // a type name with invalid UTF-8
		{"A,7,1,2,3", "", false},                                                       // at the buffer's end: split's
		{"A,7,1,2,3", "\n", false},
		{"A,8,1,2", roomy, false},     // too few fields
		{"A,8,1,2,3,4", roomy, false}, // too many
		{"A,8,1,2,3,", roomy, false},
		{",9,,,", roomy, false},  // a punctuation
		{",9,1,,", roomy, false}, // an empty type
		{"A,9,\"x\",1,1", roomy, false},
		{"A,9,x\"y,1,1", roomy, false},
		{"A,5,1,1,1", roomy, true},   // before the previous ts: an error
		{"A,+10,1,1,1", roomy, true}, // a ts that is not canonical
		{"A,0012,1,1,1", roomy, true},
		{"A,11;1,1,1", roomy, false}, // a field short
		{"A,x,1,1,1", roomy, true},   // a bad ts
		{"A,2024-01-01T00:00:00Z,1,1,1", roomy, true},
	}
	p := newCSVPair(t, header...)
	for n, tc := range lines {
		got, want, fast := p.read(tc.text, tc.pad, n+2)
		if got != want || fast != tc.fast {
			t.Errorf("%q: %s (fast %v), want %s (fast %v)", tc.text, got, fast, want, tc.fast)
		}
	}
	fast, slow := p.fast, p.slow
	for i, want := range slow.schema.Types {
		if got := fast.schema.Types[i]; fmt.Sprintf("%+v", *got) != fmt.Sprintf("%+v", *want) {
			t.Errorf("type %+v, want %+v", *got, *want)
		}
	}
	if len(fast.schema.Types) != len(slow.schema.Types) {
		t.Errorf("%d types, want %d", len(fast.schema.Types), len(slow.schema.Types))
	}
}

// TestFastEventSparse reads a line whose header's columns leave a slot
// of the schema unset (a live source's producers send their own headers):
// the slot is absent, whatever the event given back by the line before
// held.
func TestFastEventSparse(t *testing.T) {
	b := newBuilder("t.csv", Options{})
	wide, err := newCSVLayout(b, []string{"type", "ts", "a", "b"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	narrow, err := newCSVLayout(b, []string{"type", "ts", "b"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, fast, _ := wide.fastEvent(b, inBuffer("A,1,7", roomy), ',', 2); fast {
		t.Fatal("a line a field short was read")
	}
	e, fast, err := narrow.fastEvent(b, inBuffer("A,2,5", roomy), ',', 3)
	if !fast || err != nil {
		t.Fatalf("fast %v, error %v", fast, err)
	}
	if len(e.Attrs) != 2 || !e.Attrs[0].IsAbsent() || !e.Attrs[1].Identical(event.IntValue(5)) {
		t.Errorf("attrs %v, want [absent 5]", e.Attrs)
	}
}

// TestFastEventRandom reads random lines both ways: cells of every kind,
// fields short and over a word, a quote, a field more or less now and
// then, in read buffers that end at the line or go on; as a file's lines,
// and as a live source's.
func TestFastEventRandom(t *testing.T) {
	t.Parallel()
	for _, live := range []bool{false, true} {
		t.Run(fmt.Sprint("live=", live), func(t *testing.T) { fastEventRandom(t, live) })
	}
}

func fastEventRandom(t *testing.T, live bool) {
	r := rand.New(rand.NewPCG(7, 8))
	cells := []string{"", "0", "-1", "+2", "12345678", "123456789012", "12345678901234567", "99999999999999999999",
		"2.5", "-0.125", "1e3", "abc", "abcdefghijk", "true", "false", " 7", "7 ", "é", "\xff", "a\rb", "\"q\"", "x\"y"}
	p := newCSVPair(t, "type", "ts", "a", "b", "c")
	if live {
		p.live = newCSVLines()
	}
	ts := 0
	for line := 2; line < 20_000; line++ {
		fields := []string{"AB"[r.IntN(2):][:1], strconv.Itoa(ts)}
		if r.IntN(50) == 0 {
			fields[0] = ""
		}
		ts += r.IntN(3)
		for range 3 + r.IntN(30)/29 - r.IntN(30)/29 {
			fields = append(fields, cells[r.IntN(len(cells))])
		}
		pad := roomy
		if r.IntN(4) == 0 {
			pad = roomy[:r.IntN(len(roomy))]
		}
		text := strings.Join(fields, ",")
		if got, want, _ := p.read(text, pad, line); got != want {
			t.Fatalf("%q: %s, want %s", text, got, want)
		}
	}
}

// TestDecimal checks decimal against strconv.ParseFloat, bit for bit, on
// what it reads (and that what it reads is a float to event.ParseCell),
// and that it refuses what it must leave to ParseFloat: table cases, then
// random decimals of up to 17 digits around the 15-digit limit.
func TestDecimal(t *testing.T) {
	check := func(text string, wantOK bool) {
		t.Helper()
		f, ok := decimal([]byte(text))
		if ok != wantOK {
			t.Fatalf("decimal(%q): ok %v, want %v", text, ok, wantOK)
		}
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(text, 64)
		if err != nil || math.Float64bits(f) != math.Float64bits(want) {
			t.Fatalf("decimal(%q) = %v (%x), want %v (%x)", text, f, math.Float64bits(f), want, math.Float64bits(want))
		}
		if v := event.ParseCell(text); v.Kind() != event.Float || math.Float64bits(v.Float()) != math.Float64bits(f) {
			t.Fatalf("decimal(%q) = %v, but ParseCell gives %v (%s)", text, f, v, v.Kind())
		}
	}
	for _, tc := range []struct {
		text string
		ok   bool
	}{
		{"2.5", true}, {"-0.125", true}, {"+3.75", true}, {"-0.0", true}, {"0.1", true}, {"123456789.012345", true},
		{"0.00000000000001", true}, {"0.000000000000001", false}, {"999999999999999.9", false}, // 16 digits
		{"1234567890123456.0", false}, {"1.", false}, {".5", false}, {"1", false}, {"1e3", false}, {"1.5e3", false},
		{"", false}, {"-", false}, {"+.", false}, {"1.2.3", false}, {"1,5", false}, {" 1.5", false}, {"1.5 ", false},
		{"--1.5", false}, {"0x1.8p1", false}, {"1_0.5", false}, {"NaN", false}, {"١.٥", false},
	} {
		check(tc.text, tc.ok)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200_000 {
		whole, frac := 1+r.IntN(9), 1+r.IntN(9)
		var b strings.Builder
		switch r.IntN(3) {
		case 0:
			b.WriteByte('-')
		case 1:
			b.WriteByte('+')
		}
		for range whole {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		b.WriteByte('.')
		for range frac {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		check(b.String(), whole+frac <= 15)
	}
}

// TestCSVFastRun checks the lines a CSV file's fast path reads straight
// from its read buffer against the same file read a line a Read, where
// every line is framed first (see checkFastRun).
func TestCSVFastRun(t *testing.T) {
	t.Parallel()
	lines := make([]string, 40_000) // over a megabyte: lines at a buffer's end
	lines[0] = "type,ts,a,s"
	for i := 1; i < len(lines); i++ {
		lines[i] = fmt.Sprintf("t%d,%d,%d,%s", i%3, i, i*7, strings.Repeat("x", i%23))
	}
	longest := len(slices.MaxFunc(lines, func(a, b string) int { return len(a) - len(b) }))
	checkFastRun(t, LoadCSV, "f.csv", lines, []fastRunCase{
		{name: "a quote", line: `t1,TS,2,"a,b"`},
		{name: "a decimal", line: "t1,TS,2.5,x"},
		{name: "a lone cr", line: "t1,TS,2,a\rb"},
		{name: "too few fields", line: "t1,TS,2", wantErr: "f.csv:25001:"},
		{name: "too many fields", line: "t1,TS,2,x,y", wantErr: "f.csv:25001:"},
		{name: "bad timestamp", line: "t1,-1,2,x", wantErr: "f.csv:25001:"},
		{name: "line at the limit", opts: Options{MaxLine: longest}},
		{name: "line over the limit", line: "t1,TS,2," + strings.Repeat("x", longest), opts: Options{MaxLine: longest}, wantErr: "f.csv:25001: line longer than"},
	})
}
