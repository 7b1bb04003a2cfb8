package source

import (
	"fmt"
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

func TestPlainInt(t *testing.T) {
	for _, tc := range []struct {
		text, pad string
		i         int
		v         int64
		end       int
		ok        bool
	}{
		{"0", roomy, 0, 0, 1, true},
		{"7", roomy, 0, 7, 1, true},
		{"-7", roomy, 0, -7, 2, true},
		{"+7", roomy, 0, 7, 2, true},
		{"-0", roomy, 0, 0, 2, true},
		{"007", roomy, 0, 7, 3, true},
		{"12345678", roomy, 0, 12345678, 8, true},                    // one word, all digits
		{"123456789", roomy, 0, 123456789, 9, true},                  // into the second word
		{"1234567890123456", roomy, 0, 1234567890123456, 16, true},   // both words
		{"-9999999999999999", roomy, 0, -9999999999999999, 17, true}, // 16 digits and a sign
		{"12345678901234567", roomy, 0, 0, 0, false},                 // 17 digits: smallInt's
		{"12345678901234567", "", 0, 0, 0, false},                    // 17 digits, the last past the second word
		{"1234567890123456", "7", 0, 1234567890123456, 16, true},     // 16, and the buffer goes on
		{"12,34", roomy, 0, 12, 2, true},
		{"12,34", roomy, 3, 34, 5, true},
		{"a,12345678,b", roomy, 2, 12345678, 10, true},
		{"12;34", roomy, 0, 0, 0, false}, // not the separator
		{"", roomy, 0, 0, 0, false},      // empty: absent, not 0
		{"-", roomy, 0, 0, 0, false},
		{"+,", roomy, 0, 0, 0, false},
		{",", roomy, 0, 0, 0, false},
		{"1.5", roomy, 0, 0, 0, false},
		{"1e3", roomy, 0, 0, 0, false},
		{" 1", roomy, 0, 0, 0, false},
		{"1 ", roomy, 0, 0, 0, false},
		{"1/", roomy, 0, 0, 0, false}, // the bytes either side of the digits
		{"1:", roomy, 0, 0, 0, false},
		{"/1", roomy, 0, 0, 0, false},
		{"abc", roomy, 0, 0, 0, false},
		{"--1", roomy, 0, 0, 0, false},
		{"12", "\r\n", 0, 0, 0, false}, // the buffer's end is near: the caller reads a cell
		{"12", strings.Repeat("5", 13), 0, 0, 0, false},
		{"12", strings.Repeat("5", 14), 0, 12, 2, true},
	} {
		text := inBuffer(tc.text, tc.pad)
		v, end, ok := plainInt(text, tc.i, ',')
		if ok != tc.ok || ok && (v != tc.v || end != tc.end) {
			t.Errorf("plainInt(%q at %d) = %d, %d, %v; want %d, %d, %v", tc.text, tc.i, v, end, ok, tc.v, tc.end, tc.ok)
		}
		if ok {
			if want, _ := smallInt(text[tc.i:end]); want != v {
				t.Errorf("plainInt(%q at %d) = %d, smallInt says %d", tc.text, tc.i, v, want)
			}
		}
	}
}

// TestPlainIntDigits checks every length of digits against smallInt, and
// every digit in every position.
func TestPlainIntDigits(t *testing.T) {
	for n := 1; n <= 16; n++ {
		for d := '0'; d <= '9'; d++ {
			for pos := range n {
				digits := []byte(strings.Repeat("3", n))
				digits[pos] = byte(d)
				text := inBuffer(string(digits), ","+roomy)
				v, end, ok := plainInt(text, 0, ',')
				want, _ := smallInt(digits)
				if !ok || end != n || v != want {
					t.Fatalf("plainInt(%q) = %d, %d, %v; want %d", digits, v, end, ok, want)
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
		{"A,7,1,2,3", "", true},                                                        // at the buffer's end
		{"A,7,1,2,3", "\n", true},
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
	fast, slow := newBuilder("t.csv", Options{}), newBuilder("t.csv", Options{})
	lf, err := newCSVLayout(fast, header, 1)
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := newCSVLayout(slow, header, 1)
	render := func(b *builder, e *event.Event, err error) string {
		switch {
		case err != nil:
			return "error " + err.Error()
		case e.IsTick():
			return fmt.Sprintf("tick %d", e.TS)
		}
		return text(b.schema, e)
	}
	for n, tc := range lines {
		line := n + 2
		text := inBuffer(tc.text, tc.pad)
		e, ok, ferr := lf.fastEvent(fast, text, ',', line)
		if ok != tc.fast {
			t.Errorf("%q: fast path %v, want %v", tc.text, ok, tc.fast)
		}
		if !ok { // as csvFile.record goes on
			rec, _ := split(nil, text, ',')
			if len(rec) != lf.width {
				ferr = lf.fieldCount(fast, len(rec), line)
			} else {
				e, ferr = lf.event(fast, rec, line)
			}
		}
		rec, _ := split(nil, text, ',')
		var se *event.Event
		var serr error
		if len(rec) != ls.width {
			serr = ls.fieldCount(slow, len(rec), line)
		} else {
			se, serr = ls.event(slow, rec, line)
		}
		if got, want := render(fast, e, ferr), render(slow, se, serr); got != want {
			t.Errorf("%q: %s, want %s", tc.text, got, want)
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
