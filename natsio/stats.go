package natsio

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sase-cep/sase/source"
)

// GroupStats is what one member does for a query, as SHOW QUERIES lists
// it: the matches it stored, the messages it replayed on taking
// partitions over, and the partitions it owns now with their lag and
// pending acks. Lag, pending acks and replays count messages, as the
// server does: a batch of events is one. Safe for concurrent use.
type GroupStats struct {
	matches   atomic.Int64
	replayed  atomic.Int64
	takeovers atomic.Int64
	read      atomic.Int64

	mu     sync.Mutex
	owners map[*owner]bool
	total  int // the stream's partitions (1 for the global consumer)
	// of is, for a book's rule, the book's: its partitions and counters
	// are the rule's, its matches its own.
	of *GroupStats
}

// book is the stats that count s's partitions, events and replays.
func (s *GroupStats) book() *GroupStats {
	if s.of != nil {
		return s.of
	}
	return s
}

// Matches is the number of matches this member has stored.
func (s *GroupStats) Matches() int64 { return s.matches.Load() }

// Read is the number of events this member's queries have run, those
// read again on a takeover included.
func (s *GroupStats) Read() int64 { return s.book().read.Load() }

// Summary is what this member did, for the note at a query's end:
// "1672 matches stored, 60000 events read".
func (s *GroupStats) Summary() string {
	return plural(s.Matches(), "match", "matches") + " stored, " + plural(s.Read(), "event", "events") + " read"
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// Replayed is the number of messages this member read again from the ack
// floor on taking partitions over: delivered to an owner before, not
// acked.
func (s *GroupStats) Replayed() int64 { return s.book().replayed.Load() }

// Takeovers is the number of times this member took a partition over:
// began owning one that had an owner before (its checkpoint key existed:
// another member, dead, paused, stopped or handing it over, or this one
// in a run that ended), as opposed to being a partition's first owner.
// Each replays from the partition's ack floor.
func (s *GroupStats) Takeovers() int64 { return s.book().takeovers.Load() }

// PartitionStats is one owned partition's: Lag is its consumer's
// messages not yet delivered (num pending).
type PartitionStats = source.PartitionStats

// Partitions lists the partitions owned now, in order.
func (s *GroupStats) Partitions() []PartitionStats {
	s = s.book()
	s.mu.Lock()
	ps := make([]PartitionStats, 0, len(s.owners))
	for o := range s.owners {
		ps = append(ps, PartitionStats{Partition: o.p, Lag: o.src.pending.Load(), PendingAcks: o.unacked.Load()})
	}
	s.mu.Unlock()
	slices.SortFunc(ps, func(a, b PartitionStats) int {
		x, errX := strconv.Atoi(a.Partition)
		y, errY := strconv.Atoi(b.Partition)
		if errX != nil || errY != nil {
			return strings.Compare(a.Partition, b.Partition)
		}
		return x - y
	})
	return ps
}

// Stats is the counters as they are now; group names the group.
func (s *GroupStats) Stats(group string) source.GroupStats {
	total := s.book().partitions()
	return source.GroupStats{Group: group, Status: s.String(), Matches: s.Matches(), Total: total,
		Owned: s.Partitions(), Replayed: s.Replayed(), Takeovers: s.Takeovers()}
}

// String is "partitions 1 4 of 8, lag 0, 12 pending acks, 57 replayed
// (messages)": the counts are of messages, one event or a batch each.
func (s *GroupStats) String() string {
	ps := s.Partitions()
	if len(ps) == 0 {
		return fmt.Sprintf("standby, %d replayed (messages)", s.Replayed())
	}
	var b strings.Builder
	var lag uint64
	var acks int64
	b.WriteString("partitions")
	for _, p := range ps {
		b.WriteString(" " + p.Partition)
		lag, acks = lag+p.Lag, acks+p.PendingAcks
	}
	total := s.book().partitions()
	fmt.Fprintf(&b, " of %d, lag %d, %d pending acks, %d replayed (messages)", total, lag, acks, s.Replayed())
	return b.String()
}

// partitions is the stream's partitions (1 for the global consumer).
func (s *GroupStats) partitions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

func (s *GroupStats) own(o *owner, on bool) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owners == nil {
		s.owners = map[*owner]bool{}
	}
	if on {
		s.owners[o] = true
	} else {
		delete(s.owners, o)
	}
}
