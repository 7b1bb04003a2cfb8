// Package event holds the data model shared by sources, planner and engines:
// values, events, schemas and streams.
package event

import (
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// Kind is the kind of a Value.
type Kind uint8

const (
	Absent Kind = iota // the event has no such attribute
	Int
	Float
	String
	Bool
)

func (k Kind) String() string {
	switch k {
	case Int:
		return "int"
	case Float:
		return "float"
	case String:
		return "string"
	case Bool:
		return "bool"
	}
	return "absent"
}

// Value is a small tagged value in two words: p, which says the kind, and
// n. Absent is the zero Value (p nil). An int, float or bool has p at its
// kind's tag (tags) and its bits in n (a float as its IEEE bits, a bool as
// 0 or 1); a string has p at its text and its length in n, the empty
// string the tag of its own. p stays a real pointer, so that a Value keeps
// a heap string's text alive wherever the collector scans it. No interface
// boxing on the hot path, and half the memory traffic of a kind, a word of
// bits and a string header.
//
// A Value is not comparable: == would compare a string's address, not its
// text. Equal compares as the language does, Identical by kind, bits and
// text, and Key makes a map key.
type Value struct {
	_ [0]func() // no ==: see above; first, so that it adds no padding
	p unsafe.Pointer
	n uint64
}

// tags are the kinds' tags, in the order of their kinds, so that a
// Value's kind is its p's offset from tags, plus one: str is the empty
// string's. (Fields, not an array: an address the inliner counts cheap.)
var tags struct{ int, float, str, bool byte }

const ntags = uintptr(unsafe.Sizeof(tags))

// tagOffset is p's offset from tags: below ntags for a tag only (a
// nil p, or a string's text, is elsewhere).
func tagOffset(p unsafe.Pointer) uintptr {
	return uintptr(p) - uintptr(unsafe.Pointer(&tags))
}

// IntValue, FloatValue, StringValue and BoolValue make values.
func IntValue(i int64) Value {
	return Value{p: unsafe.Pointer(&tags.int), n: uint64(i)}
}
func FloatValue(f float64) Value {
	return Value{p: unsafe.Pointer(&tags.float), n: math.Float64bits(f)}
}
func StringValue(s string) Value {
	if s == "" {
		return Value{p: unsafe.Pointer(&tags.str)}
	}
	return Value{p: unsafe.Pointer(unsafe.StringData(s)), n: uint64(len(s))}
}
func BoolValue(b bool) Value {
	if b {
		return Value{p: unsafe.Pointer(&tags.bool), n: 1}
	}
	return Value{p: unsafe.Pointer(&tags.bool)}
}

// Kind is the value's kind; IsInt, IsFloat, IsString and IsAbsent ask
// for one kind in one comparison (or two), which Kind() == k may not.
func (v Value) Kind() Kind {
	if d := tagOffset(v.p); d < ntags {
		return Kind(d + 1)
	}
	if v.p == nil {
		return Absent
	}
	return String
}

func (v Value) IsAbsent() bool { return v.p == nil }
func (v Value) IsInt() bool    { return v.p == unsafe.Pointer(&tags.int) }
func (v Value) IsFloat() bool  { return v.p == unsafe.Pointer(&tags.float) }
func (v Value) IsNumber() bool { return tagOffset(v.p) < 2 } // int's or float's tag
func (v Value) IsString() bool {
	return v.p != nil && (tagOffset(v.p) >= ntags || v.p == unsafe.Pointer(&tags.str))
}

// Int, Float and Bool are the value's bits as their kind's: meaningful
// for that kind only (a string's n is its length), save that Int of a
// bool is 0 or 1 and that Bool is false for anything absent, zero or a
// string.
func (v Value) Int() int64     { return int64(v.n) }
func (v Value) Float() float64 { return math.Float64frombits(v.n) }
func (v Value) Bool() bool     { return v.n != 0 && tagOffset(v.p) < ntags }

// Str is a string's text, "" for any other kind.
func (v Value) Str() string {
	if tagOffset(v.p) < ntags {
		return "" // a number's, a bool's or the empty string's tag
	}
	return unsafe.String((*byte)(v.p), v.n) // absent: nil, 0, which is ""
}

// Identical reports whether v and w are the same value: the same kind and
// bits, or the same text. Unlike Equal, 1 and 1.0 differ and NaN is
// itself; on the values PartitionKey returns the two agree, NaN aside.
func (v Value) Identical(w Value) bool {
	if v.p == w.p && v.n == w.n {
		return true
	}
	return v.n == w.n && v.IsString() && w.IsString() && v.Str() == w.Str()
}

// Key is a value as a comparable map key: two values' keys are == exactly
// when the values are Identical.
type Key struct {
	kind Kind
	bits uint64
	s    string
}

// Key returns v's key.
func (v Value) Key() Key {
	if tagOffset(v.p) < ntags || v.p == nil { // a tag (the empty string's too: its n is 0) or absent
		return Key{kind: v.Kind(), bits: v.n}
	}
	return Key{kind: String, s: unsafe.String((*byte)(v.p), v.n)}
}

// AsFloat returns a number as float64 (ints converted).
func (v Value) AsFloat() float64 {
	if v.IsInt() {
		return float64(int64(v.n))
	}
	return math.Float64frombits(v.n)
}

// Equal reports whether two present values are equal: numbers compare as
// numbers (1 = 1.0, exactly: 2^53+1 is not 2^53 as a float), values of
// different kinds are unequal, NaN is equal to nothing. Two absent values
// are equal, as their partition keys are.
func (v Value) Equal(w Value) bool {
	if v.p == w.p { // one kind, or one string's text
		if v.IsFloat() {
			return v.Float() == w.Float()
		}
		return v.n == w.n
	}
	if v.IsString() && w.IsString() {
		return v.Str() == w.Str()
	}
	if v.IsNumber() && w.IsNumber() {
		c, ok := v.Compare(w)
		return ok && c == 0
	}
	return false
}

// Compare orders two values of the same family: it returns -1, 0 or +1, and
// ok=false when they cannot be ordered (different kinds, NaN). An int and
// a float compare exactly, not by converting the int to a float.
func (v Value) Compare(w Value) (c int, ok bool) {
	vk, wk := v.Kind(), w.Kind()
	switch {
	case vk == Int && wk == Int:
		a, b := int64(v.n), int64(w.n)
		return cmp3(a < b, a > b), true
	case vk == Float && wk == Float:
		a, b := v.Float(), w.Float()
		if math.IsNaN(a) || math.IsNaN(b) {
			return 0, false
		}
		return cmp3(a < b, a > b), true
	case vk == Int && wk == Float:
		return compareIntFloat(v.Int(), w.Float())
	case vk == Float && wk == Int:
		c, ok := compareIntFloat(w.Int(), v.Float())
		return -c, ok
	case vk == String && wk == String:
		a, b := v.Str(), w.Str()
		return cmp3(a < b, a > b), true
	case vk == Bool && wk == Bool:
		return cmp3(v.n < w.n, v.n > w.n), true
	}
	return 0, false
}

// compareIntFloat orders i and f without rounding i to a float64, which
// would make every int near 2^60 equal to its float neighbour.
func compareIntFloat(i int64, f float64) (int, bool) {
	switch {
	case math.IsNaN(f):
		return 0, false
	case f >= 0x1p63:
		return -1, true
	case f < -0x1p63:
		return 1, true
	}
	t := math.Trunc(f) // in int64 range now
	if c := cmp3(i < int64(t), i > int64(t)); c != 0 {
		return c, true
	}
	return cmp3(f > t, f < t), true // i = trunc(f): the fraction decides
}

func cmp3(less, greater bool) int {
	if less {
		return -1
	}
	if greater {
		return 1
	}
	return 0
}

// String formats the value as it would be written in CSV.
func (v Value) String() string { return string(v.AppendText(nil)) }

// AppendText appends the value's text (a string unquoted, absent as "").
func (v Value) AppendText(b []byte) []byte {
	switch v.Kind() {
	case Int:
		return strconv.AppendInt(b, v.Int(), 10)
	case Float:
		return strconv.AppendFloat(b, v.Float(), 'g', -1, 64)
	case String:
		return append(b, v.Str()...)
	case Bool:
		return strconv.AppendBool(b, v.Bool())
	}
	return b
}

// AppendJSON appends the value as a JSON value (absent as null; a float
// that is not finite as null, since JSON has no such numbers).
func (v Value) AppendJSON(b []byte) []byte {
	switch v.Kind() {
	case Int:
		return strconv.AppendInt(b, v.Int(), 10)
	case Float:
		f := v.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return append(b, "null"...)
		}
		if f == math.Trunc(f) && math.Abs(f) < 1e15 {
			return strconv.AppendFloat(b, f, 'f', 1, 64)
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	case String:
		return AppendJSONString(b, v.Str())
	case Bool:
		return strconv.AppendBool(b, v.Bool())
	}
	return append(b, "null"...)
}

// ParseCell types a CSV cell (docs/LANGUAGE.md, "Events and streams"): int
// if [+-]?[0-9]+ and in range, else float if a plain decimal or exponent
// literal and finite, else exactly true/false, else string. An empty cell is
// absent.
func ParseCell(s string) Value {
	if s == "" {
		return Value{}
	}
	if isIntText(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return IntValue(i)
		}
	}
	if isFloatText(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return FloatValue(f)
		}
	}
	switch s {
	case "true":
		return BoolValue(true)
	case "false":
		return BoolValue(false)
	}
	return StringValue(s)
}

func isIntText(s string) bool {
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i = 1
	}
	if i == len(s) {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isFloatText accepts [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?.
func isFloatText(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// AppendJSONString appends s as a JSON string literal. Control characters
// are escaped and invalid UTF-8 becomes U+FFFD, as encoding/json does, so
// the output is always valid JSON.
func AppendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+n]...)
			}
			i += n
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}

// PartitionKey maps a value to a comparable key such that two values are
// Equal exactly when their keys are ==: an integral float becomes an int
// (2.0 and -0.0 key as 2 and 0). NaN, which no loader produces, is the
// exception: Equal to nothing, its key equals itself. (Ints compare with
// floats exactly, so an int beyond 2^53 is not Equal to the float it
// rounds to, and their keys differ too.)
func PartitionKey(v Value) Value {
	if v.IsFloat() {
		f := v.Float()
		if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
			return IntValue(int64(f))
		}
	}
	return v
}
