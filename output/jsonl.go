package output

import (
	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
)

type jsonlWriter struct {
	out   sink
	cols  []Column
	keys  [][]byte // per column: "name":
	ev    *eventFormat
	buf   []byte
	cache jsonCache
}

// jsonCacheSize is a power of two larger than the events a window usually
// holds, so that an event stays cached while matches still bind it.
const jsonCacheSize = 4096

// jsonCache remembers the JSON text of recent events, direct-mapped by
// seq: an event is in many matches (in W1 about 20), and copying its text
// is several times cheaper than encoding it again. The key is the event
// and its seq, so a recycled event never reads another's text.
type jsonCache struct {
	ev   [jsonCacheSize]*event.Event
	seq  [jsonCacheSize]int64
	text [jsonCacheSize][]byte
}

func (c *jsonCache) appendJSON(b []byte, f *eventFormat, e *event.Event) []byte {
	i := e.Seq & (jsonCacheSize - 1)
	if c.ev[i] != e || c.seq[i] != e.Seq {
		c.text[i] = f.appendJSON(c.text[i][:0], e)
		c.ev[i], c.seq[i] = e, e.Seq
	}
	return append(b, c.text[i]...)
}

func newJSONL(out sink, cols []Column, ev *eventFormat) *jsonlWriter {
	j := &jsonlWriter{out: out, cols: cols, ev: ev}
	for _, c := range cols {
		j.keys = append(j.keys, append(event.AppendJSONString(nil, c.Name), ':'))
	}
	return j
}

func (j *jsonlWriter) Row(cells []sase.Cell) error {
	b := append(j.buf[:0], '{')
	for i, c := range cells {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, j.keys[i]...)
		switch j.cols[i].Kind {
		case Value:
			b = c.Value.AppendJSON(b)
		case Event:
			b = j.cache.appendJSON(b, j.ev, c.Event)
		case List:
			b = append(b, '[')
			for k, e := range c.List {
				if k > 0 {
					b = append(b, ',')
				}
				b = j.cache.appendJSON(b, j.ev, e)
			}
			b = append(b, ']')
		}
	}
	j.buf = append(b, '}', '\n')
	return j.out.write(j.buf)
}

func (j *jsonlWriter) Sync() error   { return j.out.err }
func (j *jsonlWriter) Finish() error { return j.out.err }
