package output

import (
	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
)

type jsonlWriter struct {
	out   sink
	cols  []Column
	keys  [][]byte // per column: "name": (after a comma but for the first)
	ev    *eventFormat
	buf   []byte // rows not written yet
	cache textCache
}

func newJSONL(out sink, cols []Column, ev *eventFormat) *jsonlWriter {
	j := &jsonlWriter{out: out, cols: cols, ev: ev, buf: make([]byte, 0, spillSize+4<<10)}
	for i, c := range cols {
		var key []byte
		if i > 0 {
			key = append(key, ',')
		}
		j.keys = append(j.keys, append(event.AppendJSONString(key, c.Name), ':'))
	}
	return j
}

func (j *jsonlWriter) Row(cells []sase.Cell) error {
	b := append(j.buf, '{')
	for i, c := range cells {
		b = append(b, j.keys[i]...)
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
	var err error
	j.buf, err = j.out.spill(append(b, '}', '\n'))
	return err
}

func (j *jsonlWriter) Sync() (err error) {
	j.buf, err = j.out.drain(j.buf)
	return err
}

func (j *jsonlWriter) Finish() error { return j.Sync() }
