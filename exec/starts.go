package exec

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/queue"
)

// Starts holds the first state's instances of pair runs that begin
// alike (the same types enter their first state, through the same
// filters, keyed on the same attribute) once for all of them: a
// rulebook's rules that share a first component read one stack, pushed
// once at a start, where each pushed its own (at 10,000 rules, a start
// event was pushed to about 56 rules). Each run reads the instances in
// its own window: a rulebook pushes a batch's starts before its runs
// read the batch, so a run finds the end of the starts before its event
// from where it found it last (its cursor), on their timestamps kept
// apart, and their beginning walking down from there.
type Starts struct {
	lead  *aisSSC  // the first run's scan: its filters are every run's
	types []uint64 // bit t set when type t enters the first state
	ins   []instance
	ts    []int64 // ins[i]'s event's
	lo    int     // ins[:lo] are pruned
	// base is the number of starts pushed before ins[0]: a cursor is
	// base plus its index, valid as live starts move down.
	base   int
	window int64 // the runs' largest window; -1 when one has none
}

// StartsKey says whether the run may read its starts from a Starts (its
// scan is a pair, it does not follow time, and its first state's
// filters compare an attribute with a constant, so that testing them
// cannot fail), and the key that the runs sharing one must have alike.
func (p *Pusher) StartsKey() (string, bool) {
	s := p.pairScan()
	if s == nil {
		return "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "key %d; types", s.pairKey[0])
	for t, m := range s.typeStates {
		if m&1 != 0 {
			fmt.Fprintf(&b, " %d", t)
		}
	}
	for _, f := range s.filters.list {
		if f.bit != 1 {
			continue
		}
		if !f.isConst {
			return "", false
		}
		fmt.Fprintf(&b, "; %s", f.pred.Text)
	}
	return b.String(), true
}

// pairScan is the run's scan when it is a pair and the run does not
// follow time, else nil.
func (p *Pusher) pairScan() *aisSSC {
	if a, ok := p.r.src.(aisPair); ok && p.r.timed == nil && a.shared == nil {
		return a.aisSSC
	}
	return nil
}

// Share has the run read its starts from s, a Starts of runs with its
// StartsKey (nil: a new one, of this run's kind), which it returns. The
// caller pushes s every event that may start one of them before the
// runs read it, and prunes it as time passes; the run no longer reads
// the events that only start it (the caller counts them).
func (p *Pusher) Share(s *Starts) *Starts {
	a := p.pairScan()
	if s == nil {
		s = &Starts{lead: a, types: make([]uint64, (len(a.typeStates)+63)/64), window: a.window}
		for t, m := range a.typeStates {
			s.types[t/64] |= m & 1 << (t % 64)
		}
	}
	if a.window < 0 || s.window < 0 {
		s.window = -1
	} else {
		s.window = max(s.window, a.window)
	}
	a.shared = s
	// The first state's types no longer enter the run's own stack.
	a.pairTypes[0] = 0
	for t := range a.typeStates {
		a.typeStates[t] &^= 1
	}
	return s
}

// Types are the types that enter the runs' first state.
func (s *Starts) Types() []int {
	var ts []int
	for w, word := range s.types {
		for ; word != 0; word &= word - 1 {
			ts = append(ts, w*64+bits.TrailingZeros64(word))
		}
	}
	return ts
}

// Push pushes ev when it enters the runs' first state. Events come in
// time order.
func (s *Starts) Push(ev *event.Event) {
	if t := uint(ev.Type); t/64 >= uint(len(s.types)) || s.types[t/64]>>(t%64)&1 == 0 {
		return
	}
	a := s.lead
	if a.filters.apply(a.bind, ev, 1) == 0 {
		return
	}
	if queue.Due(len(s.ins), cap(s.ins), s.lo) {
		s.ins, s.ts, s.base, s.lo = queue.Down(s.ins, s.lo), queue.Down(s.ts, s.lo), s.base+s.lo, 0
	}
	key, isInt := keyAt(int(a.pairKey[0]), ev)
	s.ins = append(s.ins, instanceOf(ev, -1, key, isInt))
	s.ts = append(s.ts, ev.TS)
}

// between is the starts from minTS on and before ts, for a run whose
// cursor is at: the run's items come in time order, so the end moves
// only up.
func (s *Starts) between(minTS, ts int64, at *int) []instance {
	hi := max(*at-s.base, s.lo)
	for hi < len(s.ts) && s.ts[hi] < ts {
		hi++
	}
	*at = s.base + hi
	lo := hi
	for lo > s.lo && s.ts[lo-1] >= minTS {
		lo--
	}
	return s.ins[lo:hi]
}

// Prune drops the starts no run reads once time is ts: a run reads
// events in time order, so the earliest start it reads is its window
// before ts.
func (s *Starts) Prune(ts int64) {
	if s.window < 0 {
		return
	}
	minTS := satSub(ts, s.window)
	lo := s.lo
	for lo < len(s.ts) && s.ts[lo] < minTS {
		lo++
	}
	clear(s.ins[s.lo:lo]) // the events they held may go
	s.lo = lo
}
