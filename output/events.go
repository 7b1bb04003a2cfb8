package output

import (
	"strconv"
	"time"

	"github.com/sase-cep/sase/event"
)

// eventFormat holds the text of a schema's names, encoded once per writer
// (and once per name a live stream adds).
type eventFormat struct {
	jsonHead [][]byte // per type: {"type":"<name>","ts":
	jsonKey  [][]byte // per attribute slot: ,"<name>":  (nil: hidden)
	textKey  [][]byte // per attribute slot:  <name>=
	types    []string
	update   func(func(*event.Schema)) // Schema.Update; nil if fixed
	unit     time.Duration             // Schema.Unit: text timestamps are times of day
}

// fork returns a format for another goroutine: f itself when its schema
// is fixed (it is read only then), else a format of its own that names
// what the stream's schema has when it needs to.
func (f *eventFormat) fork() *eventFormat {
	if f.update == nil {
		return f
	}
	return &eventFormat{update: f.update, unit: f.unit}
}

// appendTS appends a timestamp for people: RFC 3339 (UTC) on a stream of
// wall-clock times, else the number of ticks.
func (f *eventFormat) appendTS(b []byte, ts int64) []byte {
	if f.unit < time.Millisecond {
		return strconv.AppendInt(b, ts, 10)
	}
	return time.UnixMilli(ts*int64(f.unit/time.Millisecond)).UTC().AppendFormat(b, time.RFC3339Nano)
}

// extend encodes the names of schema that f does not have yet.
func (f *eventFormat) extend(schema *event.Schema) {
	for _, t := range schema.Types[len(f.types):] {
		head := append([]byte(`{"type":`), event.AppendJSONString(nil, t.Name)...)
		f.jsonHead = append(f.jsonHead, append(head, `,"ts":`...))
		f.types = append(f.types, t.Name)
	}
	for _, name := range schema.Attrs[len(f.jsonKey):] {
		var key []byte
		// An attribute named like a built-in key (a CSV column "seq") would
		// make a duplicate JSON key; the built-in wins, as in queries.
		if name != "type" && name != "ts" && name != "seq" {
			key = append(event.AppendJSONString([]byte{','}, name), ':')
		}
		f.jsonKey = append(f.jsonKey, key)
		f.textKey = append(f.textKey, []byte(" "+name+"="))
	}
}

// cover makes sure f can name e's type and attributes.
func (f *eventFormat) cover(e *event.Event) {
	if (e.Type >= len(f.types) || len(e.Attrs) > len(f.jsonKey)) && f.update != nil {
		f.update(f.extend)
	}
}

// appendJSON appends e as {"type":..,"ts":..,"seq":.., attributes...},
// attributes in schema slot order, absent ones left out.
func (f *eventFormat) appendJSON(b []byte, e *event.Event) []byte {
	f.cover(e)
	b = append(b, f.jsonHead[e.Type]...)
	b = strconv.AppendInt(b, e.TS, 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	for slot, v := range e.Attrs {
		if v.IsAbsent() || f.jsonKey[slot] == nil {
			continue
		}
		b = append(b, f.jsonKey[slot]...)
		b = v.AppendJSON(b)
	}
	return append(b, '}')
}

// appendText appends e compactly for people: stock1@12 {price=5 volume=3}.
func (f *eventFormat) appendText(b []byte, e *event.Event) []byte {
	f.cover(e)
	b = append(b, f.types[e.Type]...)
	b = append(b, '@')
	b = f.appendTS(b, e.TS)
	open := false
	for slot, v := range e.Attrs {
		if v.IsAbsent() {
			continue
		}
		key := f.textKey[slot]
		if !open {
			b = append(b, " {"...)
			key = key[1:]
			open = true
		}
		b = append(b, key...)
		b = v.AppendText(b)
	}
	if open {
		b = append(b, '}')
	}
	return b
}
