package source

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/minheap"
)

// reorder is a stream's event time (docs/LANGUAGE.md, Event time): it
// takes the events in arrival order and releases them in stable ts order,
// holding back only those within the slack of the largest ts seen, so its
// memory is bounded by the events within the slack. It decides which
// events are late, and on a live stream it follows each release with a
// tick at the stream's time, so matches waiting on time come out.
//
// The decoders hand it each event (arrive) and each punctuation (punct)
// under the decoding lock, and take what it releases at the end of each
// batch (release). A source without a slack, a clock or sort = true, and
// not live, has none: its path is today's.
type reorder struct {
	slack int64 // in ticks; ignored with sortAll
	// wall is the wall clock of clock = 'wall' (nil without one); lag,
	// like slack, is in ticks of unit, the stream's (0 until known).
	wall    func() time.Time
	lag     int64
	unit    time.Duration
	sortAll bool // sort = true: hold everything, release at the end
	unord   bool // see unordered
	live    bool // emit ticks

	hasMax bool
	max    int64 // M: the largest ts that arrived
	now    int64 // the stream's time: no event below it is used
	hasNow bool
	ticked int64 // the time the queries know: the last tick or event released
	// seq is the preset seq (Producer.Seq) of the last line arrived, an
	// event or a punctuation: the tick it releases has it, so a match a
	// tick releases has a position a replay reproduces.
	seq        int64
	punctuated bool  // a punctuation arrived since the last release
	arrival    int64 // arrival numbers keep equal ts in arrival order
	// The events held: in a ring when the slack is small (set at the
	// first event, when the slack's unit is known), else pending.
	ring    *ring
	pending pending

	late int64
	// behind counts the punctuation lines below the stream's time,
	// reported as behindReport says.
	behind       int64
	behindReport reporter
	lateW        io.Writer // late = 'path', or nil
	lateFile     io.Closer
	lateCSV      *csv.Writer
	lateBuf      bytes.Buffer
	// header is a CSV source's header (its first producer's), which the
	// late file, when it was empty at the start (headless), gets before
	// its first line: it then loads as CSV.
	header   []string
	headless bool
	report   reporter
	errs     io.Writer
	name     string // the stream's, for the report's last line
}

// unitName is a unit's name as WITHIN writes it, for messages.
func unitName(d time.Duration) string {
	for _, u := range event.TimeUnits() {
		if u.Duration == d {
			return u.Name
		}
	}
	return d.String()
}

// reorders reports whether a source with these options needs the stage:
// it reorders, sorts, keeps a clock, or is live (punctuation advances a
// live stream's time).
func (o Options) reorders(live bool) bool {
	return live || o.Slack > 0 || o.Sort || o.Clock != ""
}

// held is an event waiting, with its ts at hand: comparing does not
// chase the pointer.
type held struct {
	ts, arrival int64
	e           *event.Event
}

// pending holds the events not yet released, to hand them out by (ts,
// arrival): those that arrive in order (most of them) queue in run, at no
// cost; the others wait in a min-heap. Neither boxes an event.
type pending struct {
	run  []held // in (ts, arrival) order, from head on
	head int
	heap minheap.Heap[held]
}

// Less orders held events by (ts, arrival).
func (a held) Less(b held) bool {
	return a.ts < b.ts || a.ts == b.ts && a.arrival < b.arrival
}

func (p *pending) len() int { return len(p.run) - p.head + p.heap.Len() }

func (p *pending) push(h held) {
	if n := len(p.run); n == p.head || !h.Less(p.run[n-1]) {
		if p.head > 0 && p.head >= len(p.run)/2 { // reuse what was released
			n := copy(p.run, p.run[p.head:])
			clear(p.run[n:])
			p.run, p.head = p.run[:n], 0
		}
		p.run = append(p.run, h)
		return
	}
	p.heap.Push(h)
}

// min is the next event to release; p must not be empty.
func (p *pending) min() *event.Event {
	if p.fromRun() {
		return p.run[p.head].e
	}
	return p.heap.Min().e
}

// fromRun reports whether the next event is the run's rather than the
// heap's; p must not be empty.
func (p *pending) fromRun() bool {
	return p.heap.Len() == 0 || p.head < len(p.run) && p.run[p.head].Less(p.heap.Min())
}

// pop removes and returns the next event; p must not be empty.
func (p *pending) pop() *event.Event {
	if p.fromRun() {
		e := p.run[p.head].e
		p.run[p.head] = held{}
		p.head++
		return e
	}
	return p.heap.Pop().e
}

// horizon is the time the largest ts says the stream has reached: M −
// slack, or nothing with sort = true.
func (r *reorder) horizon() (int64, bool) {
	if !r.hasMax || r.sortAll {
		return 0, false
	}
	if r.max < math.MinInt64+r.slack {
		return math.MinInt64, true
	}
	return r.max - r.slack, true
}

// advance moves the stream's time to t if that is later.
func (r *reorder) advance(t int64) {
	if !r.hasNow || t > r.now {
		r.now, r.hasNow = t, true
	}
}

// isLate reports whether an event at ts would be used after the stream's
// time has passed it.
func (r *reorder) isLate(ts int64) bool {
	r.clock()
	return r.hasNow && ts < r.now
}

// clock advances the stream's time to now − slack − lag by the wall
// clock, once the stream's unit is known.
func (r *reorder) clock() {
	if r.wall == nil || r.unit == 0 {
		return
	}
	ticks := floorDiv(r.wall().UnixMilli(), int64(r.unit/time.Millisecond))
	r.advance(ticks - r.slack - r.lag)
}

// setUnit converts the slack and lag to ticks once the stream's unit is
// known: from time_unit at the start, or at the first RFC 3339 timestamp.
func (r *reorder) setUnit(o Options, unit time.Duration) error {
	if r.unit != 0 || unit == 0 && o.SlackUnit == 0 && r.wall == nil {
		return nil
	}
	if unit == 0 {
		if r.wall != nil {
			return fmt.Errorf("clock = 'wall' needs wall-clock timestamps (RFC 3339, or a time_unit); this stream's are unit-less integers")
		}
		return fmt.Errorf("slack = '%d %s' is a duration, but the stream's timestamps are unit-less integers: give the slack in ticks, or the stream a time_unit", o.Slack, unitName(o.SlackUnit))
	}
	r.unit = unit
	if o.SlackUnit != 0 {
		r.slack = o.Slack * int64(o.SlackUnit) / int64(unit)
	}
	r.lag = int64(o.Lag / unit)
	return nil
}

// arrive takes a decoded event: it holds it until release, or when it is
// late counts, reports and writes it to the late file. line and text (a
// JSON or CSV line as read), or rec (a CSV file's record), name its input.
func (r *reorder) arrive(b *builder, e *event.Event, line int, text []byte, rec [][]byte) {
	if r.isLate(e.TS) {
		r.lateEvent(b, e.TS, line, text, rec)
		return
	}
	if !r.hasMax || e.TS > r.max {
		r.max, r.hasMax = e.TS, true
	}
	if h, ok := r.horizon(); ok {
		r.advance(h)
	}
	if r.arrival == 0 && !r.sortAll && r.slack <= ringMaxSlack {
		r.ring = newRing(r.slack)
	}
	r.arrival++
	if r.ring != nil {
		r.ring.pass(r.now) // what is below the stream's time is final, and the ring spans the slack above it
		r.ring.push(e)
		return
	}
	r.pending.push(held{ts: e.TS, arrival: r.arrival, e: e})
}

// passes takes an event that nothing holds: no slack, clock or sort, no
// event held before it, and not late. release would hand it out next,
// with no tick (it says the stream's time), so the decoder appends it
// itself: a live stream in order costs no ring.
func (r *reorder) passes(ts int64) bool {
	if r.slack != 0 || r.wall != nil || r.sortAll || r.ring != nil || r.pending.len() > 0 || r.hasNow && ts < r.now {
		return false
	}
	r.max, r.hasMax = ts, true // ts ≥ now = max − 0
	r.advance(ts)
	r.ticked = ts
	return true
}

// punct takes a punctuation line's ts: the stream's time reaches it.
// The decoder releases at once (punctuated): the tick then has its
// place among the events, whatever lines a batch holds.
func (r *reorder) punct(b *builder, ts int64, line int) {
	r.clock()
	if r.hasNow && ts < r.now {
		// Time does not go back: the line says nothing, but its producer
		// is wrong about the stream's time, which it should hear.
		r.behind++
		r.behindReport.skipped(b.errorf(line, "punctuation ts %d is below the stream's time %d: time does not go back", ts, r.now), r.behind)
		return
	}
	r.advance(ts)
	r.punctuated = true
}

// lateEvent accounts for a late event.
func (r *reorder) lateEvent(b *builder, ts int64, line int, text []byte, rec [][]byte) {
	r.late++
	err := b.errorf(line, "late event: ts %d is below the stream's time %d (%s)", ts, r.now, r.timeFrom())
	r.report.skipped(err, r.late)
	if r.headless && r.header != nil {
		r.headless = false
		r.writeLate(b, r.csvLine(b, r.header))
	}
	if text == nil {
		cells := make([]string, len(rec)) // views of the read buffer, and late events are rare
		for i, c := range rec {
			cells[i] = string(c)
		}
		text = r.csvLine(b, cells)
	} else if len(text) == 0 || text[len(text)-1] != '\n' {
		text = append(slices.Clip(text), '\n')
	}
	r.writeLate(b, text)
}

// timeFrom says what set the stream's time, for a late event's message:
// before the first event there is no largest ts, only a punctuation or
// the wall clock.
func (r *reorder) timeFrom() string {
	from := "no event yet"
	if r.hasMax {
		from = fmt.Sprintf("largest ts %d", r.max)
	}
	if r.wall != nil {
		return fmt.Sprintf("clock = 'wall' less slack %d and lag %d; %s", r.slack, r.lag, from)
	}
	return fmt.Sprintf("%s, slack %d", from, r.slack)
}

// csvLine encodes cells as a line of the source's CSV (its delimiter).
func (r *reorder) csvLine(b *builder, cells []string) []byte {
	r.lateBuf.Reset()
	if r.lateCSV == nil {
		r.lateCSV = csv.NewWriter(&r.lateBuf)
		r.lateCSV.Comma = b.opts.delimiter()
	}
	r.lateCSV.Write(cells) // into a buffer: cannot fail
	r.lateCSV.Flush()
	return r.lateBuf.Bytes()
}

// writeLate appends a line to the late file; after a failed write it
// writes no more.
func (r *reorder) writeLate(b *builder, text []byte) {
	if r.lateW == nil {
		return
	}
	if _, err := r.lateW.Write(text); err != nil {
		fmt.Fprintf(r.errs, "%s: writing a late event: %v\n", b.file, err)
		r.lateW = nil
	}
}

// release appends to batch, numbered, the events the stream's time has
// passed, and on a live stream a tick at that time when it moved.
func (r *reorder) release(b *builder, batch []*event.Event) []*event.Event {
	r.clock()
	r.punctuated = false
	if r.ring != nil && r.hasNow {
		r.ring.passThrough(r.now)
		var last int64
		if batch, last = r.ring.take(b, batch); last != math.MinInt64 {
			r.ticked = last
		}
	}
	for r.pending.len() > 0 && r.hasNow && r.pending.min().TS <= r.now {
		e := r.pending.pop()
		b.number(e)
		batch = append(batch, e)
		r.ticked = e.TS // an event says its time already
	}
	if r.live && r.hasNow && r.ticked < r.now {
		r.ticked = r.now
		t := event.Tick(r.now)
		t.Seq = r.seq
		batch = append(batch, t)
	}
	return batch
}

// held is how many events the stage holds: read, not yet released.
func (r *reorder) held() int64 {
	n := r.pending.len()
	if r.ring != nil {
		n += r.ring.n + len(r.ring.ready)
	}
	return int64(n)
}

// drain appends every held event in order, at the end of the input.
func (r *reorder) drain(b *builder, batch []*event.Event) []*event.Event {
	if r.ring != nil {
		r.ring.passThrough(math.MaxInt64)
		batch, _ = r.ring.take(b, batch)
	}
	for r.pending.len() > 0 {
		e := r.pending.pop()
		b.number(e)
		batch = append(batch, e)
	}
	return batch
}

// newReorder is the stage of a source with options o: it opens the late
// file, so that an unwritable path fails before any event is read.
func newReorder(name string, o Options, live bool, errs io.Writer, wall func() time.Time) (*reorder, error) {
	switch {
	case o.Sort && live:
		return nil, fmt.Errorf("sort = true is for a batch LOAD: a live stream cannot wait for its end (give it a slack)")
	case o.Clock != "" && !live:
		return nil, fmt.Errorf("clock = 'wall' is for a live stream (LOAD '-', FOLLOW, LISTEN)")
	}
	r := &reorder{name: name, slack: o.Slack, sortAll: o.Sort, live: live, errs: errs, ticked: math.MinInt64,
		unord:        o.Slack > 0 || o.Sort || o.Clock != "",
		report:       reporter{w: errs, now: time.Now, what: "late"},
		behindReport: reporter{w: errs, now: time.Now, what: "behind the stream's time"}}
	if o.Clock != "" {
		r.wall = wall
	}
	if o.Late != "" {
		f, err := os.OpenFile(o.Late, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("late = '%s': %w", o.Late, err)
		}
		r.lateW, r.lateFile = f, f
		if fi, err := f.Stat(); err == nil && fi.Size() == 0 {
			r.headless = true
		}
	}
	return r, nil
}

// close says how many late lines were not shown, and closes the late
// file.
func (r *reorder) close() {
	r.report.finish(r.name, r.late)
	r.behindReport.finish(r.name, r.behind)
	if r.lateFile != nil {
		r.lateFile.Close()
		r.lateFile = nil
	}
}

// unordered reports whether arrivals may go back in ts: a slack, sort =
// true or a wall clock make the stage, not the decoder, judge them.
func (r *reorder) unordered() bool { return r.unord }

// timed is a source that decodes with a builder: each of this package's.
type timed interface{ decodingOf() *decoding }

func (d *decoding) decodingOf() *decoding { return d }

// collect says that Collect reads the stream whole, and copies its
// batches into the stream's Events before it returns: until then the
// batches need not keep their events alive (builder.newBatch).
func (d *decoding) collect() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.b.collecting = true
	d.b.arena.KeepAll()
}

// withTime gives a source its reorder stage and where it reports skipped
// and late lines; Open and Load call it on every source they open.
func withTime(src Source, c Config) (Source, error) {
	t, ok := src.(timed)
	if !ok {
		return src, nil
	}
	d := t.decodingOf()
	o := d.b.opts
	switch s := src.(type) {
	case *csvFile:
		s.report = reporter{w: c.Errors, now: time.Now}
	case *lineSource:
		s.errs, s.report = c.Errors, reporter{w: c.Errors, now: time.Now}
		if o.Clock != "" {
			s.clock = c.Clock
		}
	}
	if src.Live() {
		d.b.arena.Live()
	}
	if !o.reorders(src.Live()) && o.Late == "" {
		return src, nil
	}
	wall := c.Clock.Now
	r, err := newReorder(d.b.file, o, src.Live(), c.Errors, wall)
	if err != nil {
		src.Close()
		return nil, err
	}
	if o.TimeUnit != 0 {
		r.setUnit(o, o.TimeUnit) // cannot fail with a unit
	}
	d.b.ord = r
	return src, nil
}

// collectTimed is Collect of a finite source with its reorder stage
// (LoadCSV, LoadJSONL).
func collectTimed(src Source, opts Options) (*event.Stream, error) {
	src, err := withTime(src, newConfig(WithOptions(opts)))
	if err != nil {
		return nil, err
	}
	return Collect(context.Background(), src)
}

// EventTime is a live stream's event time, as SHOW STREAMS and EXPLAIN
// give it.
type EventTime struct {
	Slack string // "0", "50" (ticks) or "5 s"
	Clock string // "events" (its ts and punctuation) or "wall"
	Lag   time.Duration
	Stats // Time, MaxTS (HasTime) and Late
}

// EventTime returns the stream's slack, clock, time, largest ts and late
// count.
func (l *Live) EventTime() EventTime {
	et := EventTime{Stats: l.src.Stats(), Clock: "events", Slack: "0"}
	t, ok := l.src.(timed)
	if !ok {
		return et
	}
	o := t.decodingOf().b.opts
	if o.Slack != 0 {
		et.Slack = strconv.FormatInt(o.Slack, 10)
		if o.SlackUnit != 0 {
			et.Slack += " " + unitName(o.SlackUnit)
		}
	}
	if o.Clock != "" {
		et.Clock, et.Lag = o.Clock, o.Lag
	}
	return et
}

// String is EXPLAIN's line: "slack 50, clock events".
func (et EventTime) String() string {
	s := "slack " + et.Slack + ", clock " + et.Clock
	if et.Lag != 0 {
		s += ", lag " + et.Lag.String()
	}
	return s
}
