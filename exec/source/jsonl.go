package source

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sase-cep/sase/exec/event"
)

// maxLine bounds one JSON Lines record; bufio.Scanner needs a limit.
const maxLine = 256 << 20

// LoadJSONL reads a JSON Lines stream: one JSON object per line, blank
// lines skipped. The type key's value must be a string; the timestamp key's
// an integer or an RFC 3339 string. Every other top-level key is an
// attribute of that event's type (a type's attributes are the union of the
// keys seen with it): a number is an int when written as an integer literal
// that fits int64, else a float; strings and bools are kept; null is an
// absent attribute; nested objects and arrays are an error.
//
// An empty input is an empty stream. Errors give name and line; on any
// error the stream is nil.
func LoadJSONL(r io.Reader, name string, opts Options) (*event.Stream, error) {
	b := newBuilder(name, opts)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var rec jsonRecord
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		e, err := rec.event(b, text, line)
		if err != nil {
			return nil, err
		}
		b.add(e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b.stream(name), nil
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

// jsonRecord is one parsed line, reused from line to line.
type jsonRecord struct {
	typ, ts   string
	hasTyp    bool
	hasTS     bool
	slots     []int
	values    []event.Value
	seenSlots map[int]bool
}

func (rec *jsonRecord) parse(text []byte, b *builder, line int) error {
	rec.typ, rec.ts, rec.hasTyp, rec.hasTS = "", "", false, false
	rec.slots, rec.values = rec.slots[:0], rec.values[:0]
	clear(rec.seenSlots)
	if rec.seenSlots == nil {
		rec.seenSlots = map[int]bool{}
	}
	typeKey, tsKey := b.opts.typeColumn(), b.opts.tsColumn()

	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	syntax := func(err error) error { return fmt.Errorf("%s:%d: %w", b.file, line, err) }
	tok, err := dec.Token()
	if err != nil {
		return syntax(err)
	}
	if tok != json.Delim('{') {
		return b.errorf(line, "want a JSON object, found %s", describe(tok))
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntax(err)
		}
		key := tok.(string) // inside an object the decoder only yields string keys here
		tok, err = dec.Token()
		if err != nil {
			return syntax(err)
		}
		if _, ok := tok.(json.Delim); ok {
			return b.errorf(line, "key %q: nested objects and arrays are not supported (attributes are numbers, strings or bools)", key)
		}
		switch key {
		case typeKey:
			s, ok := tok.(string)
			if !ok {
				return b.errorf(line, "type key %q must be a string, found %s", key, describe(tok))
			}
			if rec.hasTyp {
				return b.errorf(line, "duplicate key %q", key)
			}
			rec.typ, rec.hasTyp = s, true
		case tsKey:
			switch v := tok.(type) {
			case json.Number:
				rec.ts = v.String()
			case string:
				rec.ts = v
			default:
				return b.errorf(line, "timestamp key %q must be an integer or an RFC 3339 string, found %s", key, describe(tok))
			}
			if rec.hasTS {
				return b.errorf(line, "duplicate key %q", key)
			}
			rec.hasTS = true
		default:
			slot := b.schema.AddAttr(key)
			if rec.seenSlots[slot] {
				return b.errorf(line, "duplicate key %q", key)
			}
			rec.seenSlots[slot] = true
			rec.slots = append(rec.slots, slot)
			rec.values = append(rec.values, jsonValue(tok))
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return syntax(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
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

// jsonValue converts a scalar token; null is absent.
func jsonValue(tok json.Token) event.Value {
	switch v := tok.(type) {
	case json.Number:
		s := v.String()
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return event.IntValue(i)
			}
		}
		// The decoder has validated the literal; only a float64 overflow
		// can fail, and ParseFloat then returns ±Inf, which we keep.
		f, _ := strconv.ParseFloat(s, 64)
		return event.FloatValue(f)
	case string:
		return event.StringValue(v)
	case bool:
		return event.BoolValue(v)
	}
	return event.Value{}
}

func describe(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case json.Delim:
		return v.String()
	case string:
		return strconv.Quote(v)
	}
	return fmt.Sprint(tok)
}
