package source

import (
	"bytes"
	"encoding/binary"
	"unsafe"

	"github.com/sase-cep/sase/event"
)

// jsonShape is the shape of the last line parseSimple read whole, compiled
// for fastLine: its keys in order, each with the separator before it.
type jsonShape struct {
	keys     []shapeMatch
	n        int    // Attrs' length: 1 + the highest slot
	declared []bool // by type id: the shape's attributes are declared for the type
}

// shapeMatch is a key of a shape as its text, `{"key":` or `,"key":`,
// with its first sixteen bytes as two words and masks, to be compared
// with a line's in one go.
type shapeMatch struct {
	w, mask [2]uint64
	text    []byte
	role    uint8
	slot    int
}

// compileShape makes rec.shape's first keys the shape fastLine matches.
func (rec *jsonRecord) compileShape(keys int) {
	sh := &rec.fast
	sh.keys, sh.n, sh.declared = sh.keys[:0], 0, sh.declared[:0]
	for p, k := range rec.shape[:keys] {
		sep := byte(',')
		if p == 0 {
			sep = '{'
		}
		m := shapeMatch{text: append([]byte{sep}, k.text...), role: k.role, slot: k.slot}
		for b, c := range m.text[:min(len(m.text), 16)] {
			m.w[b/8] |= uint64(c) << (8 * (b % 8))
			m.mask[b/8] |= 0xff << (8 * (b % 8))
		}
		if k.role == keyAttr {
			sh.n = max(sh.n, k.slot+1)
		}
		sh.keys = append(sh.keys, m)
	}
}

// at reports whether the key is at text[i:].
func (m *shapeMatch) at(text []byte, i int) bool {
	full := text[:cap(text)]
	if len(m.text) > 16 || i+16 > len(full) || i+len(m.text) > len(text) {
		return bytes.HasPrefix(text[i:], m.text)
	}
	w0, w1 := binary.LittleEndian.Uint64(full[i:]), binary.LittleEndian.Uint64(full[i+8:])
	return w0&m.mask[0] == m.w[0] && w1&m.mask[1] == m.w[1]
}

// fastLine builds the event of a line with the keys of the previous simple
// line (rec.fast), in the same order and without spaces, matching each
// key with one comparison and writing each value into the event as it is
// read. ok is false for a line it does not read (other keys, a null, an
// escape or a non-ASCII byte in a string, a type that is not a string,
// anything malformed...): parse reads it, and says what is wrong with it.
func (rec *jsonRecord) fastLine(b *builder, text []byte, line int) (_ *event.Event, ok bool, _ error) {
	sh := &rec.fast
	if len(sh.keys) == 0 {
		return nil, false, nil
	}
	n := len(text)
	if n > 0 && text[n-1] == '\n' {
		n--
		text = text[:n]
	}
	e := b.arena.Event(sh.n)
	var typText, tsText []byte
	var tsInt int64
	tsPlain := false
	i := 0
	for k := range sh.keys {
		key := &sh.keys[k]
		if !key.at(text, i) {
			b.arena.Drop(e)
			return nil, false, nil
		}
		if i += len(key.text); i >= n {
			b.arena.Drop(e)
			return nil, false, nil
		}
		var v event.Value
		var lit []byte
		isNum := false
		switch c := text[i]; {
		case c == '"':
			s, next, ok := simpleString(text, i)
			if !ok {
				b.arena.Drop(e)
				return nil, false, nil
			}
			i, lit = next, s
			v = event.StringValue(unsafe.String(unsafe.SliceData(s), len(s))) // a view: Set copies it
		case c == '-' || c-'0' <= 9:
			start := i
			if u, end, plain := jsonInt(text, i); plain {
				i, v, isNum = end, event.IntValue(u), true
				if key.role == keyTS {
					tsInt, tsPlain = u, true
				}
			} else if end, ok := jsonNumber(text, i); ok {
				i, v, isNum = end, flatValue{flatNumber, text[start:end]}.value(), true
			} else {
				b.arena.Drop(e)
				return nil, false, nil
			}
			lit = text[start:i]
		case bytes.HasPrefix(text[i:], []byte("true")):
			i, v = i+4, event.BoolValue(true)
		case bytes.HasPrefix(text[i:], []byte("false")):
			i, v = i+5, event.BoolValue(false)
		default: // null (absent: the event would be shorter), or not simple
			b.arena.Drop(e)
			return nil, false, nil
		}
		switch {
		case key.role == keyAttr:
			if v.Kind() == event.String {
				b.arena.Set(e.Attrs, key.slot, v)
			} else {
				e.Attrs[key.slot] = v // a number or bool needs no Set (see event.Arena)
			}
		case key.role == keyType && v.Kind() == event.String:
			typText = lit
		case key.role == keyTS && (isNum || v.Kind() == event.String):
			tsText = lit
		default: // a type that is not a string, a timestamp that is a bool
			b.arena.Drop(e)
			return nil, false, nil
		}
	}
	if i != n-1 || text[i] != '}' {
		b.arena.Drop(e)
		return nil, false, nil
	}
	typ, ok := rec.typeIDs.lookup(typText)
	if !ok {
		var err error
		if typ, err = b.typeID(string(typText), line); err != nil {
			b.arena.Drop(e)
			return nil, true, err
		}
		rec.typeIDs.add(typText, typ)
	}
	var ts int64
	var err error
	if tsPlain && b.mode == tsInteger {
		ts, err = b.ordered(tsInt, tsText, line)
	} else {
		ts, err = b.timestamp(tsText, line)
	}
	if err != nil {
		b.arena.Drop(e)
		return nil, true, err
	}
	if typ >= len(sh.declared) {
		sh.declared = append(sh.declared, make([]bool, typ+1-len(sh.declared))...)
	}
	if !sh.declared[typ] {
		sh.declared[typ] = true
		for _, k := range sh.keys {
			if k.role == keyAttr {
				b.schema.Declare(typ, k.slot)
			}
		}
	}
	e.Type, e.TS = typ, ts
	return e, true, nil
}

// jsonInt reads a JSON integer of up to 16 digits at text[i:]: ok is false
// for any other number (a fraction, an exponent, more digits, a leading
// zero, which JSON does not allow) or when the read buffer ends within 16
// bytes.
func jsonInt(text []byte, i int) (v int64, end int, ok bool) {
	j := i
	neg := text[j] == '-'
	if neg {
		j++
	}
	u, k, ok := digits16(text, j)
	if !ok || k == 0 || k > 1 && text[j] == '0' {
		return 0, i, false
	}
	if j += k; j < len(text) {
		if c := text[j]; c-'0' <= 9 || c == '.' || c == 'e' || c == 'E' {
			return 0, i, false
		}
	}
	if neg {
		return -int64(u), j, true
	}
	return int64(u), j, true
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
