package source

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/sase-cep/sase/event"
)

// Eight bytes at a time (SWAR: the bytes of a uint64, little-endian, so
// the first byte of the text is the lowest).
const (
	swarOnes = 0x0101010101010101
	swarLows = 0x7f7f7f7f7f7f7f7f
	swarHigh = 0x8080808080808080
)

// zeroBytes has the high bit of each byte of x that is 0, exactly (no
// borrow from one byte into the next).
func zeroBytes(x uint64) uint64 { return ^((x&swarLows + swarLows) | x | swarLows) }

// digitRun returns w's bytes less '0' and how many of them, from the
// first, were ASCII digits (8 if all). A byte below '0' borrows from the
// bytes after it, which are past the run and so not looked at.
func digitRun(w uint64) (x uint64, k int) {
	x = w - '0'*swarOnes
	// A digit's byte is 0..9: neither it nor it plus 118 has the high bit.
	return x, bits.TrailingZeros64((x|(x+118*swarOnes))&swarHigh) / 8
}

// digitsValue is the value of the k (1 to 8) decimal digits at the start
// of x, as digitRun returns them: the digits are moved to the top (the
// bytes below are then leading zeros) and combined in pairs, fours, then
// eights. (The shift is masked, so that it needs no test for 64: k 0
// gives no value.)
func digitsValue(x uint64, k int) uint64 {
	x <<= (64 - 8*k) & 63
	x = (x & 0x0f0f0f0f0f0f0f0f) * (10<<8 + 1) >> 8
	x = (x & 0x00ff00ff00ff00ff) * (100<<16 + 1) >> 16
	return (x & 0x0000ffff0000ffff) * (10000<<32 + 1) >> 32
}

var pow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}

// floatPow10 are the powers of ten a decimal's fraction divides by, each
// exact as a float64.
var floatPow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// decimal reads [+-]?[0-9]+\.[0-9]+ of at most 15 digits, the most common
// float a file holds, as strconv.ParseFloat does: the digits as an integer
// (below 2^53, so exact) divided by a power of ten (exact too) is the
// correctly rounded quotient, which is ParseFloat's answer (its own fast
// path). ok is false for anything else: ParseFloat's then.
func decimal(text []byte) (_ float64, ok bool) {
	i := 0
	if len(text) > 0 && (text[0] == '-' || text[0] == '+') {
		i = 1
	}
	var m uint64
	start := i
	for ; i < len(text) && text[i]-'0' <= 9; i++ {
		m = m*10 + uint64(text[i]-'0')
	}
	whole := i - start
	if whole == 0 || i == len(text) || text[i] != '.' {
		return 0, false
	}
	i++
	start = i
	for ; i < len(text) && text[i]-'0' <= 9; i++ {
		m = m*10 + uint64(text[i]-'0')
	}
	frac := i - start
	if i != len(text) || frac == 0 || whole+frac > 15 { // m wrapped on more digits: unused then
		return 0, false
	}
	f := float64(m) / floatPow10[frac]
	if text[0] == '-' {
		f = -f
	}
	return f, true
}

// cellEnd returns the end of the field at text[i:] (the index of the
// next comma, or len(text)), or reports a quote in it.
func cellEnd(text []byte, i int, comma byte) (end int, quoted bool) {
	commas, quotes := uint64(comma)*swarOnes, uint64('"')*swarOnes
	for ; i+8 <= len(text); i += 8 {
		w := binary.LittleEndian.Uint64(text[i:])
		c, q := zeroBytes(w^commas), zeroBytes(w^quotes)
		if c|q != 0 {
			if q != 0 && (c == 0 || bits.TrailingZeros64(q) < bits.TrailingZeros64(c)) {
				return i + bits.TrailingZeros64(q)/8, true
			}
			return i + bits.TrailingZeros64(c)/8, false
		}
	}
	for ; i < len(text); i++ {
		switch text[i] {
		case comma:
			return i, false
		case '"':
			return i, true
		}
	}
	return i, false
}

// typeAndTS is where a fast path found a line's type and timestamp, as
// offsets, and the timestamp as an integer when it read one (tsPlain).
// The fast paths keep it in memory, by its address, not in registers,
// which their loop over the fields, setting these twice a line, needs for
// the rest: 80 fewer instructions a CSV line (of some 1,400).
type typeAndTS struct {
	typFrom, typTo, tsFrom, tsTo int
	tsInt                        int64
	tsPlain                      bool
}

// Roles of a CSV column in csvLayout.roles; an attribute's is its slot.
const (
	roleType = -1
	roleTS   = -2
)

// fastEvent builds the event of a line read in place (csvRecords.text),
// reading each field as it finds it, where split and event would first
// cut the line into fields: an integer of up to 16 digits is read eight
// digits at a time, a field that fits a word is found in one; any other
// cell is parseCell's, as in event. ok is false when the line must go that
// way instead: it holds a quote, has another number of fields than the
// header, has an empty type (a punctuation, or an error), or ends within
// 16 bytes of its read buffer. A line with a reorder stage goes that way
// too (the stage keeps a late line's fields).
func (l *csvLayout) fastEvent(b *builder, text []byte, comma byte, line int) (_ *event.Event, ok bool, _ error) {
	n := len(text)
	if n+16 > cap(text) { // words are read up to 16 bytes past any index up to n
		return nil, false, nil
	}
	p := unsafe.Pointer(unsafe.SliceData(text))
	e := b.fresh(l.nslots)
	attrs := e.Attrs
	if !l.dense {
		for slot := range attrs { // what no column sets
			event.SetNumber(attrs, slot, event.Value{})
		}
	}
	var at typeAndTS
	f := &at // in memory: see typeAndTS
	i := -1  // at the comma before each field (one before the first): fewer words live in the loop than with a column count
	for _, role := range l.roles {
		if i == n {
			b.unfresh(e)
			return nil, false, nil // too few fields
		}
		i++
		start := i
		w := le64(p, i)
		if role != roleType { // an integer?
			j := i
			sign := byte(w)
			if (sign-'+')&^2 == 0 { // '+' or '-'
				j++
				w = le64(p, j)
			}
			// Up to 16 digits, written out here as in the other fast path: a
			// function would not inline (over the budget), a call a field.
			x, d := digitRun(w)
			d = min(d, n-j)
			var u uint64
			if d < 8 {
				u = digitsValue(x, d)
			} else {
				x2, d2 := digitRun(le64(p, j+8))
				d2 = min(d2, n-j-8)
				if u = digitsValue(x, 8); d2 > 0 {
					u, d = u*pow10[d2]+digitsValue(x2, d2), 8+d2
				}
			}
			// The byte at end read through p: text's words need not stay live.
			if end := j + d; d > 0 && (*(*byte)(unsafe.Add(p, end)) == comma || end == n) { // a 17th digit fails here
				v := int64(u)
				if sign == '-' {
					v = -v
				}
				if i = end; role == roleTS {
					f.tsFrom, f.tsTo, f.tsInt, f.tsPlain = start, i, v, true
				} else {
					event.SetNumber(attrs, role, event.IntValue(v))
				}
				continue
			}
			w = le64(p, i)
		}
		// The field's end: in the word at i, or past it.
		var end int
		stop := zeroBytes(w^(uint64(comma)*swarOnes)) | zeroBytes(w^('"'*swarOnes))
		if left := n - i; left < 8 {
			stop |= swarHigh << (8 * left) // the line's end
		}
		if stop != 0 {
			end = i + bits.TrailingZeros64(stop)/8
			if end < n && *(*byte)(unsafe.Add(p, end)) == '"' {
				b.unfresh(e)
				return nil, false, nil
			}
		} else {
			var quoted bool
			if end, quoted = cellEnd(text, i+8, comma); quoted {
				b.unfresh(e)
				return nil, false, nil
			}
		}
		i = end
		switch role {
		case roleType:
			f.typFrom, f.typTo = start, i
		case roleTS:
			f.tsFrom, f.tsTo = start, i
		default:
			if i > start {
				b.arena.Set(attrs, role, parseCell(text[start:i:i]))
			} else {
				event.SetNumber(attrs, role, event.Value{}) // absent
			}
		}
	}
	if i != n || f.typTo == f.typFrom {
		b.unfresh(e)
		return nil, false, nil // too many fields, or no type
	}
	tsText := text[f.tsFrom:f.tsTo]
	typ, err := l.typeOf(b, text[f.typFrom:f.typTo], line)
	if err != nil {
		b.unfresh(e)
		return nil, true, err
	}
	if typ >= len(l.declared) || !l.declared[typ] {
		l.declare(b, typ) // before the ts is checked, as in event
	}
	ts, err := b.fastTS(f.tsPlain, f.tsInt, tsText, line)
	if err != nil {
		b.unfresh(e)
		return nil, true, err
	}
	e.Type, e.TS, e.Seq = typ, ts, 0
	return e, true, nil
}
