package source

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/sase-cep/sase/event"
)

// jsonShape is the shape of the last line parseSimple read whole, compiled
// for fastLine: its keys in order, each with the separator before it.
type jsonShape struct {
	keys     []shapeMatch
	n        int    // Attrs' length: 1 + the highest slot
	declared []bool // by type id: the shape's attributes are declared for the type
	long     bool   // a key is longer than two words: fastLine reads no line
	// kinds names the kinds of the events of lines whose attributes run
	// reads all (integers), for the schema's tally (event.Tally.AddKeyed):
	// the shape's own.
	kinds uint64
	dense bool // the keys set every slot below n
}

// shapeMatch is a key of a shape as its text, `{"key":` or `,"key":`,
// with its first sixteen bytes as two words and masks, to be compared
// with a line's in one go.
type shapeMatch struct {
	w, mask [2]uint64
	size    int // of the text
	// num says the key's value was an integer the last time (at first:
	// it is not the type's), which run then reads first.
	num  bool
	role int // roleType, roleTS or the attribute's slot, as a CSV column's
}

// compileShape makes rec.shape's first keys the shape fastLine matches.
func (rec *jsonRecord) compileShape(keys int) {
	sh := &rec.fast
	sh.keys, sh.n, sh.declared, sh.long = sh.keys[:0], 0, sh.declared[:0], false
	sh.kinds = shapeKinds.Add(1)
	for p, k := range rec.shape[:keys] {
		sep := byte(',')
		if p == 0 {
			sep = '{'
		}
		text := append([]byte{sep}, k.text...)
		sh.long = sh.long || len(text) > 16
		m := shapeMatch{size: len(text), role: k.slot, num: k.role != keyType}
		switch k.role {
		case keyType:
			m.role = roleType
		case keyTS:
			m.role = roleTS
		}
		for b, c := range text[:min(len(text), 16)] {
			m.w[b/8] |= uint64(c) << (8 * (b % 8))
			m.mask[b/8] |= 0xff << (8 * (b % 8))
		}
		if k.role == keyAttr {
			sh.n = max(sh.n, k.slot+1)
		}
		sh.keys = append(sh.keys, m)
	}
	var slots []int
	for _, k := range sh.keys {
		if k.role >= 0 {
			slots = append(slots, k.role)
		}
	}
	sh.dense = coversSlots(sh.n, slots)
}

// shapeKinds numbers the compiled shapes' kinds (jsonShape.kinds) of all
// sources: a builder's producers each have their own shape, and one tally.
var shapeKinds atomic.Uint64

// coversSlots reports whether slots holds every slot below n: a fast
// path that sets those slots sets every value of an event of n.
func coversSlots(n int, slots []int) bool {
	seen := make([]bool, n)
	for _, s := range slots {
		seen[s] = true
	}
	return !slices.Contains(seen, false)
}

// fastLine builds the event of a line with the keys of the previous simple
// line (rec.fast): fastObject's, the line ending at its '}'.
func (rec *jsonRecord) fastLine(b *builder, text []byte, line int) (_ *event.Event, ok bool, _ error) {
	e, _, _, ok, err := rec.fastObject(b, text, line, true)
	return e, ok, err
}

// fastObject builds the event of the line at the start of text, with the
// keys of the previous simple line (rec.fast), in the same order and
// without spaces, matching each key with one comparison of two words and
// writing each value into the event as it is read. The line ends at its
// '}' with a '\n' after it, or, if whole, with text. end is where the
// next line starts. It finds the line's end as it reads it: a line
// source's fastRun reads lines straight from its read buffer, unframed.
// ok is false for a line it does not read (other keys, a null, an escape
// or a non-ASCII byte in a string, a type that is not a string, anything
// malformed, a line that ends within 16 bytes of its read buffer or past
// text...): parse reads it, and says what is wrong with it.
func (rec *jsonRecord) fastObject(b *builder, text []byte, line int, whole bool) (_ *event.Event, end int, kinds uint64, ok bool, _ error) {
	sh := &rec.fast
	n := len(text)
	// Words are read up to 16 bytes past any index below n.
	if len(sh.keys) == 0 || sh.long || n == 0 || n+16 > cap(text) {
		return nil, 0, 0, false, nil
	}
	p := unsafe.Pointer(unsafe.SliceData(text))
	e := b.fresh(sh.n)
	attrs := e.Attrs
	if !sh.dense {
		for slot := range attrs { // what no key sets
			event.SetNumber(attrs, slot, event.Value{})
		}
	}
	var at typeAndTS
	f := &at // in memory: see typeAndTS
	i, k, ok := sh.run(text, attrs, f, 0, 0)
	kinds = sh.kinds
	for ok && k < len(sh.keys) { // a value run does not read
		kinds = 0 // which may be of another kind
		if i, ok = sh.keys[k].value(&b.arena, text, i, attrs, f); ok {
			i, k, ok = sh.run(text, attrs, f, i, k+1)
		}
	}
	if !ok {
		b.unfresh(e)
		return nil, 0, 0, false, nil
	}
	// The '}' ends the line: a '\n' after it (its byte within text; the
	// two compared as one), or text's end when that is the line's.
	if i+1 < n && le16(p, i) == '}'|'\n'<<8 {
		i += 2
	} else if i+1 == n && whole && text[i] == '}' {
		i++
	} else {
		b.unfresh(e)
		return nil, 0, 0, false, nil
	}
	// Offsets the loop set within text: no bounds to check.
	typText := unsafe.Slice((*byte)(unsafe.Add(p, f.typFrom)), f.typTo-f.typFrom)
	tsText := unsafe.Slice((*byte)(unsafe.Add(p, f.tsFrom)), f.tsTo-f.tsFrom)
	typ, ok := rec.typeIDs.cached(typText)
	if !ok {
		typ, ok = rec.typeIDs.lookup(typText)
	}
	if !ok {
		var err error
		if typ, err = b.typeID(string(typText), line); err != nil {
			b.unfresh(e)
			return nil, 0, 0, true, err
		}
		rec.typeIDs.add(typText, typ)
	}
	ts, err := b.fastTS(f.tsPlain, f.tsInt, tsText, line)
	if err != nil {
		b.unfresh(e)
		return nil, 0, 0, true, err
	}
	if typ >= len(sh.declared) {
		sh.declared = append(sh.declared, make([]bool, typ+1-len(sh.declared))...)
	}
	if !sh.declared[typ] {
		sh.declared[typ] = true
		for _, k := range sh.keys {
			if k.role >= 0 {
				b.schema.Declare(typ, k.role)
			}
		}
	}
	e.Type, e.TS, e.Seq = typ, ts, 0
	return e, i, kinds, true, nil
}

// run reads the keys of sh from keys[k] on and their values, from text[i]
// on, into attrs and f, for fastObject (its checks done), while the values
// are what it reads itself: an integer of up to 16 digits where the last
// line had an integer, the type's string. It returns where it stopped:
// the key whose value at i it does not read, value's then, or len(keys)
// at the line's end; ok false for a line fastObject does not read. A loop
// without calls, whose words need not be kept in memory around them.
func (sh *jsonShape) run(text []byte, attrs []event.Value, f *typeAndTS, i, k int) (_, _ int, ok bool) {
	n := len(text)
	p := unsafe.Pointer(unsafe.SliceData(text))
	keys := sh.keys
	for ; uint(k) < uint(len(keys)); k++ {
		key := &keys[k]
		if le64(p, i)&key.mask[0] != key.w[0] || le64(p, i+8)&key.mask[1] != key.w[1] {
			return i, k, false
		}
		if i += key.size; i >= n {
			return i, k, false
		}
		if key.num {
			j := i
			w := le64(p, j)
			sign := byte(w)
			if sign == '-' {
				j++
				w = le64(p, j)
			}
			// Up to 16 digits, written out here as in the other fast path: a
			// function would not inline (over the budget), a call a field.
			x, d := digitRun(w)
			d = min(d, n-j)
			u := digitsValue(x, d) // of all eight when d is 8
			if d == 8 {
				x2, d2 := digitRun(le64(p, j+8))
				if d2 = min(d2, n-j-8); d2 > 0 {
					u = u*pow10[d2] + digitsValue(x2, d2)
				}
				d += d2
			}
			// JSON has no leading zeros (x's first byte is the first
			// digit's value); 17 digits or more, a fraction or an exponent
			// are value's.
			// The byte at n, past text, is in the read buffer: if it looks
			// like more of the number, jsonNumber reads the number to
			// text's end.
			if end := j + d; d > 0 && (byte(x) != 0 || d == 1) && !numberGoesOn[*(*byte)(unsafe.Add(p, end))] {
				v := int64(u)
				if sign == '-' {
					v = -v
				}
				if key.role == roleTS {
					f.tsFrom, f.tsTo, f.tsInt, f.tsPlain = i, end, v, true
				} else {
					event.SetNumber(attrs, key.role, event.IntValue(v))
				}
				i = end
				continue
			}
			key.num = sign == '-' || sign-'0' <= 9 // else value's first from now on
			return i, k, true
		}
		if key.role != roleType {
			return i, k, true
		}
		// The type's string, simple, or the line is parse's: a name of up to
		// seven bytes ends in the word after its quote, read at once.
		if *(*byte)(unsafe.Add(p, i)) == '"' {
			if end, ok := shortName(le64(p, i+1)); ok && i+1+end < n {
				f.typFrom, f.typTo = i+1, i+1+end
				i += end + 2
				continue
			}
		}
		_, next, ok := simpleString(text, i)
		if !ok {
			return i, k, false
		}
		f.typFrom, f.typTo, i = i+1, next-1, next
	}
	return i, k, true
}

// shortName returns the length of the string that the quote in w ends, if
// there is one and the bytes before it are as simpleString reads them:
// not control characters, backslashes or non-ASCII bytes.
func shortName(w uint64) (int, bool) {
	quotes := firstZeros(w ^ '"'*swarOnes)
	// High bits: a byte below ' ' (its low seven bits plus 0x60 do not carry
	// into the eighth), or from 0x80, or a backslash.
	bad := (^(w&swarLows + 0x60*swarOnes) | w | firstZeros(w^'\\'*swarOnes)) & swarHigh
	first := quotes & -quotes
	return bits.TrailingZeros64(quotes) / 8, quotes != 0 && bad&(first-1) == 0
}

// firstZeros has the high bit of each byte of x that is 0, and maybe of
// bytes after the first of them (a borrow): fewer instructions than
// zeroBytes, for a caller that looks at the bytes up to the first only.
func firstZeros(x uint64) uint64 { return (x - swarOnes) &^ x & swarHigh }

// value reads the value at text[i] of a key other than the type's, that
// run does not read, returning the index after it.
func (key *shapeMatch) value(a *event.Arena, text []byte, i int, attrs []event.Value, f *typeAndTS) (int, bool) {
	p := unsafe.Pointer(unsafe.SliceData(text))
	switch c := text[i]; {
	case c == '"':
		s, next, ok := simpleString(text, i)
		if !ok {
			return 0, false
		}
		if key.role == roleTS {
			f.tsFrom, f.tsTo = i+1, next-1
		} else {
			a.Set(attrs, key.role, event.StringValue(unsafe.String(unsafe.SliceData(s), len(s)))) // Set copies the view
		}
		return next, true
	case c == '-' || c-'0' <= 9: // a float, a long or odd integer, or an integer where there was none
		end, ok := jsonNumber(text, i)
		if !ok {
			return 0, false
		}
		if key.num = true; key.role == roleTS {
			f.tsFrom, f.tsTo = i, end
		} else {
			event.SetNumber(attrs, key.role, flatValue{flatNumber, text[i:end]}.value())
		}
		return end, true
	case c == 't' && le64(p, i)&0xffffffff == 't'|'r'<<8|'u'<<16|'e'<<24 && key.role >= 0:
		event.SetNumber(attrs, key.role, event.BoolValue(true))
		return i + 4, true
	case c == 'f' && le64(p, i)&0xffffffffff == 'f'|'a'<<8|'l'<<16|'s'<<24|'e'<<32 && key.role >= 0:
		event.SetNumber(attrs, key.role, event.BoolValue(false))
		return i + 5, true
	}
	// A null (absent: the event would be shorter), or not simple.
	return 0, false
}

// numberGoesOn says of each byte whether it goes on with a JSON number
// after the digits of its integer part.
var numberGoesOn = [256]bool{'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true, '.': true, 'e': true, 'E': true}

// le16 is the little-endian 16 bits at p+i, which the caller has checked
// are in bounds.
func le16(p unsafe.Pointer, i int) uint16 {
	return binary.LittleEndian.Uint16((*[2]byte)(unsafe.Add(p, i))[:])
}

// le64 is the little-endian word at p+i, which the caller has checked is
// in bounds.
func le64(p unsafe.Pointer, i int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, i))[:])
}

// jsonNumber returns the end of the JSON number at text[i:], or ok false
// if there is none.
func jsonNumber(text []byte, i int) (end int, ok bool) {
	n := len(text)
	digits := func(i int) int {
		for i < n && text[i]-'0' <= 9 {
			i++
		}
		return i
	}
	if i < n && text[i] == '-' {
		i++
	}
	switch {
	case i < n && text[i] == '0':
		i++
	case i < n && text[i]-'1' <= 8:
		i = digits(i)
	default:
		return i, false
	}
	if i < n && text[i] == '.' {
		if j := digits(i + 1); j > i+1 {
			i = j
		} else {
			return i, false
		}
	}
	if i < n && (text[i] == 'e' || text[i] == 'E') {
		i++
		if i < n && (text[i] == '+' || text[i] == '-') {
			i++
		}
		if j := digits(i); j > i {
			i = j
		} else {
			return i, false
		}
	}
	return i, true
}
