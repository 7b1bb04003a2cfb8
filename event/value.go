// Package event holds the data model shared by sources, planner and engines:
// values, events, schemas and streams.
package event

import (
	"math"
	"strconv"
	"unicode/utf8"
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

// Value is a small tagged value. Numbers and bools live in bits (a float as
// its IEEE bits), strings in s; no interface boxing on the hot path.
type Value struct {
	kind Kind
	bits uint64
	s    string
}

// IntValue, FloatValue, StringValue and BoolValue make values.
func IntValue(i int64) Value     { return Value{kind: Int, bits: uint64(i)} }
func FloatValue(f float64) Value { return Value{kind: Float, bits: math.Float64bits(f)} }
func StringValue(s string) Value { return Value{kind: String, s: s} }
func BoolValue(b bool) Value {
	if b {
		return Value{kind: Bool, bits: 1}
	}
	return Value{kind: Bool}
}

func (v Value) Kind() Kind     { return v.kind }
func (v Value) IsAbsent() bool { return v.kind == Absent }
func (v Value) IsNumber() bool { return v.kind == Int || v.kind == Float }
func (v Value) Int() int64     { return int64(v.bits) }
func (v Value) Float() float64 { return math.Float64frombits(v.bits) }
func (v Value) Str() string    { return v.s }
func (v Value) Bool() bool     { return v.bits != 0 }

// AsFloat returns a number as float64 (ints converted).
func (v Value) AsFloat() float64 {
	if v.kind == Int {
		return float64(int64(v.bits))
	}
	return math.Float64frombits(v.bits)
}

// Equal reports whether two present values are equal: numbers compare as
// numbers (1 = 1.0, exactly: 2^53+1 is not 2^53 as a float), values of
// different kinds are unequal, NaN is equal to nothing. Two absent values
// are equal, as their partition keys are.
func (v Value) Equal(w Value) bool {
	if v.kind == w.kind {
		switch v.kind {
		case Float:
			return v.Float() == w.Float()
		case String:
			return v.s == w.s
		}
		return v.bits == w.bits
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
	switch {
	case v.kind == Int && w.kind == Int:
		a, b := int64(v.bits), int64(w.bits)
		return cmp3(a < b, a > b), true
	case v.kind == Float && w.kind == Float:
		a, b := v.Float(), w.Float()
		if math.IsNaN(a) || math.IsNaN(b) {
			return 0, false
		}
		return cmp3(a < b, a > b), true
	case v.kind == Int && w.kind == Float:
		return compareIntFloat(v.Int(), w.Float())
	case v.kind == Float && w.kind == Int:
		c, ok := compareIntFloat(w.Int(), v.Float())
		return -c, ok
	case v.kind == String && w.kind == String:
		return cmp3(v.s < w.s, v.s > w.s), true
	case v.kind == Bool && w.kind == Bool:
		return cmp3(v.bits < w.bits, v.bits > w.bits), true
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
	switch v.kind {
	case Int:
		return strconv.AppendInt(b, v.Int(), 10)
	case Float:
		return strconv.AppendFloat(b, v.Float(), 'g', -1, 64)
	case String:
		return append(b, v.s...)
	case Bool:
		return strconv.AppendBool(b, v.Bool())
	}
	return b
}

// AppendJSON appends the value as a JSON value (absent as null; a float
// that is not finite as null, since JSON has no such numbers).
func (v Value) AppendJSON(b []byte) []byte {
	switch v.kind {
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
		return AppendJSONString(b, v.s)
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
	if v.kind == Float {
		f := v.Float()
		if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
			return IntValue(int64(f))
		}
	}
	return v
}
