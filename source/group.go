package source

// GroupStats is what one instance of a group (a stream whose partitions
// instances share, as nats:// LISTEN ... WITH (group = 'g') is) does for
// a query, as it is now: the scheme's package fills it, the session and
// sase serve's metrics read it. Lag, pending acks and replays count the
// scheme's messages (for NATS, one event or a batch each).
type GroupStats struct {
	Group     string           // the group's name
	Status    string           // in words, as SHOW QUERIES says it
	Matches   int64            // matches this instance stored
	Total     int              // the stream's partitions (1 for one global consumer)
	Owned     []PartitionStats // the partitions this instance owns now, in order
	Replayed  int64            // messages read again on taking partitions over
	Takeovers int64            // partitions taken over: owned by an owner before (docs/SERVE.md)
}

// PartitionStats is one owned partition's.
type PartitionStats struct {
	Partition   string
	Lag         uint64 // messages not yet delivered to this instance
	PendingAcks int64  // delivered and not acked
}
