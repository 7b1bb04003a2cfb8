package output

import "github.com/sase-cep/sase/event"

// textCacheSize is a power of two larger than the events a window usually
// holds, so that an event stays cached while matches still bind it.
const textCacheSize = 4096

// textCache remembers the encoded text of recent events, direct-mapped by
// seq: an event is in many matches (in W1 about 20), and copying its text
// is several times cheaper than encoding it again. The key is the event
// and its seq, so a recycled event never reads another's text. A cache
// holds one encoding: each writer has its own.
type textCache [textCacheSize]struct {
	ev   *event.Event
	seq  int64
	text []byte
}

// append appends e's text, encoding it with render when it is not cached.
func (c *textCache) append(b []byte, e *event.Event, render func([]byte, *event.Event) []byte) []byte {
	s := &c[e.Seq&(textCacheSize-1)]
	if s.ev != e || s.seq != e.Seq {
		s.text = render(s.text[:0], e)
		s.ev, s.seq = e, e.Seq
	}
	return append(b, s.text...)
}
