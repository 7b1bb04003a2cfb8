package output

import (
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/query"
)

// JSONL is one JSON object per match.
const JSONL Format = "jsonl"

func init() {
	register(JSONL, formatSpec{rank: 2, chunks: Encoded, new: func(out sink, sc Schema, ev *eventFormat, _ config) Writer {
		return newJSONL(out, sc.Columns, ev)
	}})
}

type jsonlWriter struct {
	out sink
	buf []byte // rows not written yet
	jsonlEncoder
}

// jsonlEncoder encodes rows as JSON Lines; each has its own cache.
type jsonlEncoder struct {
	cols  []Column
	keys  [][]byte // per column: "name": (after a comma but for the first)
	ev    *eventFormat
	cache textCache
}

func newJSONL(out sink, cols []Column, ev *eventFormat) *jsonlWriter {
	j := &jsonlWriter{out: out, buf: make([]byte, 0, spillSize+4<<10)}
	j.cols, j.ev = cols, ev
	for i, c := range cols {
		var key []byte
		if i > 0 {
			key = append(key, ',')
		}
		j.keys = append(j.keys, append(event.AppendJSONString(key, c.Name), ':'))
	}
	return j
}

func (j *jsonlWriter) Row(cells []query.Cell) error {
	var err error
	j.buf, err = j.out.spill(j.encode(j.buf, cells))
	return err
}

// NewEncoder is a copy of the writer's encoder with a cache of its own.
func (j *jsonlWriter) NewEncoder() query.Encode {
	e := &jsonlEncoder{cols: j.cols, keys: j.keys, ev: j.ev.fork()}
	return e.encode
}

func (j *jsonlWriter) Put(bufs [][]byte, _ int) (err error) {
	j.buf, err = j.out.put(j.buf, bufs)
	return err
}

func (j *jsonlEncoder) encode(b []byte, cells []query.Cell) []byte {
	b = append(b, '{')
	open := len(b)
	for i, c := range cells {
		if unbound(j.cols[i].Kind, c) {
			continue // an unbound variable has no key (LANGUAGE.md §9.3)
		}
		key := j.keys[i]
		if len(b) == open && i > 0 {
			key = key[1:] // the first key written takes no comma
		}
		b = append(b, key...)
		switch j.cols[i].Kind {
		case Value:
			b = c.Value.AppendJSON(b)
		case Event:
			b = j.cache.append(b, c.Event, j.ev.appendJSON)
		case List:
			b = append(b, '[')
			for k, e := range c.List {
				if k > 0 {
					b = append(b, ',')
				}
				b = j.cache.append(b, e, j.ev.appendJSON)
			}
			b = append(b, ']')
		}
	}
	return append(b, '}', '\n')
}

func (j *jsonlWriter) Sync() (err error) {
	j.buf, err = j.out.drain(j.buf)
	return err
}

func (j *jsonlWriter) Finish() error { return j.Sync() }
