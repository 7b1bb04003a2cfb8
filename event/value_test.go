package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

var (
	nan     = FloatValue(math.NaN())
	posInf  = FloatValue(math.Inf(1))
	negInf  = FloatValue(math.Inf(-1))
	absent  = Value{}
	negZero = FloatValue(math.Copysign(0, -1))
)

func TestCompareAndEqual(t *testing.T) {
	const big = 1 << 53
	tests := []struct {
		v, w Value
		c    int
		ok   bool
	}{
		{IntValue(1), IntValue(2), -1, true},
		{IntValue(2), IntValue(2), 0, true},
		{IntValue(math.MaxInt64), IntValue(math.MinInt64), 1, true},
		{IntValue(1), FloatValue(1.0), 0, true},
		{IntValue(1), FloatValue(1.5), -1, true},
		{IntValue(2), FloatValue(1.5), 1, true},
		{IntValue(-1), FloatValue(-1.5), 1, true},
		{IntValue(-2), FloatValue(-1.5), -1, true},
		{negZero, IntValue(0), 0, true},
		{FloatValue(0), negZero, 0, true},
		// Exact beyond 2^53, where a float64 cannot tell the ints apart.
		{IntValue(big + 1), FloatValue(big), 1, true},
		{FloatValue(big), IntValue(big + 1), -1, true},
		{IntValue(big), FloatValue(big), 0, true},
		{IntValue(math.MaxInt64), FloatValue(0x1p63), -1, true},
		{IntValue(math.MinInt64), FloatValue(-0x1p63), 0, true},
		{IntValue(math.MinInt64), FloatValue(-0x1p64), 1, true},
		{IntValue(math.MaxInt64), posInf, -1, true},
		{IntValue(math.MinInt64), negInf, 1, true},
		{posInf, posInf, 0, true},
		{negInf, FloatValue(-1e308), -1, true},
		{nan, nan, 0, false},
		{nan, IntValue(1), 0, false},
		{IntValue(1), nan, 0, false},
		{StringValue("a"), StringValue("b"), -1, true},
		{StringValue("b"), StringValue("ab"), 1, true},
		{StringValue(""), StringValue(""), 0, true},
		{BoolValue(false), BoolValue(true), -1, true},
		{BoolValue(true), BoolValue(true), 0, true},
		{IntValue(1), StringValue("1"), 0, false},
		{BoolValue(true), IntValue(1), 0, false},
		{StringValue("x"), absent, 0, false},
		{absent, absent, 0, false},
	}
	for _, tt := range tests {
		c, ok := tt.v.Compare(tt.w)
		if c != tt.c || ok != tt.ok {
			t.Errorf("%v(%v).Compare(%v(%v)) = %d, %v; want %d, %v", tt.v.Kind(), tt.v, tt.w.Kind(), tt.w, c, ok, tt.c, tt.ok)
		}
		// Equal agrees with Compare, except that two absent values are equal.
		wantEq := tt.ok && tt.c == 0 || tt.v.IsAbsent() && tt.w.IsAbsent()
		if got := tt.v.Equal(tt.w); got != wantEq {
			t.Errorf("%v(%v).Equal(%v(%v)) = %v, want %v", tt.v.Kind(), tt.v, tt.w.Kind(), tt.w, got, wantEq)
		}
		if got := tt.w.Equal(tt.v); got != wantEq {
			t.Errorf("Equal is not symmetric for %v, %v", tt.v, tt.w)
		}
	}
}

// partitionValues covers every kind and the edges of the int/float key.
var partitionValues = []Value{
	absent, IntValue(0), IntValue(1), IntValue(-1), IntValue(1 << 53), IntValue(1<<53 + 1),
	IntValue(math.MaxInt64), IntValue(math.MinInt64),
	FloatValue(0), negZero, FloatValue(1), FloatValue(1.5), FloatValue(1 << 53),
	FloatValue(0x1p63), FloatValue(-0x1p63), FloatValue(1e300), posInf, negInf,
	StringValue(""), StringValue("1"), StringValue("a"), BoolValue(true), BoolValue(false),
}

func TestPartitionKey(t *testing.T) {
	for _, v := range partitionValues {
		for _, w := range partitionValues {
			if eq, same := v.Equal(w), PartitionKey(v).Key() == PartitionKey(w).Key(); eq != same {
				t.Errorf("%v(%v), %v(%v): Equal = %v but keys equal = %v", v.Kind(), v, w.Kind(), w, eq, same)
			}
		}
	}
	for _, tt := range []struct{ v, want Value }{
		{FloatValue(3), IntValue(3)},
		{negZero, IntValue(0)},
		{FloatValue(-0x1p63), IntValue(math.MinInt64)},
		{FloatValue(0x1p63), FloatValue(0x1p63)},
		{FloatValue(2.5), FloatValue(2.5)},
		{StringValue("3"), StringValue("3")},
	} {
		if got := PartitionKey(tt.v); !got.Identical(tt.want) {
			t.Errorf("PartitionKey(%v) = %v(%v), want %v(%v)", tt.v, got.Kind(), got, tt.want.Kind(), tt.want)
		}
	}
}

func TestAppendJSON(t *testing.T) {
	tests := []struct {
		v    Value
		want string
	}{
		{absent, `null`},
		{IntValue(-42), `-42`},
		{IntValue(math.MinInt64), `-9223372036854775808`},
		{FloatValue(3), `3.0`},
		{negZero, `-0.0`},
		{FloatValue(2.5), `2.5`},
		{FloatValue(1e15), `1e+15`},
		{FloatValue(1e-7), `1e-07`},
		{FloatValue(123456789.125), `1.23456789125e+08`}, // shortest form, as strconv writes it
		{FloatValue(math.MaxFloat64), `1.7976931348623157e+308`},
		{FloatValue(math.SmallestNonzeroFloat64), `5e-324`},
		{nan, `null`},
		{posInf, `null`},
		{negInf, `null`},
		{BoolValue(true), `true`},
		{BoolValue(false), `false`},
		{StringValue(""), `""`},
		{StringValue(`say "hi" \ bye`), `"say \"hi\" \\ bye"`},
		{StringValue("tab\there\nnew\rret"), `"tab\there\nnew\rret"`},
		{StringValue("\x00\x01\x1b\x1f\x7f"), `"\u0000\u0001\u001b\u001f` + "\x7f" + `"`},
		{StringValue("héllo, 世界 😀"), `"héllo, 世界 😀"`},
		{StringValue("bad \xff byte, cut \xe4\xb8"), `"bad \ufffd byte, cut \ufffd\ufffd"`},
		{StringValue("\u2028"), "\"\u2028\""},
	}
	for _, tt := range tests {
		got := string(tt.v.AppendJSON([]byte("x")))
		if got != "x"+tt.want {
			t.Errorf("AppendJSON(%v %q) = %s, want x%s", tt.v.Kind(), tt.v, got, tt.want)
			continue
		}
		got = got[1:]
		if !json.Valid([]byte(got)) || !utf8.ValidString(got) {
			t.Errorf("AppendJSON(%q) = %s is not valid JSON", tt.v, got)
		}
		// A finite value reads back as itself.
		if f := tt.v.Float(); tt.v.Kind() == Float && !math.IsInf(f, 0) && !math.IsNaN(f) {
			var back float64
			if err := json.Unmarshal([]byte(got), &back); err != nil || back != f {
				t.Errorf("%s reads back as %v, %v", got, back, err)
			}
		}
		if tt.v.Kind() == String && utf8.ValidString(tt.v.Str()) {
			var back string
			if err := json.Unmarshal([]byte(got), &back); err != nil || back != tt.v.Str() {
				t.Errorf("%s reads back as %q, %v", got, back, err)
			}
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\x00\xff\xe4\xb8", "世界"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendJSONString(nil, s)
		var back string
		if !utf8.Valid(out) || json.Unmarshal(out, &back) != nil {
			t.Fatalf("%q: invalid JSON %s", s, out)
		}
		// Each invalid byte reads back as U+FFFD, as ranging over s gives.
		if want := string([]rune(s)); back != want {
			t.Fatalf("%q reads back as %q, want %q", s, back, want)
		}
	})
}

func TestAppendText(t *testing.T) {
	for _, tt := range []struct {
		v    Value
		want string
	}{
		{absent, ""},
		{IntValue(-7), "-7"},
		{FloatValue(3), "3"},
		{FloatValue(0.1), "0.1"},
		{FloatValue(1e21), "1e+21"},
		{StringValue("a,b"), "a,b"},
		{BoolValue(true), "true"},
	} {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("%v(%v).String() = %q, want %q", tt.v.Kind(), tt.v, got, tt.want)
		}
	}
}

func TestParseCell(t *testing.T) {
	tests := []struct {
		cell string
		want Value
	}{
		{"", absent},
		{"42", IntValue(42)},
		{"-7", IntValue(-7)},
		{"+7", IntValue(7)},
		{"007", IntValue(7)},
		{"9223372036854775807", IntValue(math.MaxInt64)},
		{"-9223372036854775808", IntValue(math.MinInt64)},
		{"9223372036854775808", FloatValue(9223372036854775808)}, // too big for an int
		{"3.25", FloatValue(3.25)},
		{"-.5", FloatValue(-0.5)},
		{"1.", FloatValue(1)},
		{"1e6", FloatValue(1e6)},
		{"1E-3", FloatValue(1e-3)},
		{"2.5e+2", FloatValue(250)},
		{"-0.0", negZero},
		{"true", BoolValue(true)},
		{"false", BoolValue(false)},
		{"True", StringValue("True")},
		{"TRUE", StringValue("TRUE")},
		{"1e999", StringValue("1e999")}, // not a finite float
		{"NaN", StringValue("NaN")},
		{"Inf", StringValue("Inf")},
		{"0x10", StringValue("0x10")},
		{"1_000", StringValue("1_000")},
		{"1e", StringValue("1e")},
		{"e5", StringValue("e5")},
		{".", StringValue(".")},
		{"+", StringValue("+")},
		{"-", StringValue("-")},
		{" 1", StringValue(" 1")},
		{"1 ", StringValue("1 ")},
		{"1.2.3", StringValue("1.2.3")},
		{"IBM", StringValue("IBM")},
	}
	for _, tt := range tests {
		got := ParseCell(tt.cell)
		same := got.Kind() == tt.want.Kind() && got.Equal(tt.want) &&
			(got.Kind() != Float || math.Signbit(got.Float()) == math.Signbit(tt.want.Float()))
		if !same {
			t.Errorf("ParseCell(%q) = %v(%v), want %v(%v)", tt.cell, got.Kind(), got, tt.want.Kind(), tt.want)
		}
	}
}

func TestKinds(t *testing.T) {
	var s KindSet
	if s.String() != "absent" || s.Has(Int) {
		t.Errorf("empty set: %v", s)
	}
	s = s.With(Float).With(Int).With(Float)
	if !s.Has(Int) || !s.Has(Float) || s.Has(String) || s.String() != "int|float" {
		t.Errorf("set: %v", s)
	}
	for k, name := range map[Kind]string{Absent: "absent", Int: "int", Float: "float", String: "string", Bool: "bool"} {
		if k.String() != name {
			t.Errorf("Kind(%d) = %s, want %s", k, k, name)
		}
	}
	for _, tt := range []struct {
		v    Value
		kind Kind
	}{{IntValue(1), Int}, {FloatValue(1), Float}, {StringValue(""), String}, {BoolValue(false), Bool}, {absent, Absent}} {
		if tt.v.Kind() != tt.kind || tt.v.IsAbsent() != (tt.kind == Absent) || tt.v.IsNumber() != (tt.kind == Int || tt.kind == Float) {
			t.Errorf("%v: kind %v", tt.v, tt.v.Kind())
		}
	}
	if IntValue(-3).AsFloat() != -3 || FloatValue(2.5).AsFloat() != 2.5 {
		t.Error("AsFloat")
	}
}

// TestNumberCompare compares ints with floats exactly, in agreement with
// PartitionKey: values equal exactly when their keys are equal.
func TestNumberCompare(t *testing.T) {
	i, f := IntValue, FloatValue
	for _, tc := range []struct {
		a, b Value
		want int
		ok   bool
	}{
		{i(1), f(1), 0, true},
		{i(1), f(1.5), -1, true},
		{i(2), f(1.5), 1, true},
		{i(-1), f(-1.5), 1, true},
		{i(-2), f(-1.5), -1, true},
		{i(1<<53 + 1), f(1 << 53), 1, true}, // the float the int rounds to
		{i(1<<53 - 1), f(1 << 53), -1, true},
		{i(math.MaxInt64), f(0x1p63), -1, true},
		{i(math.MinInt64), f(-0x1p63), 0, true},
		{i(math.MinInt64), f(-0x1p64), 1, true},
		{i(math.MinInt64 + 1), f(-0x1p63), 1, true},
		{i(0), f(math.Inf(1)), -1, true},
		{i(0), f(math.Inf(-1)), 1, true},
		{i(0), f(math.NaN()), 0, false},
		{f(1.5), f(2.5), -1, true},
		{i(3), i(2), 1, true},
	} {
		c, ok := tc.a.Compare(tc.b)
		if c != tc.want || ok != tc.ok {
			t.Errorf("Compare(%v, %v) = %d, %v; want %d, %v", tc.a, tc.b, c, ok, tc.want, tc.ok)
		}
		if c, ok := tc.b.Compare(tc.a); c != -tc.want || ok != tc.ok {
			t.Errorf("Compare(%v, %v) = %d, %v; want %d, %v", tc.b, tc.a, c, ok, -tc.want, tc.ok)
		}
		eq := tc.ok && tc.want == 0
		if tc.a.Equal(tc.b) != eq || tc.b.Equal(tc.a) != eq {
			t.Errorf("Equal(%v, %v) = %v, want %v", tc.a, tc.b, tc.a.Equal(tc.b), eq)
		}
		if keys := PartitionKey(tc.a).Key() == PartitionKey(tc.b).Key(); tc.ok && keys != eq {
			t.Errorf("PartitionKey(%v) == PartitionKey(%v) is %v, but Equal is %v", tc.a, tc.b, keys, eq)
		}
	}
}

// TestValueRoundTrip checks that every kind reads back what made it, its
// kind and only its kind's accessors, at the edges of each kind's range.
func TestValueRoundTrip(t *testing.T) {
	kinds := func(v Value) [5]bool {
		return [5]bool{v.IsAbsent(), v.IsInt(), v.IsFloat(), v.IsString(), v.IsNumber()}
	}
	check := func(v Value, k Kind) {
		t.Helper()
		want := [5]bool{k == Absent, k == Int, k == Float, k == String, k == Int || k == Float}
		if v.Kind() != k || kinds(v) != want {
			t.Errorf("%v: kind %v, Is* %v; want %v, %v", v, v.Kind(), kinds(v), k, want)
		}
		if k != String && v.Str() != "" {
			t.Errorf("%v(%v).Str() = %q, want \"\"", k, v, v.Str())
		}
	}
	var zero Value
	check(zero, Absent)
	if zero.Int() != 0 || zero.Bool() || zero.AppendText(nil) != nil || !zero.Equal(Value{}) {
		t.Errorf("the zero Value is not absent: %v", zero)
	}
	for _, i := range []int64{0, 1, -1, 1 << 53, math.MaxInt64, math.MinInt64} {
		v := IntValue(i)
		check(v, Int)
		if v.Int() != i || v.AsFloat() != float64(i) || v.Bool() != (i != 0) {
			t.Errorf("IntValue(%d): Int %d, AsFloat %g, Bool %v", i, v.Int(), v.AsFloat(), v.Bool())
		}
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1.5, -2.25, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN()} {
		v := FloatValue(f)
		check(v, Float)
		if math.Float64bits(v.Float()) != math.Float64bits(f) || math.Float64bits(v.AsFloat()) != math.Float64bits(f) {
			t.Errorf("FloatValue(%g) reads back %g", f, v.Float())
		}
	}
	for _, s := range []string{"", "a", "\x00", "héllo", strings.Repeat("z", 1<<16)} {
		v := StringValue(s)
		check(v, String)
		if v.Str() != s || v.Bool() || v.String() != s {
			t.Errorf("StringValue(%.10q): Str %.10q, Bool %v", s, v.Str(), v.Bool())
		}
	}
	for _, b := range []bool{false, true} {
		v := BoolValue(b)
		check(v, Bool)
		if v.Bool() != b || v.Str() != "" {
			t.Errorf("BoolValue(%v) reads back %v", b, v.Bool())
		}
	}
}

// TestValueStringsSurviveGC checks that a value alone keeps its string's
// text alive: heap strings, not an arena's, whose only reference is the
// value, read back after collections that reuse freed memory.
func TestValueStringsSurviveGC(t *testing.T) {
	text := func(i int) string { return fmt.Sprintf("v%d-%s", i, strings.Repeat("q", i%70)) }
	values := make([]Value, 5000)
	for i := range values {
		values[i] = StringValue(text(i)) // text(i) is referenced by the value only
	}
	one := StringValue(strings.Repeat("p", 1<<20)) // a local, on the stack or not
	for range 3 {
		runtime.GC()
		garbage := make([][]byte, 0, 1000)
		for range 1000 {
			garbage = append(garbage, bytes.Repeat([]byte{0xee}, 80))
		}
		runtime.KeepAlive(garbage)
	}
	for i, v := range values {
		if v.Str() != text(i) {
			t.Fatalf("value %d: %q, want %q", i, v.Str(), text(i))
		}
	}
	if s := one.Str(); len(s) != 1<<20 || strings.Trim(s, "p") != "" {
		t.Errorf("the long string lost its text")
	}
}

// TestIdenticalAndKey checks that Identical and Key compare strings by
// text, not address, and everything else by kind and bits: 1 and 1.0
// differ, NaN is itself, -0.0 is not 0.0.
func TestIdenticalAndKey(t *testing.T) {
	ab := "ab"
	twin := string([]byte("ab")) // the same text elsewhere
	if unsafe.StringData(ab) == unsafe.StringData(twin) {
		t.Fatal("the twin shares its text")
	}
	for _, tt := range []struct {
		v, w Value
		same bool
	}{
		{StringValue(ab), StringValue(twin), true},
		{StringValue(ab), StringValue(ab[:1]), false}, // one address, another length
		{StringValue(""), StringValue(string([]byte{})), true},
		{StringValue(""), absent, false},
		{StringValue(""), IntValue(0), false},
		{StringValue("a"), StringValue("b"), false},
		{IntValue(1), IntValue(1), true},
		{IntValue(1), FloatValue(1), false},
		{IntValue(1), BoolValue(true), false},
		{IntValue(0), absent, false},
		{BoolValue(false), absent, false},
		{nan, nan, true},
		{negZero, FloatValue(0), false},
		{posInf, posInf, true},
		{absent, Value{}, true},
	} {
		if got := tt.v.Identical(tt.w); got != tt.same || tt.w.Identical(tt.v) != tt.same {
			t.Errorf("%v(%v).Identical(%v(%v)) = %v, want %v", tt.v.Kind(), tt.v, tt.w.Kind(), tt.w, got, tt.same)
		}
		if got := tt.v.Key() == tt.w.Key(); got != tt.same {
			t.Errorf("%v(%v).Key() == %v(%v).Key() is %v, want %v", tt.v.Kind(), tt.v, tt.w.Kind(), tt.w, got, tt.same)
		}
	}
	// Equal, too, compares text: a string made twice is equal to itself.
	if !StringValue(ab).Equal(StringValue(twin)) || StringValue(ab).Equal(StringValue(ab[:1])) {
		t.Error("Equal compares strings by address")
	}
	if c, ok := StringValue(ab).Compare(StringValue(twin)); c != 0 || !ok {
		t.Errorf("Compare(ab, its twin) = %d, %v", c, ok)
	}
	m := map[Key]int{StringValue(ab).Key(): 1}
	if m[StringValue(twin).Key()] != 1 {
		t.Error("a map by Key finds a string by address")
	}
}
