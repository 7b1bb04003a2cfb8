package source

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/sase-cep/sase/event"
)

// typeNames maps type names as a source writes them to type ids: a
// direct-mapped cache by length and last byte (a stream's few names mostly
// differ there) in front of a map, as hashing the name of every row costs
// more than one comparison.
type typeNames struct {
	recent [64]struct {
		name string
		word uint64 // a name of up to 8 bytes as a word (nameWord), else 0
		id   int
	}
	ids   map[string]int
	names []string // by id: the map's keys, for recent
}

// cached returns the id of name when it is short and in recent: compared
// as a word, inlined. name's capacity must be 8 bytes at least (a fast
// path's view of its read buffer). ok false: ask lookup.
func (t *typeNames) cached(name []byte) (id int, ok bool) {
	n := len(name)
	if uint(n-1) >= 8 {
		return 0, false
	}
	w := nameWord(name)
	r := &t.recent[wordSlot(w)]
	return r.id, w == r.word && n == len(r.name)
}

// wordSlot is the slot of recent of a name of up to 8 bytes, as its word
// (stock1 .. stock10 each their own), slotOf a longer one's.
func wordSlot(w uint64) int  { return int(w * 0x9e3779b97f4a7c15 >> 58) }
func slotOf(name []byte) int { return (5*int(name[len(name)-1]) + 13*len(name)) & 63 }

// lookup returns the id of name, and whether it is known.
func (t *typeNames) lookup(name []byte) (int, bool) {
	if len(name) == 0 {
		return 0, false
	}
	var word uint64 // name's, if it is short
	r := &t.recent[slotOf(name)]
	if len(name) <= 8 {
		var w [8]byte
		copy(w[:], name)
		word = nameWord(w[:len(name)])
		r = &t.recent[wordSlot(word)]
	}
	if r.name != "" && r.name == string(name) {
		return r.id, true
	}
	id, ok := t.ids[string(name)]
	if ok {
		r.name, r.id, r.word = t.names[id], id, word
	}
	return id, ok
}

// nameWord is the up to 8 bytes of name as a little-endian word, the
// bytes past them zero; name's capacity is 8 bytes at least.
func nameWord(name []byte) uint64 {
	return le64(unsafe.Pointer(unsafe.SliceData(name)), 0) & (^uint64(0) >> ((64 - 8*len(name)) & 63))
}

// add records name's id.
func (t *typeNames) add(name []byte, id int) {
	if t.ids == nil {
		t.ids = map[string]int{}
	}
	s := string(name)
	t.ids[s] = id
	for len(t.names) <= id {
		t.names = append(t.names, "")
	}
	t.names[id] = s
}

type tsMode uint8

const (
	tsUnknown tsMode = iota
	tsInteger
	tsRFC3339
)

// Bounds on a stream's attributes (variables, for tests). An event holds a
// value for each attribute up to the last one it has, and a nested
// key's name repeats its path: a 12 MB JSON Lines line of a million keys
// took 900 MB, and a 300 KB one of 20,000 keys in an object under a 100
// KB key took 10 GB.
var (
	maxAttrs = 1 << 16 // attributes of a stream
	maxPath  = 1 << 10 // bytes of a nested key's path (a.b.c)
)

// builder assembles a stream's events from rows in input order: it parses and
// checks timestamps, resolves type names and numbers events.
type builder struct {
	file   string // for errors
	opts   Options
	schema *event.Schema
	arena  event.Arena // the events and their values

	mode     tsMode
	first    string // the timestamp that set mode, and its line, for a mix's message
	firstAt  int
	prevTS   int64
	hasPrev  bool
	prevText []byte    // a copy (text is often a view of a read buffer), unless prevInt
	prevInt  bool      // the previous timestamp was written as prevTS is rendered
	cut      bool      // a timestamp lost digits below the tick: noted once
	array    bool      // a JSON array was kept as its text: noted once
	notes    io.Writer // a live source's notes, when opts.Notes is nil

	// The type of the previous row: consecutive rows often share a type, and
	// a string compare is cheaper than a map lookup.
	lastTypeName string
	lastType     int
	seq          int64 // the next event's seq
	presetSeq    bool  // events come numbered (Producer.Seq)

	// run holds events of the arena with Attrs of length runN, not
	// cleared, that the fast paths take one by one from next on (fresh).
	run        []event.Event
	next, runN int

	// tally records the events numbered in the schema, in bulk: Flush
	// before the schema is read (decoding.Schema).
	tally event.Tally

	// collecting says that Collect reads the stream whole and copies its
	// batches before it returns (newBatch).
	collecting bool

	// ord is the stream's event time (reorder.go); nil on a batch LOAD
	// that neither reorders nor sorts, whose events are numbered as they
	// are decoded.
	ord *reorder
}

func newBuilder(file string, opts Options) *builder {
	return &builder{file: file, opts: opts, schema: event.NewSchema(), lastType: -1}
}

func (b *builder) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", b.file, line, fmt.Sprintf(format, args...))
}

// typeID resolves a type name, adding the type on first sight.
func (b *builder) typeID(name string, line int) (int, error) {
	if b.lastType >= 0 && name == b.lastTypeName {
		return b.lastType, nil
	}
	if name == "" {
		return 0, b.errorf(line, "empty type (column %q)", b.opts.typeColumn())
	}
	id := b.schema.AddType(name)
	b.lastTypeName, b.lastType = name, id
	return id, nil
}

// timestamp parses text (an integer or an RFC 3339 time) and checks that
// timestamps do not decrease. RFC 3339 times count milliseconds since the
// epoch, or ticks of Options.TimeUnit when one is given (rounding down).
func (b *builder) timestamp(text []byte, line int) (int64, error) {
	ts, err := b.parseTS(text, line)
	if err != nil {
		return 0, err
	}
	return b.ordered(ts, text, line)
}

// fastTS is a fast path's timestamp: plain says the path read the
// integer n from text already, which stands when the stream's timestamps
// are integers; else text is parsed.
func (b *builder) fastTS(plain bool, n int64, text []byte, line int) (int64, error) {
	if plain && b.mode == tsInteger {
		if b.hasPrev && n >= b.prevTS { // ordered's common case, here
			b.advance(n, text)
			return n, nil
		}
		return b.ordered(n, text, line)
	}
	return b.timestamp(text, line)
}

// ordered checks that ts, parsed from text, does not go back in time, and
// returns it.
func (b *builder) ordered(ts int64, text []byte, line int) (int64, error) {
	// With a slack (or sort = true) the reorder stage decides what an
	// earlier ts is.
	if b.hasPrev && ts < b.prevTS && (b.ord == nil || !b.ord.unordered()) {
		prev := b.prevText
		if b.prevInt {
			prev = strconv.AppendInt(nil, b.prevTS, 10)
		}
		return 0, b.errorf(line, "timestamp %s is before the previous event's %s (timestamps must not decrease)", text, prev)
	}
	if !b.hasPrev || ts >= b.prevTS {
		b.advance(ts, text)
	}
	return ts, nil
}

// advance makes ts, parsed from text, the previous timestamp.
func (b *builder) advance(ts int64, text []byte) {
	b.prevTS, b.hasPrev = ts, true
	// Most texts are ts as an integer is rendered: copied, the text was 25
	// instructions a line.
	if b.prevInt = b.mode == tsInteger && plainInt(text); !b.prevInt {
		b.prevText = append(b.prevText[:0], text...)
	}
}

// plainInt reports whether text, an integer timestamp ([+-]?[0-9]+), is
// written as strconv renders its value: no plus sign, no leading zero.
func plainInt(text []byte) bool {
	c := text[0]
	if c == '-' {
		c = text[1]
	}
	return text[0] != '+' && (c != '0' || len(text) == 1)
}

// parseTS parses a timestamp and checks that the stream does not mix
// integer and RFC 3339 ones.
func (b *builder) parseTS(text []byte, line int) (int64, error) {
	var ts int64
	mode := tsInteger
	if i, ok := smallInt(text); ok {
		ts = i
	} else if i, err := strconv.ParseInt(string(text), 10, 64); err == nil {
		ts = i
	} else {
		t, ok := wallClock(string(text))
		if !ok {
			return 0, b.errorf(line, "bad timestamp %q (want an integer, an RFC 3339 time, YYYY-MM-DD HH:MM:SS[.fff] or epoch seconds with a fraction)", text)
		}
		mode = tsRFC3339
		ts = t.UnixMilli()
		tick := time.Millisecond
		if u := b.opts.TimeUnit; u > time.Millisecond {
			ts, tick = floorDiv(ts, int64(u/time.Millisecond)), u
		}
		b.noteCut(t, tick, string(text), line)
	}
	switch {
	case b.mode == tsUnknown:
		b.mode, b.first, b.firstAt = mode, string(text), line
	case b.mode != mode:
		return 0, b.mixed(text, line)
	}
	return ts, nil
}

// mixed is the error of a timestamp whose kind is not the stream's: it
// says what each is, and why a ts with a fraction (1.5) is a wall-clock
// time, which a user who meant ticks would not guess.
func (b *builder) mixed(text []byte, line int) error {
	hint := ""
	if fraction(string(text)) || fraction(b.first) {
		hint = "; a ts with a fraction is read as epoch seconds: give every line its fraction, or none (ticks are whole)"
	}
	return b.errorf(line, "timestamp %q is %s, but the stream's first, %q on line %d, is %s: a stream's timestamps are all integers or all wall-clock times%s",
		text, tsKind(string(text)), b.first, b.firstAt, tsKind(b.first), hint)
}

// fraction reports whether a timestamp is epoch seconds with a fraction.
func fraction(text string) bool {
	secs, frac, ok := strings.Cut(text, ".")
	return ok && secs != "" && strings.Trim(secs+frac, "0123456789") == ""
}

// tsKind names a timestamp's kind for messages.
func tsKind(text string) string {
	switch {
	case fraction(text):
		return "epoch seconds with a fraction (a wall-clock time)"
	case strings.ContainsAny(text, "-:T") && len(text) > 10:
		return "a date and time (a wall-clock time)"
	}
	return "an integer (ticks)"
}

// smallInt reads [+-]?[0-9]{1,18}, which always fits an int64: what
// strconv.ParseInt and event.ParseCell take as an int, but for longer
// literals (ok false: ask them).
func smallInt(text []byte) (int64, bool) {
	digits := text
	if len(text) > 0 && (text[0] == '-' || text[0] == '+') {
		digits = text[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if text[0] == '-' {
		n = -n
	}
	return n, true
}

// wallClock reads a timestamp that is a time of day: RFC 3339,
// "YYYY-MM-DD HH:MM:SS[.fff]" (UTC), or epoch seconds with a fraction
// (1715678229.5), read exactly, to the nanosecond.
func wallClock(text string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, text); err == nil {
			return t, true
		}
	}
	secs, frac, ok := strings.Cut(text, ".")
	if !ok || frac == "" || len(frac) > 9 || strings.TrimLeft(frac, "0123456789") != "" {
		return time.Time{}, false
	}
	s, err := strconv.ParseInt(secs, 10, 64)
	if err != nil || s < 0 || secs[0] == '+' {
		return time.Time{}, false
	}
	ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	return time.Unix(s, ns).UTC(), true
}

// noteCut notes, once, that a timestamp had digits below the stream's
// tick, which loading drops: two events closer than a tick become
// concurrent. Never silent.
func (b *builder) noteCut(t time.Time, tick time.Duration, text string, line int) {
	if b.cut || t.Sub(t.Truncate(tick)) == 0 {
		return
	}
	b.cut = true
	b.note(line, "timestamp %s is finer than the stream's tick (%s): timestamps are cut to it, so events closer than %s become concurrent", text, tick, tick)
}

// noteArray notes, once, that a JSON array was kept as its JSON text.
func (b *builder) noteArray(key []byte, line int) {
	if b.array {
		return
	}
	b.array = true
	b.note(line, "key %q holds a JSON array: it is kept as its JSON text, a string attribute (this and any other array of the stream)", key)
}

// note says what loading changed in the data without failing: into
// opts.Notes for a LOAD, else on a live source's error writer.
func (b *builder) note(line int, format string, args ...any) {
	text := fmt.Sprintf("%s:%d: ", b.file, line) + fmt.Sprintf(format, args...)
	switch {
	case b.opts.Notes != nil:
		*b.opts.Notes = append(*b.opts.Notes, text)
	case b.notes != nil:
		fmt.Fprintf(b.notes, "warning: %s\n", text)
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// newBatch returns an empty batch with room for n events. A stream that
// Collect reads whole without a reorder stage gets its batches in memory
// the collector does not scan, the arena keeping their events alive
// (event.Arena.Batch): a collection during the load then scans no pointer an
// event.
func (b *builder) newBatch(n int) []*event.Event {
	if b.collecting && b.ord == nil {
		return b.arena.Batch(n)
	}
	return make([]*event.Event, 0, n)
}

// freshRun is how many events fresh takes from the arena at once: a few,
// as a live batch gives back most of them.
const freshRun = 64

// fresh returns an event with Attrs of length n that a fast path sets
// whole (Type, TS and every value; number sets Seq), taken from a run of
// the arena's (event.Arena.Run): a line costs no call to the arena and
// no clearing of what the path writes anyway.
func (b *builder) fresh(n int) *event.Event {
	if b.next < len(b.run) && b.runN == n {
		b.next++
		return &b.run[b.next-1]
	}
	return b.refill(n)
}

// refill takes a new run for fresh, and returns its first event.
func (b *builder) refill(n int) *event.Event {
	b.giveBack()
	b.run, b.runN, b.next = b.arena.Run(freshRun, n), n, 1
	return &b.run[0]
}

// unfresh gives back e, which fresh just returned, unused.
func (b *builder) unfresh(e *event.Event) {
	if b.next > 0 && e == &b.run[b.next-1] {
		b.next--
	}
}

// giveBack gives the events fresh did not hand out back to the arena: at
// the end of a batch, whose events are then all set.
func (b *builder) giveBack() {
	b.arena.Unrun(b.run[b.next:])
	b.run, b.next = nil, 0
}

// number gives a finished event its seq and records it for the schema
// (tally).
func (b *builder) number(e *event.Event) {
	if !b.presetSeq {
		e.Seq = b.seq
	}
	b.seq++
	b.tally.Add(b.schema, e)
}

// sequence gives e its seq: number's first step, for a caller that adds e
// to the tally itself. (Not called by number: the inlined call's mark
// alone is an instruction more a CSV line.)
func (b *builder) sequence(e *event.Event) {
	if !b.presetSeq {
		e.Seq = b.seq
	}
	b.seq++
}

// arrive takes a decoded event, or a punctuation (a tick), in arrival
// order. It returns true when the event is to be delivered now, numbered;
// with a reorder stage it returns false and the stage delivers it (or it
// is late) at release.
func (b *builder) arrive(e *event.Event, line int, text []byte, rec [][]byte) (bool, error) {
	if b.ord == nil {
		if e.IsTick() {
			return false, nil // a loaded stream's time is its events'
		}
		b.number(e)
		return true, nil
	}
	if err := b.ord.setUnit(b.opts, b.unit()); err != nil {
		return false, b.errorf(line, "%v", err)
	}
	if b.presetSeq {
		b.ord.seq = e.Seq
	}
	if e.IsTick() {
		if b.ord.live { // a loaded stream's time is its events'
			b.ord.punct(b, e.TS, line)
		}
		return false, nil
	}
	if b.ord.passes(e.TS) {
		b.number(e)
		return true, nil
	}
	b.ord.arrive(b, e, line, text, rec)
	return false, nil
}

// punctuation returns the tick of a line with a timestamp and no type.
func (b *builder) punctuation(text []byte, line int) (*event.Event, error) {
	ts, err := b.parseTS(text, line)
	if err != nil {
		return nil, err
	}
	return event.Tick(ts), nil
}

// unit is the duration of a tick: the time_unit option, or milliseconds
// for RFC 3339 timestamps.
func (b *builder) unit() time.Duration {
	if b.mode == tsRFC3339 && b.opts.TimeUnit == 0 {
		return time.Millisecond
	}
	return b.opts.TimeUnit
}
