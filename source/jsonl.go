package source

import (
	"bytes"
	"context"
	"io"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/sase-cep/sase/event"
)

func init() {
	registerInput(inputFormat{
		names: []string{"jsonl", "ndjson", "json"},
		file: func(r io.Reader, name string, opts Options, release func()) Source {
			return newJSONLFile(r, name, opts, release)
		},
		lines: func() lineDecoder { return &jsonLines{} },
	})
}

// LoadJSONL reads a JSON Lines stream: one JSON object per line, blank
// lines skipped. The type key's value must be a string; the timestamp key's
// an integer or an RFC 3339 string. Every other top-level key is an
// attribute of that event's type (a type's attributes are the union of the
// keys seen with it): a number is an int when written as an integer literal
// that fits int64, else a float; strings and bools are kept; null is an
// absent attribute; a nested object's members are attributes named by their
// dotted path ({"geo": {"city": "Oslo"}} has geo.city); an array is kept as
// its JSON text (compacted), a string, noted once (Options.Notes).
//
// An empty input is an empty stream. Errors give name and line (and, for
// malformed JSON, the column); on any error the stream is nil.
func LoadJSONL(r io.Reader, name string, opts Options) (*event.Stream, error) {
	return collectTimed(newJSONLFile(r, name, opts, nil), opts)
}

// newJSONLFile is a finite JSON Lines source: the live sources' framing
// and decoding, stopping at the first bad line.
func newJSONLFile(r io.Reader, name string, opts Options, release func()) *lineSource {
	s, _ := newLineSource(name, Config{Name: name, Format: "jsonl", Options: opts}, func(_ context.Context, feed func(Producer) error) error {
		return feed(Producer{Name: name, R: r})
	}, release)
	s.finite = true
	return s
}

type jsonLines struct{ rec jsonRecord }

func (d *jsonLines) fast(b *builder, text []byte, line int) (*event.Event, bool, error) {
	return d.rec.fastLine(b, text, line)
}

// fastRun appends the events of the lines fastObject reads whole straight
// from r's buffer, up to a full batch, framing them as it reads them; it
// stops at the first line it does not read, which r.next then frames.
// Each line is within r's limit: the text it is given ends there.
func (d *jsonLines) fastRun(b *builder, r *lineReader, batch []*event.Event) []*event.Event {
	for len(batch) < maxBatch {
		rest := r.buf[r.pos:]
		n := min(len(rest), cap(rest)-16, r.max+1)
		if n <= 0 {
			break
		}
		e, end, kinds, ok, err := d.rec.fastObject(b, rest[:n], r.line+1, false)
		if !ok || err != nil { // r.next's line, whose error decode reports
			break
		}
		r.line++
		r.start, r.pos = r.pos, r.pos+end
		// number, with kinds for the tally: most events are counted inline.
		if b.sequence(e); !b.tally.Repeat(e, kinds) {
			b.tally.AddKeyed(b.schema, e, kinds)
		}
		batch = append(batch, e)
	}
	return batch
}

func (d *jsonLines) decode(b *builder, text []byte, line int) (*event.Event, error) {
	if e, ok, err := d.rec.fastLine(b, text, line); ok {
		return e, err
	}
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, nil
	}
	return d.rec.event(b, text, line) // untrimmed, so error columns count from the line's start
}

// event builds the event of one line: a type's attributes are the keys
// seen with it, null ones included.
func (rec *jsonRecord) event(b *builder, text []byte, line int) (*event.Event, error) {
	if err := rec.parse(text, b, line); err != nil {
		return nil, err
	}
	if !rec.hasTyp {
		return b.punctuation(rec.ts, line)
	}
	typ, ok := rec.typeIDs.lookup(rec.typ)
	if !ok {
		var err error
		if typ, err = b.typeID(string(rec.typ), line); err != nil {
			return nil, err
		}
		rec.typeIDs.add(rec.typ, typ)
	}
	ts, err := b.timestamp(rec.ts, line)
	if err != nil {
		return nil, err
	}
	n := 0 // attrs up to the highest slot present
	t := b.schema.Types[typ]
	for i, slot := range rec.slots {
		if !t.Has(slot) {
			b.schema.Declare(typ, slot)
		}
		if !rec.values[i].IsAbsent() {
			n = max(n, slot+1)
		}
	}
	e := b.arena.Event(n)
	e.Type, e.TS = typ, ts
	for i, slot := range rec.slots {
		if slot < n {
			b.arena.Set(e.Attrs, slot, rec.values[i])
		}
	}
	return e, nil
}

// jsonRecord is one parsed line, reused from line to line, with caches
// that keep a line's keys and type from allocating once they are known.
type jsonRecord struct {
	scan     flatScanner
	typ, ts  []byte // copies of the type's and the timestamp's text, reused
	hasTyp   bool
	hasTS    bool
	slots    []int
	values   []event.Value
	keySlots map[string]int // attribute key -> schema slot
	typeIDs  typeNames      // type name -> type id
	// The attribute keys of the previous line by position, and their
	// slots: a file's lines mostly have the same keys in the same order,
	// and comparing bytes is cheaper than a map lookup.
	posKeys  [][]byte
	posSlots []int
	// shape is the previous simple line's keys by position, each as its
	// text `"key":` with what it is: a line whose keys are the same, in the
	// same order, matches each with one comparison.
	shape []shapeKey
	// fast is the shape of the last line parseSimple read whole, for
	// fastLine; reshaped says rec.shape has changed since.
	fast     jsonShape
	reshaped bool
	// The type and timestamp keys (Options'), set at the first line.
	typeKey, tsKey string
	seen           []int // by slot: lines when the key was last seen (no set to clear per line)
	lines          int   // lines parsed, this one included
	// Nested objects: the dotted path of those being read ("geo."), the
	// path's length at each level, and the current key with its path.
	prefix, full []byte
	levels       []int
}

// shapeKey is a key of a line's shape.
type shapeKey struct {
	text []byte // `"key":`
	role uint8  // keyAttr, keyType or keyTS
	slot int    // an attribute's
}

const (
	keyAttr uint8 = iota
	keyType
	keyTS
)

// slot is the schema slot of the attribute key at position k of a line.
func (rec *jsonRecord) slot(b *builder, key []byte, k int) (int, bool) {
	if k < len(rec.posKeys) && bytes.Equal(rec.posKeys[k], key) {
		return rec.posSlots[k], true
	}
	slot, ok := rec.keySlots[string(key)]
	if !ok {
		if len(b.schema.Attrs) >= maxAttrs {
			return 0, false
		}
		name := string(key)
		slot = b.schema.AddAttr(name)
		rec.keySlots[name] = slot
	}
	if k < len(rec.posKeys) {
		rec.posKeys[k], rec.posSlots[k] = append(rec.posKeys[k][:0], key...), slot
	} else {
		rec.posKeys, rec.posSlots = append(rec.posKeys, append([]byte(nil), key...)), append(rec.posSlots, slot)
	}
	return slot, true
}

// reset readies rec for a line.
func (rec *jsonRecord) reset() {
	rec.typ, rec.ts, rec.hasTyp, rec.hasTS = rec.typ[:0], rec.ts[:0], false, false
	rec.slots, rec.values = rec.slots[:0], rec.values[:0]
	rec.lines++
	if rec.keySlots == nil {
		rec.keySlots = map[string]int{}
	}
}

// parseSimple reads a line in the shape most JSON Lines files have:
// {"key":value,...} without spaces, ASCII strings without escapes,
// integers of up to 18 digits, true, false, null, one type and one
// timestamp key, the line ending after the brace. It reports false for
// anything else, which parse then reads (and words the error of).
func (rec *jsonRecord) parseSimple(text []byte, b *builder) bool {
	rec.reset()
	if rec.typeKey == "" {
		rec.typeKey, rec.tsKey = b.opts.typeColumn(), b.opts.tsColumn()
	}
	typeKey, tsKey := rec.typeKey, rec.tsKey
	if n := len(text); n > 0 && text[n-1] == '\n' {
		text = text[:n-1]
	}
	n := len(text)
	if n < 2 || text[0] != '{' || text[n-1] != '}' {
		return false
	}
	i := 1
	if text[i] == '}' {
		return false // {}: parse words the missing keys
	}
	for p := 0; ; p++ {
		var key *shapeKey
		if p < len(rec.shape) && bytes.HasPrefix(text[i:], rec.shape[p].text) {
			key = &rec.shape[p]
			i += len(key.text)
		} else {
			start := i
			name, next, ok := simpleString(text, i)
			i = next
			if !ok || i >= n || text[i] != ':' {
				return false
			}
			i++
			k := shapeKey{role: keyAttr}
			switch string(name) {
			case typeKey:
				k.role = keyType
			case tsKey:
				k.role = keyTS
			default:
				var ok bool
				if k.slot, ok = rec.slot(b, name, len(rec.slots)); !ok {
					return false // the slow path says why
				}
			}
			rec.reshaped = true
			if p < len(rec.shape) {
				k.text = append(rec.shape[p].text[:0], text[start:i]...)
				rec.shape[p] = k
			} else {
				k.text = append([]byte(nil), text[start:i]...)
				rec.shape = append(rec.shape, k)
			}
			key = &rec.shape[p]
		}
		if i >= n {
			return false
		}
		var v event.Value
		var lit []byte // the timestamp's text
		var isStr bool
		switch c := text[i]; {
		case c == '"':
			s, next, ok := simpleString(text, i)
			if !ok {
				return false
			}
			i, lit, isStr = next, s, true
		case c == '-' || c >= '0' && c <= '9':
			start := i
			if c == '-' {
				i++
			}
			digits := i
			var iv int64
			for i < n {
				d := text[i] - '0'
				if d > 9 {
					break
				}
				iv = iv*10 + int64(d) // 18 digits cannot overflow
				i++
			}
			if i == digits || i-digits > 18 || text[digits] == '0' && i-digits > 1 || i < n && (text[i] == '.' || text[i] == 'e' || text[i] == 'E') {
				// An attribute's float or long number, as fastLine reads it
				// (so that a line of floats gets a shape); JSON's leading
				// zero, or a number for the type or the timestamp: parse's.
				end, ok := jsonNumber(text, start)
				if !ok || key.role != keyAttr {
					return false
				}
				i, v = end, flatValue{flatNumber, text[start:end]}.value()
				break
			}
			if c == '-' {
				iv = -iv
			}
			lit = text[start:i]
			v = event.IntValue(iv)
		case bytes.HasPrefix(text[i:], []byte("true")):
			i += 4
			v = event.BoolValue(true)
		case bytes.HasPrefix(text[i:], []byte("false")):
			i += 5
			v = event.BoolValue(false)
		case bytes.HasPrefix(text[i:], []byte("null")):
			i += 4
		default:
			return false
		}
		switch key.role {
		case keyType:
			if !isStr || rec.hasTyp {
				return false
			}
			rec.typ, rec.hasTyp = append(rec.typ, lit...), true
		case keyTS:
			if lit == nil || rec.hasTS {
				return false
			}
			rec.ts, rec.hasTS = append(rec.ts, lit...), true
		default:
			if isStr { // a view of the line: event copies it into the arena
				v = event.StringValue(unsafe.String(unsafe.SliceData(lit), len(lit)))
			}
			slot := key.slot
			if slot >= len(rec.seen) {
				rec.seen = append(rec.seen, make([]int, slot+1-len(rec.seen))...)
			}
			if rec.seen[slot] == rec.lines {
				return false
			}
			rec.seen[slot] = rec.lines
			rec.slots = append(rec.slots, slot)
			rec.values = append(rec.values, v)
		}
		if i >= n {
			return false
		}
		switch text[i] {
		case ',':
			i++
		case '}':
			whole := i == n-1 && rec.hasTyp && rec.hasTS
			if whole && (rec.reshaped || len(rec.fast.keys) != p+1) {
				rec.compileShape(p + 1)
				rec.reshaped = false
			}
			return whole
		default:
			return false
		}
	}
}

// simpleString reads an ASCII string without escapes at text[i] (its
// quote), returning its text and the index after it. (Not a closure over
// parseSimple's index, which then could not stay in a register.)
func simpleString(text []byte, i int) ([]byte, int, bool) {
	if i >= len(text) || text[i] != '"' {
		return nil, i, false
	}
	i++
	start := i
	for ; i < len(text); i++ {
		c := text[i]
		if c == '"' {
			return text[start:i], i + 1, true
		}
		if c < ' ' || c == '\\' || c >= utf8.RuneSelf {
			return nil, i, false
		}
	}
	return nil, i, false
}

// parse reads a line into rec: parseSimple's way when it can.
func (rec *jsonRecord) parse(text []byte, b *builder, line int) error {
	if rec.parseSimple(text, b) {
		return nil
	}
	return rec.parseGeneral(text, b, line)
}

// parseGeneral is parse for any line, with the flat scanner.
func (rec *jsonRecord) parseGeneral(text []byte, b *builder, line int) error {
	rec.reset()
	typeKey, tsKey := b.opts.typeColumn(), b.opts.tsColumn()

	// Unicode spaces around the object are allowed (they always were);
	// within it, only JSON's four.
	body := bytes.TrimLeftFunc(text, unicode.IsSpace)
	lead := len(text) - len(body)
	body = bytes.TrimRightFunc(body, unicode.IsSpace)
	syntax := func(err error) error {
		fe := err.(*flatError) // the scanner's only error
		return b.errorf(line, "%s at column %d", fe.msg, lead+fe.off+1)
	}
	s := &rec.scan
	rec.prefix, rec.levels = rec.prefix[:0], rec.levels[:0]
	v, ok, err := s.open(body)
	if err != nil {
		return syntax(err)
	}
	if !ok {
		return b.errorf(line, "want a JSON object, found %s", v)
	}
	for {
		key, v, ok, err := s.next()
		if err != nil {
			return syntax(err)
		}
		if !ok {
			if len(rec.levels) == 0 {
				break
			}
			rec.prefix = rec.prefix[:rec.levels[len(rec.levels)-1]]
			rec.levels = rec.levels[:len(rec.levels)-1]
			s.first = false // the enclosing object goes on
			continue
		}
		if len(rec.prefix) > 0 {
			if len(rec.prefix)+len(key) > maxPath {
				return b.errorf(line, "the path of a nested key (%q...) is longer than %d bytes", rec.prefix[:min(len(rec.prefix), 40)], maxPath)
			}
			rec.full = append(append(rec.full[:0], rec.prefix...), key...)
			key = rec.full
		}
		if v.kind == flatNested {
			if k := string(key); k == typeKey || k == tsKey {
				return b.errorf(line, "key %q holds an object: the type must be a string, the timestamp a number or string", key)
			}
			// A nested object: its members are attributes named by their path.
			rec.levels = append(rec.levels, len(rec.prefix))
			rec.prefix = append(append(rec.prefix[:0], key...), '.') // key holds the path already
			s.first = true
			continue
		}
		switch {
		case string(key) == typeKey:
			if v.kind != flatString {
				return b.errorf(line, "type key %q must be a string, found %s", key, v)
			}
			if rec.hasTyp {
				return b.errorf(line, "duplicate key %q", key)
			}
			rec.typ, rec.hasTyp = append(rec.typ, v.text...), true
		case string(key) == tsKey:
			if v.kind != flatNumber && v.kind != flatString {
				return b.errorf(line, "timestamp key %q must be an integer or an RFC 3339 string, found %s", key, v)
			}
			if rec.hasTS {
				return b.errorf(line, "duplicate key %q", key)
			}
			rec.ts, rec.hasTS = append(rec.ts, v.text...), true
		default:
			if v.kind == flatArray {
				b.noteArray(key, line)
			}
			slot, ok := rec.slot(b, key, len(rec.slots))
			if !ok {
				return b.errorf(line, "key %q would be the stream's attribute number %d, past the bound of %d", key, maxAttrs+1, maxAttrs)
			}
			if slot >= len(rec.seen) {
				rec.seen = append(rec.seen, make([]int, slot+1-len(rec.seen))...)
			}
			if rec.seen[slot] == rec.lines {
				return b.errorf(line, "duplicate key %q", key)
			}
			rec.seen[slot] = rec.lines
			rec.slots = append(rec.slots, slot)
			rec.values = append(rec.values, v.value())
		}
	}
	another, err := s.rest()
	if err != nil {
		return syntax(err)
	}
	if another {
		return b.errorf(line, "more than one JSON value on the line (want one object per line)")
	}
	if !rec.hasTyp && (!rec.hasTS || len(rec.slots) > 0) { // a ts alone is a punctuation
		return b.errorf(line, "no type key %q", typeKey)
	}
	if !rec.hasTS {
		return b.errorf(line, "no timestamp key %q", tsKey)
	}
	return nil
}
