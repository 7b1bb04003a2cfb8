package source

import (
	"bytes"
	"context"
	"io"
	"unicode"

	"github.com/sase-cep/sase/event"
)

// LoadJSONL reads a JSON Lines stream: one JSON object per line, blank
// lines skipped. The type key's value must be a string; the timestamp key's
// an integer or an RFC 3339 string. Every other top-level key is an
// attribute of that event's type (a type's attributes are the union of the
// keys seen with it): a number is an int when written as an integer literal
// that fits int64, else a float; strings and bools are kept; null is an
// absent attribute; a nested object's members are attributes named by their
// dotted path ({"geo": {"city": "Oslo"}} has geo.city); arrays are an error.
//
// An empty input is an empty stream. Errors give name and line (and, for
// malformed JSON, the column); on any error the stream is nil.
func LoadJSONL(r io.Reader, name string, opts Options) (*event.Stream, error) {
	return Collect(context.Background(), newJSONLFile(r, name, opts, nil))
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

func (d *jsonLines) decode(b *builder, text []byte, line int) (*event.Event, error) {
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
	typ, err := b.typeID(rec.typ, line)
	if err != nil {
		return nil, err
	}
	ts, err := b.timestamp(rec.ts, line)
	if err != nil {
		return nil, err
	}
	n := 0 // attrs up to the highest slot present
	for i, slot := range rec.slots {
		b.schema.Declare(typ, slot)
		if !rec.values[i].IsAbsent() {
			n = max(n, slot+1)
		}
	}
	e := b.alloc.event(n)
	e.Type, e.TS = typ, ts
	for i, slot := range rec.slots {
		if slot < n {
			e.Attrs[slot] = rec.values[i]
		}
	}
	return e, nil
}

// jsonRecord is one parsed line, reused from line to line, with caches
// that keep a line's keys and type from allocating once they are known.
type jsonRecord struct {
	scan      flatScanner
	typ, ts   string
	hasTyp    bool
	hasTS     bool
	slots     []int
	values    []event.Value
	keySlots  map[string]int    // attribute key -> schema slot
	typeNames map[string]string // type names, interned
	seen      []int             // by slot: lines when the key was last seen (no set to clear per line)
	lines     int               // lines parsed, this one included
	// Nested objects: the dotted path of those being read ("geo."), the
	// path's length at each level, and the current key with its path.
	prefix, full []byte
	levels       []int
}

func (rec *jsonRecord) parse(text []byte, b *builder, line int) error {
	rec.typ, rec.ts, rec.hasTyp, rec.hasTS = "", "", false, false
	rec.slots, rec.values = rec.slots[:0], rec.values[:0]
	rec.lines++
	if rec.keySlots == nil {
		rec.keySlots, rec.typeNames = map[string]int{}, map[string]string{}
	}
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
			rec.full = append(append(rec.full[:0], rec.prefix...), key...)
			key = rec.full
		}
		if v.kind == flatNested {
			if k := string(key); k == typeKey || k == tsKey {
				return b.errorf(line, "key %q holds an object or array: the type must be a string, the timestamp a number or string", key)
			}
			if v.text[0] == '[' {
				return b.errorf(line, "key %q: arrays are not supported (attributes are numbers, strings or bools; a nested object's keys become dotted attributes such as geo.city)", key)
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
			name, ok := rec.typeNames[string(v.text)]
			if !ok {
				name = string(v.text)
				rec.typeNames[name] = name
			}
			rec.typ, rec.hasTyp = name, true
		case string(key) == tsKey:
			if v.kind != flatNumber && v.kind != flatString {
				return b.errorf(line, "timestamp key %q must be an integer or an RFC 3339 string, found %s", key, v)
			}
			if rec.hasTS {
				return b.errorf(line, "duplicate key %q", key)
			}
			rec.ts, rec.hasTS = string(v.text), true
		default:
			slot, ok := rec.keySlots[string(key)]
			if !ok {
				k := string(key)
				slot = b.schema.AddAttr(k)
				rec.keySlots[k] = slot
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
	if !rec.hasTyp {
		return b.errorf(line, "no type key %q", typeKey)
	}
	if !rec.hasTS {
		return b.errorf(line, "no timestamp key %q", tsKey)
	}
	return nil
}
