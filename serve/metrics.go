package serve

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The metrics are read from the session at each scrape (a collector),
// not counted twice: the streams' and queries' own counters are the
// truth, as SHOW STREAMS and SHOW QUERIES print them.
var (
	streamLabels = []string{"stream"}
	queryLabels  = []string{"query", "stream"}

	mRead     = prometheus.NewDesc("sase_stream_lines_read_total", "Event lines a live stream has read.", streamLabels, nil)
	mUsed     = prometheus.NewDesc("sase_stream_events_used_total", "Events a live stream has delivered to its queries.", streamLabels, nil)
	mLate     = prometheus.NewDesc("sase_stream_events_late_total", "Events a live stream found late (behind its time by more than its slack), not used.", streamLabels, nil)
	mRejected = prometheus.NewDesc("sase_stream_lines_rejected_total", "Lines a live stream rejected (bad input).", streamLabels, nil)
	mTime     = prometheus.NewDesc("sase_stream_time", "A live stream's event time, in its timestamps' ticks.", streamLabels, nil)
	mLag      = prometheus.NewDesc("sase_stream_lag_seconds", "How far a live stream's event time is behind the wall clock (streams with wall-clock timestamps).", streamLabels, nil)
	mMatches  = prometheus.NewDesc("sase_query_matches_total", "Matches a live query has written.", queryLabels, nil)
	mEvents   = prometheus.NewDesc("sase_query_events_total", "Events a live query has read.", queryLabels, nil)
	mState    = prometheus.NewDesc("sase_query_state", "A live query's state: 1 for the one it is in.", append(queryLabels, "state"), nil)
)

// newDelays is the histogram of each live query's match delays: the
// seconds from when the query read the event that completed (or
// released) a match to when it wrote the match (session.WithMatchDelay),
// in buckets from 10µs to 10s, a factor of about 3.2 apart.
func newDelays() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "sase_query_match_delay_seconds",
		Help:    "Seconds from a live query reading the event that completed or released a match to its writing the match.",
		Buckets: prometheus.ExponentialBucketsRange(1e-5, 10, 13),
	}, queryLabels)
}

// collector reads the session's streams and queries at each scrape.
type collector struct{ sv *Server }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{mRead, mUsed, mLate, mRejected, mTime, mLag, mMatches, mEvents, mState} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	c.sv.mu.Lock()
	streams, queries := c.sv.s.Streams(), c.sv.s.Queries()
	c.sv.mu.Unlock()
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
	}
}

// registry is the server's metrics and Go's runtime and process ones.
func (sv *Server) registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{sv}, sv.delays, webhookSent, webhookDropped, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

func (sv *Server) metricsHandler() http.Handler {
	return promhttp.HandlerFor(sv.reg, promhttp.HandlerOpts{ErrorLog: nil})
}
