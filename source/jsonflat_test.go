package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/sase-cep/sase/event"
)

var (
	errNotObject = errors.New("not an object")
	errAnother   = errors.New("another value follows")
)

// scanMembers reads line with a flatScanner: its members rendered by
// member, up to and including a nested one, where it stops.
func scanMembers(line []byte) ([]string, error) {
	var s flatScanner
	v, ok, err := s.open(line)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s", errNotObject, v)
	}
	var out []string
	for {
		key, v, ok, err := s.next()
		if err != nil {
			return out, err
		}
		if !ok {
			break
		}
		if v.kind == flatNested {
			return append(out, fmt.Sprintf("%q=%s", key, v)), nil
		}
		out = append(out, member(string(key), v.value()))
	}
	another, err := s.rest()
	if another {
		return out, errAnother
	}
	return out, err
}

// refMembers reads line as the loader did before flatScanner, with
// encoding/json's token reader, into scanMembers' rendering.
func refMembers(line []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errNotObject
	}
	var out []string
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return out, err
		}
		// A nested object's opening ends the members, unread as the
		// scanner leaves it; any other value is read whole, an array
		// into its compacted text.
		rest := bytes.TrimLeft(line[dec.InputOffset():], " \t\r\n")
		if rest, ok := bytes.CutPrefix(rest, []byte(":")); ok && bytes.HasPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte("{")) {
			return append(out, fmt.Sprintf("%q={", key)), nil
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return out, err
		}
		var v event.Value
		switch raw[0] {
		case '[':
			var buf bytes.Buffer
			json.Compact(&buf, raw)
			v = event.StringValue(validUTF8(buf.String()))
		default:
			vd := json.NewDecoder(bytes.NewReader(raw))
			vd.UseNumber()
			var tok any
			if err := vd.Decode(&tok); err != nil {
				return out, err
			}
			switch tok := tok.(type) {
			case json.Number:
				lit := tok.String()
				if i, err := strconv.ParseInt(lit, 10, 64); err == nil && !strings.ContainsAny(lit, ".eE") {
					v = event.IntValue(i)
				} else {
					f, _ := strconv.ParseFloat(lit, 64)
					v = event.FloatValue(f)
				}
			case string:
				v = event.StringValue(tok)
			case bool:
				v = event.BoolValue(tok)
			}
		}
		out = append(out, member(key.(string), v))
	}
	if _, err := dec.Token(); err != nil {
		return out, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return out, errAnother
	}
	return out, nil
}

// member renders a key and value: strings quoted, other values with their
// kind; floats exactly, so that -0 shows.
func member(key string, v event.Value) string {
	switch v.Kind() {
	case event.Absent:
		return fmt.Sprintf("%q=null", key)
	case event.String:
		return fmt.Sprintf("%q=%q", key, v.Str())
	case event.Float:
		return fmt.Sprintf("%q=%s:float", key, strconv.FormatFloat(v.Float(), 'g', -1, 64))
	}
	return fmt.Sprintf("%q=%s:%s", key, v, v.Kind())
}

var flatCases = []struct {
	name, in string
	want     string // the members, then "!" and the error if any; a malformed line's error with its column
}{
	{"empty object", `{}`, ``},
	{"JSON whitespace", " \t{ \"a\" :\r1 ,\n\"b\"\t: true } \r\n", `"a"=1:int "b"=true:bool`},
	{"literals", `{"t":true,"f":false,"n":null}`, `"t"=true:bool "f"=false:bool "n"=null`},
	{"integers", `{"a":0,"b":-0,"c":42,"d":-17,"max":9223372036854775807,"min":-9223372036854775808}`,
		`"a"=0:int "b"=0:int "c"=42:int "d"=-17:int "max"=9223372036854775807:int "min"=-9223372036854775808:int`},
	{"huge integers are floats", `{"a":9223372036854775808,"b":-9223372036854775809,"c":100000000000000000000,"d":12345678901234567890123}`,
		`"a"=9.223372036854776e+18:float "b"=-9.223372036854776e+18:float "c"=1e+20:float "d"=1.2345678901234568e+22:float`},
	{"floats", `{"a":1.0,"b":1e3,"c":1E+2,"d":-1.5e-2,"e":-0.0,"f":0.5,"g":-0e0,"h":1e999,"i":-1e999,"j":1e-999}`,
		`"a"=1:float "b"=1000:float "c"=100:float "d"=-0.015:float "e"=-0:float "f"=0.5:float "g"=-0:float "h"=+Inf:float "i"=-Inf:float "j"=0:float`},
	{"escapes", `{"s":"q\"b\\s\/b\bf\fn\nr\rt\t"}`, `"s"="q\"b\\s/b\bf\fn\nr\rt\t"`},
	{"unicode escapes", `{"s":"\u00e9\u4E2D\u0000\u001f"}`, `"s"="é中\x00\x1f"`},
	{"surrogate pair", `{"s":"\ud83d\ude00!"}`, `"s"="😀!"`},
	{"lone high surrogate", `{"s":"\ud800x"}`, "\"s\"=\"\ufffdx\""},
	{"lone low surrogate", `{"s":"\udc00"}`, "\"s\"=\"\ufffd\""},
	{"high surrogate then no low one", `{"s":"\ud800\u0041"}`, "\"s\"=\"\ufffdA\""},
	{"two high surrogates then a low one", `{"s":"\ud800\ud800\udc00"}`, "\"s\"=\"\ufffd𐀀\""},
	{"raw unicode", `{"é":"中😀"}`, `"é"="中😀"`},
	{"invalid UTF-8 replaced", "{\"s\":\"a\xffb\xc3\",\"t\":\"\xed\xa0\x80\"}", "\"s\"=\"a\ufffdb\ufffd\" \"t\"=\"\ufffd\ufffd\ufffd\""},
	{"escaped key", `{"k\u0065y":1,"":2}`, `"key"=1:int ""=2:int`},
	{"nested object", `{"a":1,"o":{"x":1}}`, `"a"=1:int "o"={`},
	{"array kept as its text", `{"o":[ 1, "a" , {"b":[true, null]} ],"p":2}`, `"o"="[1,\"a\",{\"b\":[true,null]}]" "p"=2:int`},
	{"empty array", `{"o":[]}`, `"o"="[]"`},
	{"unclosed array", `{"o":[1,`, `!col 9: unexpected end of line in array`},
	{"bad array", `{"o":[1 2]}`, `!col 9: invalid character '2' after array element`},

	{"not an object: array", `[1]`, `!not an object: [1]`},
	{"not an object: string", `"s\n"`, `!not an object: "s\n"`},
	{"not an object: number", `-1.5`, `!not an object: -1.5`},
	{"not an object: null", `null`, `!not an object: null`},
	{"two objects", `{"a":1} {"b":2}`, `"a"=1:int !another value follows`},
	{"object then a string", `{}"x"`, `!another value follows`},
	{"trailing garbage", `{"a":1} x`, `"a"=1:int !col 9: invalid character 'x' after top-level value`},
	{"extra brace", `{"a":1}}`, `"a"=1:int !col 8: invalid character '}' after top-level value`},

	{"empty line", ``, `!col 1: unexpected end of line looking for beginning of value`},
	{"bad start", `x`, `!col 1: invalid character 'x' looking for beginning of value`},
	{"open brace only", `{`, `!col 2: unexpected end of line looking for beginning of object key string`},
	{"key only", `{"a"`, `!col 5: unexpected end of line after object key`},
	{"no value", `{"a":`, `!col 6: unexpected end of line looking for beginning of value`},
	{"unclosed", `{"a":1`, `"a"=1:int !col 7: unexpected end of line after object key:value pair`},
	{"trailing comma", `{"a":1,}`, `"a"=1:int !col 8: invalid character '}' looking for beginning of object key string`},
	{"leading comma", `{,"a":1}`, `!col 2: invalid character ',' looking for beginning of object key string`},
	{"no colon", `{"a" 1}`, `!col 6: invalid character '1' after object key`},
	{"no comma", `{"a":1 "b":2}`, `"a"=1:int !col 8: invalid character '"' after object key:value pair`},
	{"unquoted key", `{a:1}`, `!col 2: invalid character 'a' looking for beginning of object key string`},
	{"single quotes", `{'a':1}`, `!col 2: invalid character '\'' looking for beginning of object key string`},
	{"leading zero", `{"a":01}`, `"a"=0:int !col 7: invalid character '1' after object key:value pair`},
	{"lone minus", `{"a":-}`, `!col 7: invalid character '}' in numeric literal`},
	{"no fraction digits", `{"a":1.}`, `!col 8: invalid character '}' after decimal point in numeric literal`},
	{"no exponent digits", `{"a":1e+}`, `!col 9: invalid character '}' in exponent of numeric literal`},
	{"plus sign", `{"a":+1}`, `!col 6: invalid character '+' looking for beginning of value`},
	{"bare fraction", `{"a":.5}`, `!col 6: invalid character '.' looking for beginning of value`},
	{"hex number", `{"a":0x1}`, `"a"=0:int !col 7: invalid character 'x' after object key:value pair`},
	{"NaN", `{"a":NaN}`, `!col 6: invalid character 'N' looking for beginning of value`},
	{"short literal", `{"a":tru}`, `!col 9: invalid character '}' in literal true (expecting 'e')`},
	{"capital literal", `{"a":True}`, `!col 6: invalid character 'T' looking for beginning of value`},
	{"unterminated string", `{"a":"x`, `!col 8: unexpected end of line in string literal`},
	{"unterminated escaped string", `{"a":"\n`, `!col 9: unexpected end of line in string literal`},
	{"bad escape", `{"a":"\x"}`, `!col 8: invalid character 'x' in string escape code`},
	{"escape at the end", `{"a":"\`, `!col 8: unexpected end of line in string escape code`},
	{"short unicode escape", `{"a":"\u12"}`, `!col 11: invalid character '"' in \u hexadecimal character escape`},
	{"control character", "{\"a\":\"x\ty\"}", `!col 8: invalid character '\t' in string literal`},
	{"control character after an escape", "{\"a\":\"\\n\x01\"}", `!col 9: invalid character '\x01' in string literal`},
	{"non-ASCII space", "{\u00a0\"a\":1}", `!col 2: invalid character '\u00a0' looking for beginning of object key string`},
	{"invalid UTF-8 outside a string", "{\"a\":1,\xff}", "\"a\"=1:int !col 8: invalid character '\ufffd' looking for beginning of object key string"},
}

func TestFlatScanner(t *testing.T) {
	for _, tc := range flatCases {
		t.Run(tc.name, func(t *testing.T) {
			members, err := scanMembers([]byte(tc.in))
			valid := err == nil
			got := strings.Join(members, " ")
			if err != nil {
				if fe := (*flatError)(nil); errors.As(err, &fe) {
					err = fmt.Errorf("col %d: %s", fe.off+1, fe.msg)
				}
				got = strings.TrimSpace(got + " !" + err.Error())
			}
			if got != tc.want {
				t.Errorf("%s\n got %s\nwant %s", tc.in, got, tc.want)
			}
			// Whether a line is valid, and what it holds, is what
			// encoding/json finds.
			want, werr := refMembers([]byte(tc.in))
			if valid != (werr == nil) || strings.Join(members, " ") != strings.Join(want, " ") {
				t.Errorf("%s\nencoding/json: %q, %v", tc.in, want, werr)
			}
		})
	}
}

// FuzzJSONLine checks the scanner against encoding/json: the same lines
// are valid, with the same members and values. The loader runs on each
// line too, which must not panic.
func FuzzJSONLine(f *testing.F) {
	for _, tc := range flatCases {
		f.Add([]byte(tc.in))
	}
	for _, tc := range jsonlCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, err := scanMembers(line)
		want, werr := refMembers(line)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: scanner error %v, encoding/json error %v", line, err, werr)
		}
		if err == nil && strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("%q:\n scanner %q\nencoding/json %q", line, got, want)
		}
		var rec jsonRecord
		rec.event(newBuilder("f", Options{}), line, 1)
	})
}

// TestJSONLineAllocs guards the point of the scanner: once a line's type
// and keys have been seen, only a string value, and the timestamp text the
// builder keeps, allocate.
func TestJSONLineAllocs(t *testing.T) {
	for _, tc := range []struct {
		line string
		want float64
	}{
		{`{"type":"A","ts":1,"x":5,"y":1.5,"z":true,"n":null,"q":"\u00e9"}`, 2},
		{`{"ts":1,"type":"B","x":-3}`, 1},
	} {
		b := newBuilder("f", Options{})
		var rec jsonRecord
		got := testing.AllocsPerRun(100, func() {
			if _, err := rec.event(b, []byte(tc.line), 1); err != nil {
				t.Fatal(err)
			}
		})
		if got > tc.want {
			t.Errorf("%s: %v allocations, want %v", tc.line, got, tc.want)
		}
	}
}
