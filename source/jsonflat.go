package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sase-cep/sase/event"
)

// flatScanner reads a JSON object whose members are scalars, the only kind
// of line JSON Lines input may hold. It is hand-written because
// encoding/json's token reader allocates for nearly every token, which made
// JSON Lines loading ten times slower than CSV. It follows encoding/json:
// the same grammar and whitespace, and strings unescaped the same way
// (invalid UTF-8 and lone surrogates become U+FFFD). Keys and values are
// handed out as slices of the line, or of a scratch buffer when a string
// has escapes, valid until the next call.
type flatScanner struct {
	data   []byte
	pos    int
	first  bool   // no member read yet
	keyBuf []byte // a key's unescaped bytes: it is still needed after its value is read
	valBuf []byte
}

type flatKind uint8

const (
	flatString flatKind = iota
	flatNumber
	flatTrue
	flatFalse
	flatNull
	flatNested // an object, of which only the opening is read
	flatArray  // an array, read whole: its text compacted (no spaces)
)

// flatValue is a scalar, or the opening of a nested value.
type flatValue struct {
	kind flatKind
	text []byte // a string's unescaped bytes; otherwise the literal as written
}

// String renders v for error messages: strings quoted, the rest as written.
func (v flatValue) String() string {
	if v.kind == flatString {
		return strconv.Quote(string(v.text))
	}
	return string(v.text)
}

// value converts a scalar: a number is an int when written as an integer
// (no fraction or exponent) that fits int64, else a float; null is absent.
func (v flatValue) value() event.Value {
	switch v.kind {
	case flatString:
		return event.StringValue(string(v.text))
	case flatNumber:
		if i, ok := parseInt(v.text); ok {
			return event.IntValue(i)
		}
		if f, ok := decimal(v.text); ok {
			return event.FloatValue(f)
		}
		// The literal is valid JSON, so only a float64 overflow can fail:
		// such a number is the string written, as a CSV cell's is
		// (event.ParseCell), so both formats load the same events and no
		// loaded float is infinite.
		f, err := strconv.ParseFloat(string(v.text), 64)
		if err != nil {
			return event.StringValue(string(v.text))
		}
		return event.FloatValue(f)
	case flatArray:
		return event.StringValue(validUTF8(string(v.text)))
	case flatTrue:
		return event.BoolValue(true)
	case flatFalse:
		return event.BoolValue(false)
	}
	return event.Value{}
}

// parseInt reads a valid JSON number literal as an int64; ok is false if
// it has a fraction or an exponent or does not fit.
func parseInt(lit []byte) (i int64, ok bool) {
	digits := lit
	if lit[0] == '-' {
		digits = lit[1:]
	}
	if len(digits) > 19 { // more digits than math.MaxInt64 (and JSON forbids leading zeros)
		return 0, false
	}
	var n uint64 // 19 digits cannot overflow it
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if lit[0] == '-' {
		return -int64(n), n <= -math.MinInt64
	}
	return int64(n), n <= math.MaxInt64
}

// flatError is malformed JSON at a byte offset of the scanned data.
type flatError struct {
	off int
	msg string
}

func (e *flatError) Error() string { return e.msg }

// open starts reading data. If it holds something other than an object,
// ok is false and v is that value (for the error message).
func (s *flatScanner) open(data []byte) (v flatValue, ok bool, err error) {
	s.data, s.pos, s.first = data, 0, true
	s.skipSpace()
	if s.peek() == '{' {
		s.pos++
		return flatValue{}, true, nil
	}
	v, err = s.value()
	return v, false, err
}

// next reads the next member of the object; ok is false after the closing
// brace. A nested value is returned as flatNested, unread.
func (s *flatScanner) next() (key []byte, v flatValue, ok bool, err error) {
	s.skipSpace()
	switch c := s.peek(); {
	case c == '}':
		s.pos++
		return nil, v, false, nil
	case s.first:
		s.first = false
	case c == ',':
		s.pos++
		s.skipSpace()
	default:
		return nil, v, false, s.unexpected("after object key:value pair")
	}
	if s.peek() != '"' {
		return nil, v, false, s.unexpected("looking for beginning of object key string")
	}
	if key, err = s.str(&s.keyBuf); err != nil {
		return nil, v, false, err
	}
	s.skipSpace()
	if s.peek() != ':' {
		return nil, v, false, s.unexpected("after object key")
	}
	s.pos++
	s.skipSpace()
	v, err = s.value()
	return key, v, err == nil, err
}

// rest reports what follows the object: nothing (whitespace aside), the
// start of another value, or an error for anything else.
func (s *flatScanner) rest() (another bool, err error) {
	s.skipSpace()
	switch c := s.peek(); {
	case s.pos == len(s.data):
		return false, nil
	case c == '{' || c == '[' || c == '"' || c == '-' || isDigit(c) || c == 't' || c == 'f' || c == 'n':
		return true, nil
	}
	return false, s.unexpected("after top-level value")
}

func (s *flatScanner) value() (flatValue, error) {
	switch c := s.peek(); {
	case c == '"':
		text, err := s.str(&s.valBuf)
		return flatValue{flatString, text}, err
	case c == '-' || isDigit(c):
		return s.number()
	case c == 't':
		return s.literal("true", flatTrue)
	case c == 'f':
		return s.literal("false", flatFalse)
	case c == 'n':
		return s.literal("null", flatNull)
	case c == '{':
		s.pos++
		return flatValue{flatNested, s.data[s.pos-1 : s.pos]}, nil
	case c == '[':
		return s.array()
	}
	return flatValue{}, s.unexpected("looking for beginning of value")
}

// array reads an array whole, with encoding/json: arrays are rare, and
// kept as their text (compacted: a string attribute, not a value to
// take apart).
func (s *flatScanner) array() (flatValue, error) {
	dec := json.NewDecoder(bytes.NewReader(s.data[s.pos:]))
	var raw json.RawMessage
	err := dec.Decode(&raw)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return flatValue{}, &flatError{s.pos + int(se.Offset) - 1, se.Error()}
	case err != nil: // the line ends within the array
		return flatValue{}, &flatError{len(s.data), "unexpected end of line in array"}
	}
	s.pos += int(dec.InputOffset())
	s.valBuf = s.valBuf[:0]
	buf := bytes.NewBuffer(s.valBuf)
	json.Compact(buf, raw) // valid: Decode read it
	s.valBuf = buf.Bytes()
	return flatValue{flatArray, s.valBuf}, nil
}

func (s *flatScanner) number() (flatValue, error) {
	start := s.pos
	if s.peek() == '-' {
		s.pos++
	}
	switch c := s.peek(); {
	case c == '0':
		s.pos++
	case isDigit(c):
		s.digits()
	default:
		return flatValue{}, s.unexpected("in numeric literal")
	}
	if s.peek() == '.' {
		s.pos++
		if !isDigit(s.peek()) {
			return flatValue{}, s.unexpected("after decimal point in numeric literal")
		}
		s.digits()
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.pos++
		if c := s.peek(); c == '+' || c == '-' {
			s.pos++
		}
		if !isDigit(s.peek()) {
			return flatValue{}, s.unexpected("in exponent of numeric literal")
		}
		s.digits()
	}
	return flatValue{flatNumber, s.data[start:s.pos]}, nil
}

func (s *flatScanner) digits() {
	for isDigit(s.peek()) {
		s.pos++
	}
}

func (s *flatScanner) literal(word string, kind flatKind) (flatValue, error) {
	start := s.pos
	for i := range len(word) {
		if s.peek() != word[i] {
			return flatValue{}, s.unexpected(fmt.Sprintf("in literal %s (expecting %q)", word, word[i]))
		}
		s.pos++
	}
	return flatValue{kind, s.data[start:s.pos]}, nil
}

// str reads a string and returns its contents: a slice of the line when
// they need no rewriting (the common case), else the unescaped bytes in
// *buf.
func (s *flatScanner) str(buf *[]byte) ([]byte, error) {
	s.pos++ // the opening quote
	start := s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return s.data[start : s.pos-1], nil
		case c == '\\' || c < ' ':
			return s.unescape(start, buf)
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(s.data[s.pos:])
			if r == utf8.RuneError && size == 1 {
				return s.unescape(start, buf)
			}
			s.pos += size
		default:
			s.pos++
		}
	}
	return nil, s.unexpected("in string literal")
}

// unescape finishes reading a string begun at start, which needs
// rewriting from s.pos on, as encoding/json unquotes it.
func (s *flatScanner) unescape(start int, buf *[]byte) ([]byte, error) {
	out := append((*buf)[:0], s.data[start:s.pos]...)
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			*buf = out // keep a grown buffer for the next string
			return out, nil
		case c < ' ':
			return nil, s.unexpected("in string literal")
		case c == '\\':
			s.pos++
			switch e := s.peek(); e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				s.pos++
				r, err := s.hex4()
				if err != nil {
					return nil, err
				}
				if utf16.IsSurrogate(r) {
					// Half a pair: take the next escape if it completes
					// the pair, else the half is invalid.
					d := utf16.DecodeRune(r, s.nextEscape())
					if d != utf8.RuneError {
						s.pos += 6
					}
					r = d
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return nil, s.unexpected("in string escape code")
			}
			s.pos++
		case c < utf8.RuneSelf:
			out = append(out, c)
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.data[s.pos:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, s.data[s.pos:s.pos+size]...)
			}
			s.pos += size
		}
	}
	return nil, s.unexpected("in string literal")
}

// hex4 reads the four hex digits of a \u escape.
func (s *flatScanner) hex4() (rune, error) {
	var r rune
	for range 4 {
		c := s.peek()
		switch {
		case isDigit(c):
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, s.unexpected("in \\u hexadecimal character escape")
		}
		r = r<<4 | rune(c)
		s.pos++
	}
	return r, nil
}

// nextEscape returns the rune of the \u escape at s.pos, without reading
// it, or -1 if there is none.
func (s *flatScanner) nextEscape() rune {
	if s.pos+6 > len(s.data) || s.data[s.pos] != '\\' || s.data[s.pos+1] != 'u' {
		return -1
	}
	save := s.pos
	s.pos += 2
	r, err := s.hex4()
	s.pos = save
	if err != nil {
		return -1
	}
	return r
}

// peek returns the byte at s.pos, or 0 at the end of the line; 0 is no
// valid byte anywhere it is used.
func (s *flatScanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *flatScanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// unexpected reports the byte at s.pos, or the end of the line, as
// malformed JSON; context says what was being read.
func (s *flatScanner) unexpected(context string) error {
	if s.pos >= len(s.data) {
		return &flatError{s.pos, "unexpected end of line " + context}
	}
	r, _ := utf8.DecodeRune(s.data[s.pos:])
	return &flatError{s.pos, "invalid character " + strconv.QuoteRune(r) + " " + context}
}
