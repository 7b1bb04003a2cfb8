package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/output"
)

// The webhook sink: SET output = 'http://host/path' (or https://) POSTs
// a live query's matches as JSON batches, {"query": "q1", "matches":
// [{...}, ...]}, each match as the jsonl format writes it. A batch goes
// when it holds webhookRows matches or the query waits for input. The
// query never waits for the endpoint: batches queue (at most
// webhookQueue), a failed POST is retried with backoff, and a batch that
// does not fit the queue or fails webhookAttempts times is dropped,
// counted (sase_webhook_dropped_total) and reported.

func init() {
	output.RegisterSink("http", openWebhook)
	output.RegisterSink("https", openWebhook)
}

var (
	webhookRows     = 256
	webhookQueue    = 64
	webhookAttempts = 5
	webhookBackoff  = 100 * time.Millisecond // doubled after each failure
	webhookDrain    = 10 * time.Second       // Finish's wait for the queue
)

var (
	webhookSent = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sase_webhook_matches_sent_total", Help: "Matches a webhook sink delivered.",
	}, []string{"query"})
	webhookDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sase_webhook_matches_dropped_total", Help: "Matches a webhook sink dropped: its queue was full, or the endpoint failed every attempt.",
	}, []string{"query"})
)

type webhook struct {
	url, query string
	errs       io.Writer
	enc        sase.Encode
	buf        []byte // the batch being made: {"query":..,"matches":[a,b
	rows       int
	queue      chan batch
	ctx        context.Context
	cancel     context.CancelFunc
	done       chan struct{}
	dropped    atomic.Int64
	reportOnce sync.Once
}

type batch struct {
	body []byte
	rows int
}

func openWebhook(_ context.Context, u *url.URL, c output.SinkConfig) (output.Writer, error) {
	if u.Host == "" {
		return nil, fmt.Errorf("output %s: a webhook needs a host: http://host:port/path", u)
	}
	errs := c.Errors
	if errs == nil {
		errs = io.Discard
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &webhook{url: u.String(), query: c.Query, errs: errs,
		enc:   output.New(output.JSONL, io.Discard, c.Schema).(output.Chunked).NewEncoder(),
		queue: make(chan batch, webhookQueue), ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go w.send()
	return w, nil
}

func (w *webhook) Row(cells []sase.Cell) error {
	if w.rows == 0 {
		w.buf = fmt.Appendf(w.buf[:0], `{"query":%q,"matches":[`, w.query)
	} else {
		w.buf = append(w.buf, ',')
	}
	w.buf = bytes.TrimSuffix(w.enc(w.buf, cells), []byte("\n"))
	w.rows++
	if w.rows >= webhookRows {
		w.Sync()
	}
	return nil
}

// Sync queues the batch made so far; a full queue drops it.
func (w *webhook) Sync() error {
	if w.rows == 0 {
		return nil
	}
	b := batch{body: append(bytes.Clone(w.buf), "]}\n"...), rows: w.rows}
	w.rows = 0
	select {
	case w.queue <- b:
	default:
		w.drop(b.rows, "its queue of %d batches is full (the endpoint is slower than the query)", webhookQueue)
	}
	return nil
}

// Finish sends what is queued, waiting webhookDrain at most, and reports
// the matches it dropped.
func (w *webhook) Finish() error {
	w.Sync()
	close(w.queue)
	select {
	case <-w.done:
	case <-time.After(webhookDrain):
		w.cancel()
		<-w.done
	}
	w.cancel()
	if n := w.dropped.Load(); n > 0 {
		err := fmt.Errorf("webhook %s: %d matches of %s dropped", w.url, n, w.query)
		fmt.Fprintf(w.errs, "%v\n", err)
		return err
	}
	return nil
}

func (w *webhook) drop(rows int, why string, args ...any) {
	w.dropped.Add(int64(rows))
	webhookDropped.WithLabelValues(w.query).Add(float64(rows))
	w.reportOnce.Do(func() {
		fmt.Fprintf(w.errs, "webhook %s: dropping matches of %s: %s (counted in sase_webhook_matches_dropped_total; reported again at the end)\n",
			w.url, w.query, fmt.Sprintf(why, args...))
	})
}

// send posts the queued batches in order.
func (w *webhook) send() {
	defer close(w.done)
	client := &http.Client{Timeout: 10 * time.Second}
	for b := range w.queue {
		if w.ctx.Err() != nil {
			w.drop(b.rows, "the query ended before the endpoint took them")
			continue
		}
		if err := w.post(client, b); err != nil {
			w.drop(b.rows, "%v", err)
			continue
		}
		webhookSent.WithLabelValues(w.query).Add(float64(b.rows))
	}
}

// post sends one batch, retrying a network error, a 5xx or a 429 with
// backoff.
func (w *webhook) post(client *http.Client, b batch) error {
	wait := webhookBackoff
	var err error
	for attempt := 1; ; attempt++ {
		err = w.postOnce(client, b)
		if err == nil || attempt >= webhookAttempts || !retryable(err) {
			break
		}
		select {
		case <-time.After(wait):
		case <-w.ctx.Done():
			return fmt.Errorf("%w (and the query ended)", err)
		}
		wait *= 2
	}
	if err != nil && retryable(err) {
		return fmt.Errorf("%w, after %d attempts", err, webhookAttempts)
	}
	return err
}

// statusError is a POST's answer that is not 2xx.
type statusError struct{ code int }

func (e statusError) Error() string { return fmt.Sprintf("the endpoint answered %d", e.code) }

func retryable(err error) bool {
	if s, ok := err.(statusError); ok {
		return s.code >= 500 || s.code == http.StatusTooManyRequests
	}
	return true // the network
}

func (w *webhook) postOnce(client *http.Client, b batch) error {
	req, err := http.NewRequestWithContext(w.ctx, "POST", w.url, bytes.NewReader(b.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return statusError{resp.StatusCode}
	}
	return nil
}
