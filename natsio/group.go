package natsio

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"iter"
	"math"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/job"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/source"
)

// A group is the instances that share a stream's partitions (LISTEN ...
// WITH (group = 'g')). Each partition <p>.events has a durable pull
// consumer with a pinned_client priority group, so the server delivers
// it to one instance at a time. The instances list themselves in a KV
// bucket whose keys expire (heartbeats); the one that rendezvous hashing
// ranks first for a partition pulls it, the others hold it as standbys,
// and when its owner's heartbeat expires (or it joins late and ranks
// first) the next one takes over once the server pins it.
//
// A new owner claims the partition's checkpoint key by compare-and-set,
// resets the consumer to its ack floor (redelivery after AckWait would
// replay out of order), runs a fresh query from there, and drops the
// matches it regenerates at or below the last one published on the
// partition's subject; the matches stream's Msg-Id window is the
// backstop. An owner acks an event only once no match can still include
// it (its ts is below the partition's latest ts minus the window) and
// the matches before it are stored; it publishes and acks only after a
// compare-and-set of its checkpoint, so an owner that was paused past its
// pin and lost the partition stops without writing; one that won its pin
// back but missed messages delivered meanwhile (a gap in the consumer
// sequence) starts over from the ack floor.

// Compiled is a query compiled for one partition.
type Compiled struct {
	Query  query.Query
	Schema output.Schema // its rows' (Update is set by RunGroup)
	Window int64         // WITHIN, in the stream's ticks (a book's rule: math.MaxInt64 for none)
}

// A Book is RULE queries that a group instance runs as one rulebook, in
// place of one query: in each partition it owns, one consumer, one pull
// and one decode feed one query.RulePass, and each rule's matches are
// published as the rule's alone would be (its subject, its Msg-Ids,
// its rows). The owner's checkpoint, fence and acks are the book's: one
// fence (GroupConfig.Query names the book) guards every rule's publishes,
// a new owner reads each rule's floor on its own subject, and an event is
// acked only once the widest window among the rules has passed it (a
// rule without one holds every event) and every rule's matches before it
// are stored.
type Book struct {
	Rules []*BookRule
	// Compile compiles the rules on a partition's schema as one rulebook
	// (under the schema's lock, before any event), once per partition
	// owned: rule i's rows and window are Compiled[i]'s.
	Compile func(*event.Schema) (query.Rulebook, []Compiled, error)
	stops   atomic.Int64 // counts Stop's calls: owners end the rules stopped
}

// BookRule is a rule of a Book.
type BookRule struct {
	Name    string      // its query's name in subjects and Msg-Ids
	Stats   *GroupStats // its matches; the rest are the book's (GroupConfig.Stats)
	stopped atomic.Bool
}

// Stop stops rule i of the book on this instance (STOP QUERY on one
// rule): it publishes nothing more, its matches not yet published
// included, and reads no more events; the other rules go on.
func (b *Book) Stop(i int) {
	b.Rules[i].stopped.Store(true)
	b.stops.Add(1)
}

// GroupConfig configures RunGroup.
type GroupConfig struct {
	Server, Stream, Group string
	Matches               string // the matches stream
	Query                 string // the query's name in subjects and Msg-Ids
	// Compile compiles the query on a partition's schema (called under
	// the schema's lock, before any event): once per partition owned.
	Compile func(*event.Schema) (Compiled, error)
	// Book, if not nil, is run in place of the query Compile compiles,
	// and Query names it.
	Book *Book
	// PerPartition runs a query in each partition: exact for a query
	// whose equivalence test holds the publishers' key. Otherwise one
	// instance runs it on the whole stream (the global consumer).
	PerPartition bool
	Format       string
	Options      source.Options
	Member       string        // this instance's name; a random one by default
	PinTTL       time.Duration // how long a silent owner keeps its partitions; 2 s by default
	Errors       io.Writer     // notes on partitions taken and lost
	Stats        *GroupStats   // if not nil, kept up to date
}

const (
	defaultPinTTL = 2 * time.Second
	fetchBatch    = 1024
)

// AckLimits sizes a partition's consumer from the query's window, W
// ticks of unit (0: milliseconds, as RFC 3339 timestamps count).
//
// MaxAckPending holds a window's messages and a fetched batch: a message
// (one event, or a batch of them) is acked only once the window has
// passed its last event, and the server delivers nothing past the limit,
// so the server's default of 1000 stalls a partition whose window holds
// more. Messages per window are estimated from the stream's rate as
// stored (its messages over the wall time
// between its first and last): for a file published at once that rate
// is far above the feed's, and the estimate is doubled; an empty stream
// gives MinAckPending. An owner that reaches the limit with nothing to
// ack doubles it (owner.idle).
//
// AckWait outlasts a window in wall time, and at least an hour: a new
// owner resets the consumer to its ack floor, and a redelivery after
// AckWait would replay out of order.
func AckLimits(st jetstream.StreamState, partitions int, window int64, unit time.Duration) (maxAckPending int, ackWait time.Duration) {
	if unit <= 0 {
		unit = time.Millisecond
	}
	w := time.Duration(window) * unit
	if window <= 0 || w/unit != time.Duration(window) {
		w = 0 // no window, or one past time.Duration
	}
	ackWait = max(time.Hour, 2*w)
	maxAckPending = MinAckPending
	if span := st.LastTime.Sub(st.FirstTime); span > 0 && st.Msgs > 1 && w > 0 {
		perWindow := float64(st.Msgs) / float64(max(partitions, 1)) * (w.Seconds() / span.Seconds())
		maxAckPending = int(min(2*perWindow+fetchBatch, maxAckLimit))
	}
	return max(maxAckPending, MinAckPending), ackWait
}

// MinAckPending is the least MaxAckPending AckLimits gives.
const MinAckPending = 4 * fetchBatch

const maxAckLimit = 1 << 22

// errGroupSlack refuses a group a slack or a wall clock: an owner acks
// the messages whose events its query has run past the window, and
// events the reorder stage holds back have not run.
var errGroupSlack = errors.New("slack and clock = 'wall' are for one instance: a group member acks what its query has run, and would ack events they hold back")

// RunGroup runs cfg's query as one instance of its group until ctx is
// done.
func RunGroup(ctx context.Context, cfg GroupConfig) error {
	if cfg.Options.Slack > 0 || cfg.Options.Clock != "" {
		return errGroupSlack
	}
	if cfg.PinTTL == 0 {
		cfg.PinTTL = defaultPinTTL
	}
	if cfg.Member == "" {
		cfg.Member = nuid.Next()
	}
	if cfg.Errors == nil {
		cfg.Errors = io.Discard
	}
	if cfg.Stats == nil {
		cfg.Stats = &GroupStats{}
	}
	if cfg.Book != nil {
		for _, r := range cfg.Book.Rules {
			if r.Stats == nil {
				r.Stats = &GroupStats{}
			}
			if r.Stats.of == nil { // set before a reader may see it (RunGroupBook)
				r.Stats.of = cfg.Stats
			}
		}
	}
	// The query compiles, and its matches can be told apart, before any
	// partition is taken.
	first, err := compile(cfg, event.NewSchema())
	if err != nil {
		return err
	}
	for i, c := range first.rules {
		switch {
		case namesEvents(c.Schema):
		case cfg.Book != nil:
			return fmt.Errorf("%s: %w", first.names[i], errNoEvents)
		default:
			return errNoEvents
		}
	}
	nc, js, err := Connect(ctx, cfg.Server, "sase "+cfg.Group+" "+cfg.Member)
	if err != nil {
		return err
	}
	defer nc.Close()
	st, err := stream(ctx, js, cfg.Server, cfg.Stream)
	if err != nil {
		return err
	}
	if err := ensureMatches(ctx, js, Target{Server: cfg.Server, Name: cfg.Matches}); err != nil {
		return err
	}
	matches, err := js.Stream(ctx, cfg.Matches)
	if err != nil {
		return err
	}
	parts := []string{GlobalPartition}
	if cfg.PerPartition {
		parts = parts[:0]
		for p := range Partitions(st) {
			parts = append(parts, strconv.Itoa(p))
		}
	}
	// Each owned partition's sink has up to maxInFlight matches
	// unacknowledged: the context's own bound (4,000 by default) must
	// hold them all, or a publish past it fails (stalled) and the
	// partition is retaken and replayed.
	if js, err = jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(publishAsyncLimit(len(parts)*len(first.rules)))); err != nil {
		return err
	}
	g := &group{cfg: cfg, js: js, events: st, matches: matches, running: map[string]bool{}, window: first.window}
	if g.members, err = keyValue(ctx, js, bucketName(cfg, "members"), cfg.PinTTL); err != nil {
		return err
	}
	if g.checkpoints, err = keyValue(ctx, js, bucketName(cfg, "checkpoints"), 0); err != nil {
		return err
	}
	cfg.Stats.mu.Lock()
	cfg.Stats.total = len(parts)
	cfg.Stats.mu.Unlock()
	beat := time.NewTicker(cfg.PinTTL / 4)
	defer beat.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		if err := g.heartbeat(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintf(cfg.Errors, "%s: heartbeat: %v\n", cfg.Member, err)
		}
		for _, p := range parts {
			if g.wants(p) && g.start(p) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					g.work(ctx, p)
				}()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-beat.C:
		}
	}
}

// publishAsyncLimit is the JetStream context's bound on unacknowledged
// async publishes for a member whose sinks may be that many (a sink per
// rule of each partition it may own): the sum of their bounds.
func publishAsyncLimit(sinks int) int { return maxInFlight * max(sinks, 1) }

// compiled is what an owner runs: one query, or a book's rules, each
// with its query's name and stats.
type compiled struct {
	rules  []Compiled
	names  []string
	stats  []*GroupStats
	book   query.Rulebook // nil: rules[0] alone
	window int64          // the widest of the rules'
}

// compile compiles cfg's query or book on sc.
func compile(cfg GroupConfig, sc *event.Schema) (compiled, error) {
	if cfg.Book == nil {
		c, err := cfg.Compile(sc)
		return compiled{rules: []Compiled{c}, names: []string{cfg.Query}, stats: []*GroupStats{cfg.Stats}, window: c.Window}, err
	}
	book, rules, err := cfg.Book.Compile(sc)
	cc := compiled{rules: rules, book: book}
	for i, r := range cfg.Book.Rules {
		cc.names, cc.stats = append(cc.names, r.Name), append(cc.stats, r.Stats)
		if i < len(rules) {
			cc.window = max(cc.window, rules[i].Window)
		}
	}
	return cc, err
}

// bucketName and consumerName are a query's own: two queries of one
// group are two groups of consumers.
func bucketName(cfg GroupConfig, what string) string {
	return "sase_" + cfg.Stream + "_" + cfg.Group + "_" + cfg.Query + "_" + what
}

func consumerName(cfg GroupConfig, p string) string {
	return cfg.Group + "_" + cfg.Query + "_" + p
}

func keyValue(ctx context.Context, js jetstream.JetStream, bucket string, ttl time.Duration) (jetstream.KeyValue, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, TTL: ttl})
	if err != nil {
		return nil, fmt.Errorf("KV bucket %s: %w", bucket, err)
	}
	return kv, nil
}

type group struct {
	cfg                  GroupConfig
	js                   jetstream.JetStream
	events, matches      jetstream.Stream
	members, checkpoints jetstream.KeyValue

	mu      sync.Mutex
	alive   []string        // members with a live heartbeat, this one included
	running map[string]bool // partitions with a worker
	window  int64           // the query's, in ticks
}

// heartbeat refreshes this member's key and reads the others'.
func (g *group) heartbeat(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, g.cfg.PinTTL)
	defer cancel()
	if _, err := g.members.PutString(ctx, g.cfg.Member, "alive"); err != nil {
		return err
	}
	keys, err := g.members.Keys(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return err
	}
	if !slices.Contains(keys, g.cfg.Member) {
		keys = append(keys, g.cfg.Member)
	}
	g.mu.Lock()
	g.alive = keys
	g.mu.Unlock()
	return nil
}

// first is the live member rendezvous hashing ranks first for p.
func (g *group) first(p string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var best string
	var top uint64
	for _, m := range g.alive {
		h := fnv.New64a()
		h.Write([]byte(m + "\x00" + p))
		if s := mix(h.Sum64()); best == "" || s > top {
			best, top = m, s
		}
	}
	return best
}

// mix is SplitMix64's finalizer: FNV alone barely changes its high bits
// between names that differ in their last byte.
func mix(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// wants reports whether this member should pull p: it ranks first.
func (g *group) wants(p string) bool { return g.first(p) == g.cfg.Member }

// start marks p as having a worker, unless it has one.
func (g *group) start(p string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running[p] {
		return false
	}
	g.running[p] = true
	return true
}

func (g *group) stop(p string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.running, p)
}

func (g *group) consumer(ctx context.Context, p string) (jetstream.Consumer, error) {
	parts := 1
	if p != GlobalPartition {
		parts = Partitions(g.events)
	}
	maxAck, ackWait := AckLimits(g.events.CachedInfo().State, parts, g.window, g.cfg.Options.TimeUnit)
	if info, err := g.events.Consumer(ctx, consumerName(g.cfg, p)); err == nil {
		maxAck = max(maxAck, info.CachedInfo().Config.MaxAckPending) // an owner may have raised it
	}
	cfg := jetstream.ConsumerConfig{
		Durable:        consumerName(g.cfg, p),
		AckPolicy:      jetstream.AckAllPolicy,
		AckWait:        ackWait,
		MaxAckPending:  maxAck,
		PriorityPolicy: jetstream.PriorityPolicyPinned,
		PinnedTTL:      g.cfg.PinTTL,
		PriorityGroups: []string{g.cfg.Group},
	}
	if p != GlobalPartition {
		cfg.FilterSubject = p + "." + Subjects(g.events)
	}
	return g.events.CreateOrUpdateConsumer(ctx, cfg)
}

// work pulls p while this member should: waiting as a standby until the
// server pins it, then owning the partition until it hands it over (a
// member ranked first for it has joined) or loses it.
func (g *group) work(ctx context.Context, p string) {
	defer g.stop(p)
	cons, err := g.consumer(ctx, p)
	if err != nil {
		fmt.Fprintf(g.cfg.Errors, "%s: partition %s: %v\n", g.cfg.Member, p, err)
		return
	}
	for ctx.Err() == nil && g.wants(p) {
		// One message says the server has pinned this member.
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(g.cfg.PinTTL/4), jetstream.FetchPriorityGroup(g.cfg.Group))
		if err != nil {
			pause(ctx, g.cfg.PinTTL/8) // a failed request fails at once
			continue
		}
		got := 0
		for range batch.Messages() {
			got++ // read again after the reset
		}
		if got == 0 && !g.orphaned(ctx, p, cons) {
			continue
		}
		if err := g.own(ctx, p, cons, got); err != nil && ctx.Err() == nil {
			fmt.Fprintf(g.cfg.Errors, "%s: partition %s: %v\n", g.cfg.Member, p, err)
		}
	}
}

// pause waits d, or until ctx is done.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// orphaned reports whether p's events wait for an owner that is gone:
// delivered to a member that died or handed p over, and not acked. They
// are not delivered again (until AckWait), and no new event may come to
// show the server has pinned this member: it takes p over at once.
func (g *group) orphaned(ctx context.Context, p string, cons jetstream.Consumer) bool {
	info, err := cons.Info(ctx)
	if err != nil || info.NumAckPending == 0 {
		return false
	}
	// No owner: a member died between its first fetch and its claim, or
	// an owner's run ended (owner.release). This member: its run ended (a
	// gap) and no new event may come.
	var owner string
	if e, err := g.checkpoints.Get(ctx, "p"+p); err == nil {
		owner = string(e.Value())
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return owner == "" || owner == g.cfg.Member || !slices.Contains(g.alive, owner)
}

// errLost ends an owner that another member has fenced out.
var errLost = errors.New("lost the partition to another member")

// own runs the query on p from its ack floor, as its owner, until the
// partition is handed over or lost; probed is the number of messages the
// fetch that found it pinned got.
func (g *group) own(ctx context.Context, p string, cons jetstream.Consumer, probed int) error {
	key := "p" + p
	rev, before, err := g.claim(ctx, key)
	if err != nil {
		return err
	}
	if before {
		g.cfg.Stats.takeovers.Add(1)
	}
	// What an owner before was delivered and did not ack is read again.
	info, err := cons.Info(ctx)
	if err != nil {
		return err
	}
	if _, err := g.js.ResetConsumer(ctx, g.cfg.Stream, consumerName(g.cfg, p)); err != nil {
		return fmt.Errorf("reset to the ack floor: %w", err)
	}
	replays := max(info.NumAckPending-probed, 0)
	g.cfg.Stats.replayed.Add(int64(replays))
	fmt.Fprintf(g.cfg.Errors, "%s: owns partition %s (replays %d messages)\n", g.cfg.Member, p, replays)
	o := &owner{g: g, p: p, key: key, rev: rev, cons: cons, maxAck: cons.CachedInfo().Config.MaxAckPending}
	defer func() {
		if ctx.Err() == nil { // a member that stops lets its heartbeat lapse
			o.release(ctx)
		}
	}()
	return o.run(ctx)
}

// release clears the partition's checkpoint key, unless another member
// has claimed it since: a key names a live member only while its owner
// runs. Another member finds the partition orphaned at once, where a
// key left naming this member would have it wait for an event that may
// never come: this member ends its run (lost at the fence to a member
// that lost in turn, a gap, an error) and may no longer rank first, and
// the member that does sees a live member named, and nothing to fetch.
func (o *owner) release(ctx context.Context) error {
	if o.rev == 0 {
		return nil
	}
	_, err := o.g.checkpoints.Update(ctx, o.key, nil, o.rev)
	o.rev = 0
	return err
}

// claim takes key by compare-and-set: whoever held it fails its next
// check. before says the key existed: the partition had an owner (a
// takeover, GroupStats.Takeovers).
func (g *group) claim(ctx context.Context, key string) (rev uint64, before bool, err error) {
	e, err := g.checkpoints.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		rev, err = g.checkpoints.Create(ctx, key, []byte(g.cfg.Member))
		return rev, false, err
	case err != nil:
		return 0, false, err
	}
	rev, err = g.checkpoints.Update(ctx, key, []byte(g.cfg.Member), e.Revision())
	return rev, true, err
}

// owner is the state of one owned partition.
type owner struct {
	g     *group
	p     string
	key   string
	rev   uint64
	cons  jetstream.Consumer
	sinks []*sinkWriter  // by rule (one for a query)
	pass  query.RulePass // a book's, while it runs
	werr  error          // a book's sink's first error

	src *natsSource
	cfg source.Config

	window    int64
	maxTS     int64
	running   int64       // the seq of the event the query runs
	delivered uint64      // the consumer seq of the last message received; 0 before the first
	maxAck    int         // the consumer's MaxAckPending
	pending   []delivered // handed, not yet acked, in order; those from fresh on not yet run
	fresh     int
	ran       []ranEvent   // the events run since the last settle
	unacked   atomic.Int64 // len(pending), for GroupStats
}

// delivered is a message handed to the query, with its stream seq and,
// once its events have run, the partition's latest ts then.
type delivered struct {
	msg jetstream.Msg
	seq int64
	ts  int64
}

// ranEvent is an event the query has run, and the latest ts then.
type ranEvent struct{ seq, maxTS int64 }

func (o *owner) run(ctx context.Context) error {
	var runErr error
	transport := func(ctx context.Context, feed func(source.Producer) error) error {
		runErr = o.pull(ctx, feed)
		return nil
	}
	c := source.Config{Name: o.g.cfg.Stream + "/" + o.p, Format: o.g.cfg.Format, Options: o.g.cfg.Options, Errors: o.g.cfg.Errors}
	if c.Format == "" {
		c.Format = "jsonl"
	}
	o.src = newNatsSource(&c)
	o.cfg = c
	var err error
	if o.src.Source, err = source.NewLineSource(c.Name, c, transport, nil); err != nil {
		return err
	}
	var cc compiled
	o.src.Schema(func(sc *event.Schema) {
		cc, err = compile(o.g.cfg, sc)
		for i := range cc.rules {
			cc.rules[i].Schema.Events = sc
		}
	})
	if err != nil {
		return err
	}
	o.window = cc.window
	for i, c := range cc.rules {
		c.Schema.Update = o.src.Schema
		w := newSinkWriter(o.g.js, output.SinkConfig{Query: cc.names[i], Schema: c.Schema}, o.p)
		w.hold, w.stored, w.trigger = true, &cc.stats[i].matches, &o.running
		o.sinks = append(o.sinks, w)
	}
	o.g.cfg.Stats.own(o, true)
	defer o.g.cfg.Stats.own(o, false)
	// Fenced first: what an owner before publishes from now on is
	// refused, so the floor read next is final.
	if err := o.fence(ctx); err != nil {
		return err
	}
	if err := o.readFloor(ctx); err != nil {
		return err
	}
	var qerr error
	if cc.book != nil {
		qerr = o.runBook(ctx, cc.book)
	} else {
		_, qerr = job.New(job.Config{Query: cc.rules[0].Query, Source: ownerEvents{o}, Sink: o.sinks[0]}).Run(ctx)
	}
	// The end of the run released matches whose window is still open:
	// they are not complete, and the next owner finds them.
	for _, w := range o.sinks {
		w.held = nil
	}
	if runErr != nil {
		return runErr
	}
	return qerr
}

// ownerEvents is a job's source: the partition's events, each noted as
// run (for the acks) as the query takes it.
type ownerEvents struct{ o *owner }

func (e ownerEvents) Events(ctx context.Context, _ func()) iter.Seq[*event.Event] {
	o := e.o
	return func(yield func(*event.Event) bool) {
		o.src.Read(ctx, func(b []*event.Event) bool {
			for _, e := range b {
				o.maxTS, o.running = max(o.maxTS, e.TS), e.Seq
				o.g.cfg.Stats.read.Add(1)
				o.ran = append(o.ran, ranEvent{e.Seq, o.maxTS})
				if !yield(e) {
					return false
				}
			}
			return true
		})
	}
}

// runBook runs the book's rules over the partition's events in one pass:
// each event is pushed and flushed before the next, so that a rule's
// matches are released on the event that releases them alone (their
// position, by which a replay drops what was published), as a live
// rulebook reads one item at a time.
func (o *owner) runBook(ctx context.Context, book query.Rulebook) error {
	rules := o.g.cfg.Book.Rules
	sinks := make([]query.Sink, len(rules))
	for i, w := range o.sinks {
		r := rules[i]
		sinks[i] = func(row []query.Cell) bool {
			if r.stopped.Load() {
				return false
			}
			if err := w.Row(row); err != nil {
				o.werr = cmp.Or(o.werr, fmt.Errorf("%s: %w", w.query, err))
				return false
			}
			return true
		}
	}
	o.pass = book.Start(ctx, sinks)
	defer func() { o.pass = nil }()
	ended := make([]bool, len(rules))
	stops := int64(-1)
	for e := range (ownerEvents{o}).Events(ctx, nil) {
		if n := o.g.cfg.Book.stops.Load(); n != stops {
			stops = n
			for i, r := range rules {
				if r.stopped.Load() && !ended[i] {
					ended[i] = true
					o.pass.End(i)
				}
			}
		}
		o.pass.Push(e)
		o.pass.Flush()
		if o.werr != nil {
			break
		}
	}
	if err := o.failed(); err != nil {
		return err
	}
	for i, res := range o.pass.Finish() {
		if res.Err != nil && ctx.Err() == nil && !rules[i].stopped.Load() {
			return fmt.Errorf("%s: %w", o.sinks[i].query, res.Err)
		}
	}
	return nil
}

// fence writes this owner's fence message on the partition's fence
// subject, by compare-and-set on the subject's last message, and has the
// sink's publishes name it (see FenceSubject).
func (o *owner) fence(ctx context.Context) error {
	subject := FenceSubject(o.g.cfg.Query, o.p)
	var last uint64
	m, err := o.g.matches.GetLastMsgForSubject(ctx, subject)
	switch {
	case err == nil:
		last = m.Sequence
	case !errors.Is(err, jetstream.ErrMsgNotFound):
		return fmt.Errorf("the fence on %s: %w", subject, err)
	}
	ack, err := o.g.js.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: []byte(o.g.cfg.Member)}, jetstream.WithExpectLastSequencePerSubject(last))
	if casConflict(err) {
		return o.lost()
	}
	if err != nil {
		return fmt.Errorf("the fence on %s: %w", subject, err)
	}
	for _, w := range o.sinks {
		w.fence, w.fenceSeq = subject, ack.Sequence
	}
	return nil
}

// lost notes that another member has taken the partition.
func (o *owner) lost() error {
	fmt.Fprintf(o.g.cfg.Errors, "%s: lost partition %s\n", o.g.cfg.Member, o.p)
	return errLost
}

// readFloor finds the last match published on each rule's subject of the
// partition: a replay drops what it regenerates up to there.
func (o *owner) readFloor(ctx context.Context) error {
	for _, w := range o.sinks {
		m, err := o.g.matches.GetLastMsgForSubject(ctx, w.subject)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("the last match on %s: %w", w.subject, err)
		}
		pos, err := parsePosition(m.Header.Get(HeaderPosition))
		if err != nil {
			return fmt.Errorf("the last match on %s: %w", w.subject, err)
		}
		w.floor, w.floorSet = pos, true
	}
	return nil
}

// pull feeds the partition's messages to the query, checkpointing
// after each fetched batch, until the partition is handed over or lost.
func (o *owner) pull(ctx context.Context, feed func(source.Producer) error) error {
	var msgs <-chan jetstream.Msg
	var got int // the messages of the current batch
	var stop error
	next := func(wait bool) (jetstream.Msg, error) {
		if wait {
			o.settle()
		}
		for {
			if msgs != nil {
				var m jetstream.Msg // nil once the batch is over
				if wait {
					m = <-msgs
				} else {
					select {
					case m = <-msgs:
					default:
					}
				}
				if m != nil {
					seq, err := o.inOrder(m)
					if stop = err; stop != nil {
						return nil, io.EOF
					}
					o.pending = append(o.pending, delivered{msg: m, seq: seq})
					o.unacked.Store(int64(len(o.pending)))
					got++
					return m, nil
				}
				if !wait { // checkpoint when the messages handed have run
					return nil, nil
				}
				msgs = nil
				if stop = o.checkpoint(ctx); stop == nil && got == 0 {
					stop = o.idle(ctx)
				}
				if stop != nil {
					return nil, io.EOF
				}
			}
			if !wait {
				return nil, nil
			}
			if ctx.Err() != nil {
				return nil, io.EOF
			}
			if !o.g.wants(o.p) {
				stop = o.handOver(ctx)
				return nil, io.EOF
			}
			batch, err := o.cons.Fetch(fetchBatch, jetstream.FetchMaxWait(o.g.cfg.PinTTL/4), jetstream.FetchPriorityGroup(o.g.cfg.Group))
			if err != nil {
				pause(ctx, o.g.cfg.PinTTL/8)
				continue
			}
			msgs, got = batch.Messages(), 0
		}
	}
	err := o.src.feedAll(ctx, o.cfg, feed, next)
	if stop != nil {
		return stop
	}
	return err
}

// errGap ends an owner that missed messages delivered to it.
var errGap = errors.New("messages delivered were not received (a lost connection, or the pin lost and won back): replaying from the ack floor")

// inOrder checks that m's delivery follows the last one received: a gap
// in the consumer sequence is messages the server delivered that this
// owner never got (lost with a connection, or delivered to another
// member while this one had lost its pin and then won it back). They
// would come again only after AckWait, out of order, so the owner
// starts over: claim, reset to the ack floor, replay.
func (o *owner) inOrder(m jetstream.Msg) (seq int64, err error) {
	a, ok := ackSeqs(m.Reply())
	if !ok {
		return 0, fmt.Errorf("a message with no JetStream reply subject (%q)", m.Reply())
	}
	last := o.delivered
	o.delivered = a.consumer
	if last != 0 && a.consumer != last+1 {
		return 0, errGap
	}
	return a.stream, nil
}

// settle gives the messages handed since the last call, whose events have
// all run now, the partition's latest ts as of their last event: a
// message with no event (a tick, a bad line) that of the one before it.
// A message is acked once that ts is past the window, so once all its
// events are.
func (o *owner) settle() {
	ts := int64(math.MinInt64)
	if o.fresh > 0 {
		ts = o.pending[o.fresh-1].ts
	}
	j := 0
	for i := o.fresh; i < len(o.pending); i++ {
		for ; j < len(o.ran) && o.ran[j].seq>>SeqIndexBits <= o.pending[i].seq; j++ {
			ts = o.ran[j].maxTS
		}
		o.pending[i].ts = ts
	}
	o.fresh, o.ran = len(o.pending), o.ran[:0]
}

// guard checks, by compare-and-set, that this member still owns the
// partition.
func (o *owner) guard(ctx context.Context) error {
	rev, err := o.g.checkpoints.Update(ctx, o.key, []byte(o.g.cfg.Member), o.rev)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err() // stopped, not fenced out
	case casConflict(err):
		return o.lost()
	case err != nil:
		// The server is out of reach: nobody took the partition.
		return fmt.Errorf("cannot check the partition's ownership (the server is out of reach?): %w", err)
	}
	o.rev = rev
	return nil
}

// checkpoint publishes the matches completed so far and acks the events
// no later match can include.
func (o *owner) checkpoint(ctx context.Context) error {
	held := o.held()
	if held == 0 && !o.ackable() {
		return nil
	}
	if err := o.failed(); err != nil {
		return err // nothing acked: the next owner replays it
	}
	if err := o.guard(ctx); err != nil {
		return err
	}
	if held > 0 && pauseAfterGuard != nil {
		pauseAfterGuard(held)
	}
	if err := o.publish(); err != nil {
		if errors.Is(err, errFenced) {
			return o.lost()
		}
		return err
	}
	return o.ack(ctx, o.ackBelow())
}

// held is the number of sinks (rules) that hold matches to publish.
func (o *owner) held() int {
	n := 0
	for _, w := range o.sinks {
		if len(w.held) > 0 {
			n++
		}
	}
	return n
}

// publish publishes the matches the sinks hold (a stopped rule's are
// dropped), and waits until all are stored.
func (o *owner) publish() error {
	var rules []*BookRule
	if o.g.cfg.Book != nil {
		rules = o.g.cfg.Book.Rules
	}
	for i, w := range o.sinks {
		if rules != nil && rules[i].stopped.Load() {
			w.held = w.held[:0]
		}
		if err := w.sendHeld(); err != nil {
			return err
		}
	}
	for _, w := range o.sinks {
		if err := w.settle(); err != nil {
			return err
		}
	}
	return nil
}

// failed is the error of a book's rule that failed at run time: its
// matches stop, so no event may be acked, as a query that fails alone
// acks none.
func (o *owner) failed() error {
	if o.werr != nil {
		return o.werr
	}
	if o.pass == nil {
		return nil
	}
	if i, err := o.pass.Failed(); err != nil {
		return fmt.Errorf("%s: %w", o.sinks[i].query, err)
	}
	return nil
}

// ackBelow is the ts below which no match can still include an event:
// the partition's latest less the window, the least for no window.
func (o *owner) ackBelow() int64 {
	if o.window == math.MaxInt64 || o.maxTS < math.MinInt64+o.window {
		return math.MinInt64
	}
	return o.maxTS - o.window
}

// pauseAfterGuard, set by a test, runs between an owner's check that it
// still owns its partition and the publishing of its matches: the test
// stops the process there, as SIGSTOP may at any time.
var pauseAfterGuard func(rules int)

// ackable reports whether an event is ready for its ack.
func (o *owner) ackable() bool {
	return o.fresh > 0 && o.pending[0].ts < o.ackBelow()
}

// ack acks (AckAll, confirmed) the delivered messages whose ts is below
// floor.
func (o *owner) ack(ctx context.Context, floor int64) error {
	n := 0
	for n < o.fresh && o.pending[n].ts < floor {
		n++
	}
	if n == 0 {
		return nil
	}
	if err := o.guard(ctx); err != nil {
		return err
	}
	if err := o.pending[n-1].msg.DoubleAck(ctx); err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	o.pending = slices.Delete(o.pending, 0, n)
	o.fresh -= n
	o.unacked.Store(int64(len(o.pending)))
	return nil
}

// idle looks at the consumer when a fetch brought nothing. Messages the
// server counts as delivered and unacked that this owner does not hold
// were lost on their way (a fetch that expired here while the server
// sent them): no later message may come to show the gap, so the owner
// starts over from the ack floor now. And when this owner holds
// MaxAckPending messages and can ack none, the window holds more events
// than the limit and the server would deliver nothing more: the limit
// doubles.
func (o *owner) idle(ctx context.Context) error {
	info, err := o.cons.Info(ctx)
	if err != nil {
		return err
	}
	if info.NumAckPending > len(o.pending) {
		return errGap
	}
	if o.maxAck <= 0 || o.unacked.Load() < int64(o.maxAck) || o.ackable() {
		return nil
	}
	if o.maxAck >= maxAckLimit {
		return fmt.Errorf("%d events in a window, more than %d: no event can be acked", o.unacked.Load(), maxAckLimit)
	}
	cfg := info.Config
	cfg.MaxAckPending = min(2*o.maxAck, maxAckLimit)
	// Updated on the server only: o.cons holds the pin.
	if _, err := o.g.events.UpdateConsumer(ctx, cfg); err != nil {
		return fmt.Errorf("raising MaxAckPending: %w", err)
	}
	fmt.Fprintf(o.g.cfg.Errors, "%s: partition %s: %d events unacked in a window: MaxAckPending raised to %d\n", o.g.cfg.Member, o.p, o.unacked.Load(), cfg.MaxAckPending)
	o.maxAck = cfg.MaxAckPending
	return nil
}

// handOver gives the partition to the member now ranked first for it:
// what is complete is published and acked, and the pin released.
func (o *owner) handOver(ctx context.Context) error {
	if err := o.checkpoint(ctx); err != nil {
		return err
	}
	// Released: the next owner need not wait for a new event.
	if err := o.release(ctx); err != nil {
		return errLost
	}
	fmt.Fprintf(o.g.cfg.Errors, "%s: hands partition %s over\n", o.g.cfg.Member, o.p)
	return o.g.events.UnpinConsumer(ctx, consumerName(o.g.cfg, o.p), o.g.cfg.Group)
}

// groupSource is LISTEN 'nats://...' WITH (group = 'g'): the session
// hands it each query (RunGroupQuery), which it runs with RunGroup. As a
// stream it delivers nothing itself.
type groupSource struct {
	source.Source
	nc    *nats.Conn
	cfg   GroupConfig
	key   string
	parts int

	mu    sync.Mutex
	stats map[string]*GroupStats // by query
}

func newGroupSource(url string, t Target, group string, st jetstream.Stream, c source.Config, nc *nats.Conn) (*groupSource, error) {
	g := &groupSource{nc: nc, key: StreamKey(st), parts: Partitions(st), cfg: GroupConfig{
		Server: t.Server, Stream: t.Name, Group: group, Format: c.Format, Options: c.Options, Errors: c.Errors,
	}}
	// The session's stream: its schema, read by the queries it compiles;
	// its Read waits for Close.
	var err error
	g.Source, err = source.NewLineSource(url, c, func(ctx context.Context, _ func(source.Producer) error) error {
		<-ctx.Done()
		return nil
	}, nc.Close)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return g, nil
}

// RunGroupQuery runs a query as this instance of the group until ctx is
// done, publishing its matches to the output URL's stream.
func (g *groupSource) RunGroupQuery(ctx context.Context, query, out string, partitionedBy func(string) bool,
	compile func(*event.Schema) (query.Query, output.Schema, int64, error)) error {
	cfg, err := g.config(query, out)
	if err != nil {
		return err
	}
	cfg.PerPartition = g.parts > 1 && partitionedBy(g.key)
	cfg.Compile = func(sc *event.Schema) (Compiled, error) {
		q, rows, w, err := compile(sc)
		return Compiled{Query: q, Schema: rows, Window: w}, err
	}
	cfg.Stats = &GroupStats{}
	g.register(query, cfg.Stats)
	return RunGroup(ctx, cfg)
}

// config is the group's GroupConfig for query, publishing to out.
func (g *groupSource) config(query, out string) (GroupConfig, error) {
	u, err := url.Parse(out)
	if err != nil {
		return GroupConfig{}, err
	}
	t, err := ParseURL(u)
	if err != nil {
		return GroupConfig{}, err
	}
	if t.Server != g.cfg.Server {
		return GroupConfig{}, fmt.Errorf("a group publishes its matches to its stream's server %s, not %s", g.cfg.Server, t.Server)
	}
	cfg := g.cfg
	cfg.Matches, cfg.Query = t.Name, query
	if host, err := os.Hostname(); err == nil {
		// Readable in notes, and unique: two sessions may share a process.
		// A nuid's first characters are the same in the whole process.
		id := nuid.Next()
		cfg.Member = SubjectToken(host) + "-" + strconv.Itoa(os.Getpid()) + "-" + id[len(id)-8:]
	}
	return cfg, nil
}

// register keeps query's stats, which GroupStats and GroupSummary read.
func (g *groupSource) register(query string, st *GroupStats) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stats == nil {
		g.stats = map[string]*GroupStats{}
	}
	g.stats[query] = st
}

// RunGroupBook runs RULE queries (their names, q3 ...) as rulebooks of
// this instance of the group until ctx is done, publishing each rule's
// matches as RunGroupQuery would publish its alone. The rules whose
// equivalence test holds the stream's key (partitionedBy) run as one book
// in each partition, the others as one book on the whole stream (the
// global consumer), as each would alone. A book is named by its first
// and last rule (q3-q5; a book of one rule, q3, is that query's group).
// A rule's number sent on stop stops it alone (Book.Stop).
func (g *groupSource) RunGroupBook(ctx context.Context, rules []string, out string, partitionedBy func(rule int, key string) bool,
	compile func(rule int, sc *event.Schema) (query.Query, output.Schema, error),
	rulebook func(*event.Schema, []query.Rule) query.Rulebook, stop <-chan int) error {
	var books [2]*Book // per partition, global
	var which [2][]int // their rules' numbers in rules
	var stats [2]*GroupStats
	for i, name := range rules {
		k := 1
		if g.parts > 1 && partitionedBy(i, g.key) {
			k = 0
		}
		if books[k] == nil {
			books[k], stats[k] = &Book{}, &GroupStats{}
		}
		r := &BookRule{Name: name, Stats: &GroupStats{of: stats[k]}}
		g.register(name, r.Stats)
		books[k].Rules = append(books[k].Rules, r)
		which[k] = append(which[k], i)
	}
	var cfgs []GroupConfig
	for k, b := range books {
		if b == nil {
			continue
		}
		name := b.Rules[0].Name
		if n := len(b.Rules); n > 1 {
			name += "-" + b.Rules[n-1].Name
		}
		cfg, err := g.config(name, out)
		if err != nil {
			return err
		}
		cfg.PerPartition, cfg.Stats, cfg.Book = k == 0, stats[k], b
		b.Compile = func(sc *event.Schema) (query.Rulebook, []Compiled, error) {
			qs := make([]query.Rule, len(which[k]))
			cs := make([]Compiled, len(which[k]))
			for j, i := range which[k] {
				q, rows, err := compile(i, sc)
				if err != nil {
					return nil, nil, err
				}
				w, ok := q.Window()
				if !ok {
					w = math.MaxInt64
				}
				qs[j], cs[j] = query.Rule{Name: rules[i], Query: q}, Compiled{Query: q, Schema: rows, Window: w}
			}
			return rulebook(sc, qs), cs, nil
		}
		cfgs = append(cfgs, cfg)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case i := <-stop:
				for k, b := range books {
					if j := slices.Index(which[k], i); j >= 0 {
						b.Stop(j)
					}
				}
			}
		}
	}()
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for j, cfg := range cfgs {
		wg.Go(func() {
			if errs[j] = RunGroup(ctx, cfg); errs[j] != nil {
				cancel() // one book failing ends both, as the rules' statement failed
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// GroupSummary is what this instance did for a query, for the note at its
// end: the matches it stored and the events it read.
func (g *groupSource) GroupSummary(query string) string {
	g.mu.Lock()
	st := g.stats[query]
	g.mu.Unlock()
	if st == nil {
		return (&GroupStats{}).Summary()
	}
	return st.Summary()
}

// GroupStats is what this instance does for a query RunGroupQuery runs:
// the matches it stored, its partitions and their counters.
func (g *groupSource) GroupStats(query string) source.GroupStats {
	g.mu.Lock()
	st := g.stats[query]
	g.mu.Unlock()
	if st == nil {
		return source.GroupStats{Group: g.cfg.Group} // not started yet
	}
	return st.Stats(g.cfg.Group)
}
