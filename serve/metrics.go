package serve

import (
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sase-cep/sase/source"
)

// The metrics are read from the session at each scrape (a collector),
// not counted twice: the streams' and queries' own counters are the
// truth, as SHOW STREAMS and SHOW QUERIES print them.
var (
	streamLabels = []string{"stream"}
	queryLabels  = []string{"query", "stream"}
	groupLabels  = []string{"query", "stream", "group"}
	partLabels   = append(groupLabels[:len(groupLabels):len(groupLabels)], "partition")

	mRead     = prometheus.NewDesc("sase_stream_lines_read_total", "Event lines a live stream has read.", streamLabels, nil)
	mUsed     = prometheus.NewDesc("sase_stream_events_used_total", "Events a live stream has delivered to its queries.", streamLabels, nil)
	mLate     = prometheus.NewDesc("sase_stream_events_late_total", "Events a live stream found late (behind its time by more than its slack), not used.", streamLabels, nil)
	mRejected = prometheus.NewDesc("sase_stream_lines_rejected_total", "Lines a live stream rejected (bad input).", streamLabels, nil)
	mTime     = prometheus.NewDesc("sase_stream_time", "A live stream's event time, in its timestamps' ticks.", streamLabels, nil)
	mLag      = prometheus.NewDesc("sase_stream_lag_seconds", "How far a live stream's event time is behind the wall clock (streams with wall-clock timestamps).", streamLabels, nil)
	mMatches  = prometheus.NewDesc("sase_query_matches_total", "Matches a live query has written.", queryLabels, nil)
	mEvents   = prometheus.NewDesc("sase_query_events_total", "Events a live query has read.", queryLabels, nil)
	mState    = prometheus.NewDesc("sase_query_state", "A live query's state: 1 for the one it is in.", append(queryLabels, "state"), nil)
	mDelay    = prometheus.NewDesc("sase_query_match_delay_seconds", "Seconds from a live query reading the event that completed or released a match to its writing the match.", queryLabels, nil)

	// A NATS group query's, as this instance runs it: the counts of lag,
	// pending acks and replays are of messages (an event or a batch).
	mOwned     = prometheus.NewDesc("sase_nats_group_partitions_owned", "Partitions of a group query's stream this instance owns now.", groupLabels, nil)
	mParts     = prometheus.NewDesc("sase_nats_group_partitions", "Partitions of a group query's stream (1: one global consumer).", groupLabels, nil)
	mGroupLag  = prometheus.NewDesc("sase_nats_group_lag_messages", "Messages of an owned partition not yet delivered to this instance.", partLabels, nil)
	mAcks      = prometheus.NewDesc("sase_nats_group_pending_acks", "Messages of an owned partition delivered to this instance and not acked.", partLabels, nil)
	mReplayed  = prometheus.NewDesc("sase_nats_group_replayed_messages_total", "Messages this instance read again on taking partitions over.", groupLabels, nil)
	mTakeovers = prometheus.NewDesc("sase_nats_group_takeovers_total", "Partitions this instance took over: began owning after an owner before.", groupLabels, nil)
)

// delayBuckets is the number of the match delay histogram's buckets,
// delayBounds their upper bounds: 10µs to 10s, a factor of about 3.2
// apart.
const delayBuckets = 13

var delayBounds = func() []time.Duration {
	var ds []time.Duration
	for _, b := range prometheus.ExponentialBucketsRange(1e-5, 10, delayBuckets) {
		ds = append(ds, time.Duration(b*float64(time.Second)))
	}
	return ds
}()

// delays is a live query's histogram of match delays
// (session.WithMatchDelay), counted on the query's goroutine with two
// atomic adds and no allocation, and read at each scrape: a
// prometheus.Histogram would cost several times more per match.
type delays struct {
	query, stream string
	counts        [delayBuckets + 1]atomic.Int64 // per bucket of delayBounds, then past the last
	sum           atomic.Int64                   // nanoseconds
}

func (d *delays) observe(v time.Duration) {
	i, _ := slices.BinarySearch(delayBounds, v) // the first bound >= v
	d.counts[i].Add(1)
	d.sum.Add(int64(v))
}

// metric is the histogram as it is now.
func (d *delays) metric() prometheus.Metric {
	buckets := make(map[float64]uint64, len(delayBounds))
	var n uint64
	for i, b := range delayBounds {
		n += uint64(d.counts[i].Load())
		buckets[b.Seconds()] = n
	}
	n += uint64(d.counts[len(delayBounds)].Load())
	sum := time.Duration(d.sum.Load()).Seconds()
	return prometheus.MustNewConstHistogram(mDelay, n, sum, buckets, d.query, d.stream)
}

// collector reads the session's streams and queries at each scrape.
type collector struct{ sv *Server }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{mRead, mUsed, mLate, mRejected, mTime, mLag, mMatches, mEvents, mState, mDelay,
		mOwned, mParts, mGroupLag, mAcks, mReplayed, mTakeovers} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	c.sv.mu.Lock()
	streams, queries, ds := c.sv.s.Streams(), c.sv.s.Queries(), c.sv.delays
	c.sv.mu.Unlock()
	for _, d := range ds {
		ch <- d.metric()
	}
	now := time.Now()
	for _, st := range streams {
		t := st.Time
		if t == nil {
			continue // a loaded stream does not change
		}
		for _, m := range []struct {
			d *prometheus.Desc
			v int64
		}{{mRead, t.Read}, {mUsed, t.Used}, {mLate, t.Late}, {mRejected, t.Rejected}} {
			ch <- prometheus.MustNewConstMetric(m.d, prometheus.CounterValue, float64(m.v), st.Name)
		}
		if t.HasTime {
			ch <- prometheus.MustNewConstMetric(mTime, prometheus.GaugeValue, float64(t.Time), st.Name)
			if st.Unit != 0 {
				lag := now.Sub(time.Unix(0, t.Time*int64(st.Unit)))
				ch <- prometheus.MustNewConstMetric(mLag, prometheus.GaugeValue, lag.Seconds(), st.Name)
			}
		}
	}
	for _, q := range queries {
		id := strconv.Itoa(q.ID)
		ch <- prometheus.MustNewConstMetric(mMatches, prometheus.CounterValue, float64(q.Matches), id, q.Stream)
		ch <- prometheus.MustNewConstMetric(mEvents, prometheus.CounterValue, float64(q.Events), id, q.Stream)
		ch <- prometheus.MustNewConstMetric(mState, prometheus.GaugeValue, 1, id, q.Stream, q.State.String())
		if g := q.GroupStats; g != nil {
			collectGroup(ch, g, id, q.Stream)
		}
	}
}

// collectGroup sends a NATS group query's metrics.
func collectGroup(ch chan<- prometheus.Metric, g *source.GroupStats, query, stream string) {
	gauge, counter := prometheus.GaugeValue, prometheus.CounterValue
	ch <- prometheus.MustNewConstMetric(mOwned, gauge, float64(len(g.Owned)), query, stream, g.Group)
	ch <- prometheus.MustNewConstMetric(mParts, gauge, float64(g.Total), query, stream, g.Group)
	ch <- prometheus.MustNewConstMetric(mReplayed, counter, float64(g.Replayed), query, stream, g.Group)
	ch <- prometheus.MustNewConstMetric(mTakeovers, counter, float64(g.Takeovers), query, stream, g.Group)
	for _, p := range g.Owned {
		ch <- prometheus.MustNewConstMetric(mGroupLag, gauge, float64(p.Lag), query, stream, g.Group, p.Partition)
		ch <- prometheus.MustNewConstMetric(mAcks, gauge, float64(p.PendingAcks), query, stream, g.Group, p.Partition)
	}
}

// registry is the server's metrics and Go's runtime and process ones.
func (sv *Server) registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{sv}, webhookSent, webhookDropped, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

func (sv *Server) metricsHandler() http.Handler {
	return promhttp.HandlerFor(sv.reg, promhttp.HandlerOpts{ErrorLog: nil})
}
