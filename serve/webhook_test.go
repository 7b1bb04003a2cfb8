package serve_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/serve"
)

// hook is a webhook endpoint that answers with the statuses of fail in
// turn, then 200, and keeps the matches of the batches it took.
type hook struct {
	mu       sync.Mutex
	fail     []int
	attempts int
	matches  []string
	bad      string // a body that was not a batch
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.attempts++
	if len(h.fail) > 0 {
		code := h.fail[0]
		if len(h.fail) > 1 || code != http.StatusInternalServerError {
			h.fail = h.fail[1:] // a lone 500 fails for ever
		}
		w.WriteHeader(code)
		return
	}
	var b struct {
		Query   string            `json:"query"`
		Matches []json.RawMessage `json:"matches"`
	}
	if err := json.Unmarshal(body, &b); err != nil || b.Query != "q1" || r.Header.Get("Content-Type") != "application/json" {
		h.bad = string(body)
	}
	for _, m := range b.Matches {
		h.matches = append(h.matches, string(m))
	}
}

func (h *hook) state() (attempts int, matches []string, bad string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.attempts, append([]string(nil), h.matches...), h.bad
}

func TestWebhook(t *testing.T) {
	defer serve.FastWebhook()()
	const n = 5
	tests := []struct {
		name      string
		fail      []int
		delivered bool
		attempts  int // at least
		log       string
	}{
		{name: "ok", delivered: true, attempts: 1},
		{name: "retried", fail: []int{503, 429}, delivered: true, attempts: 3},
		{name: "down", fail: []int{500}, attempts: 5, log: "matches of q1 dropped"},
		{name: "refused", fail: []int{400}, attempts: 1, log: "the endpoint answered 400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &hook{fail: tt.fail}
			end := httptest.NewServer(h)
			defer end.Close()
			errs := &testkit.SyncBuffer{}
			_, hs, addr := liveServer(t, serve.Config{Errors: errs}, "SET output = '"+end.URL+"/hook';\n"+pairs)
			testkit.Send(t, addr, events(n)+"A,100000,9\n"+tick)
			waitQuery(t, hs, 2*n+1, int64(n))
			if r := do(t, "POST", hs.URL+"/api/queries/1/stop", "", ""); r.status != 200 {
				t.Fatalf("stop: %d %s", r.status, r.body)
			}
			attempts, matches, bad := h.state()
			if bad != "" {
				t.Errorf("a body that is not a batch of q1: %q", bad)
			}
			if attempts < tt.attempts {
				t.Errorf("%d attempts, want %d at least", attempts, tt.attempts)
			}
			if tt.name == "refused" && attempts != 1 {
				t.Errorf("a 400 was retried: %d attempts", attempts)
			}
			if tt.delivered {
				if len(matches) != n || matches[0] != `{"a.x":0,"b.x":0}` || matches[n-1] != `{"a.x":4,"b.x":4}` {
					t.Errorf("delivered %q, want %d matches in order", matches, n)
				}
			} else if len(matches) != 0 {
				t.Errorf("delivered %q", matches)
			}
			if tt.log != "" && !strings.Contains(errs.String(), tt.log) {
				t.Errorf("the log lacks %q:\n%s", tt.log, errs)
			}
			if tt.log == "" && strings.Contains(errs.String(), "dropp") {
				t.Errorf("the log reports drops:\n%s", errs)
			}
		})
	}
}

// stuckHook is a webhook endpoint that takes each POST and answers none
// until released (or its client hangs up); it keeps the matches of the
// batches it answered.
type stuckHook struct {
	release chan struct{}
	first   chan struct{} // closed at the first POST
	once    sync.Once
	mu      sync.Mutex
	matches []string
}

func (h *stuckHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.once.Do(func() { close(h.first) })
	select {
	case <-h.release:
	case <-r.Context().Done():
		return
	}
	var b struct{ Matches []json.RawMessage }
	json.Unmarshal(body, &b)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range b.Matches {
		h.matches = append(h.matches, string(m))
	}
}

// TestWebhookQueueFull: an endpoint that does not answer holds one batch
// in flight; the queue (2 batches of one match here) fills behind it, and
// each match past that is dropped, counted and reported at once, while
// the query reads on at its pace. Released before the query ends, the
// endpoint gets the batch in flight and the queue, in order; never
// released, the query's end waits for the queue for a while, then drops
// it too.
func TestWebhookQueueFull(t *testing.T) {
	const queue, n = 2, 6
	defer serve.SmallWebhook(queue, 200*time.Millisecond)()
	tests := []struct {
		name      string
		release   bool
		delivered []string
	}{
		{"released", true, []string{`{"a.x":0,"b.x":0}`, `{"a.x":1,"b.x":1}`, `{"a.x":2,"b.x":2}`}},
		{"never", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &stuckHook{release: make(chan struct{}), first: make(chan struct{})}
			end := httptest.NewServer(h)
			defer end.Close()
			errs := &testkit.SyncBuffer{}
			_, hs, addr := liveServer(t, serve.Config{Errors: errs}, "SET output = '"+end.URL+"/hook';\n"+pairs)
			// The counters are the process's: what this test adds.
			sent0, dropped0 := webhookCounts(t, hs)
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// The first pair's match, released by the next A (slack 1),
			// goes out first and sticks: the queue then fills behind it.
			all := events(n) + "A,100000,9\n" + tick
			first := len("type,ts,x\nA,10,0\nB,11,0\nA,20,1\n")
			io.WriteString(conn, all[:first])
			select {
			case <-h.first:
			case <-time.After(testkit.Deadline):
				t.Fatal("the webhook posted nothing")
			}
			io.WriteString(conn, all[first:])
			conn.Close()
			// The query reads and matches everything while the endpoint
			// holds its first batch.
			waitQuery(t, hs, 2*n+1, n)
			wantDropped := n - 1 - queue
			testkit.WaitFor(t, errs, "dropping matches of q1: its queue of 2 batches is full")
			if _, dropped := webhookCounts(t, hs); dropped-dropped0 != float64(wantDropped) {
				t.Errorf("%v matches dropped while the endpoint is stuck, want %d", dropped-dropped0, wantDropped)
			}
			if tt.release {
				close(h.release)
			} else {
				wantDropped = n
			}
			if r := do(t, "POST", hs.URL+"/api/queries/1/stop", "", ""); r.status != 200 {
				t.Fatalf("stop: %d %s", r.status, r.body)
			}
			testkit.WaitFor(t, errs, fmt.Sprintf(": %d matches of q1 dropped", wantDropped))
			sent, dropped := webhookCounts(t, hs)
			if sent-sent0 != float64(len(tt.delivered)) || dropped-dropped0 != float64(wantDropped) {
				t.Errorf("counted %v sent and %v dropped, want %d and %d", sent-sent0, dropped-dropped0, len(tt.delivered), wantDropped)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if strings.Join(h.matches, " ") != strings.Join(tt.delivered, " ") {
				t.Errorf("delivered %q, want %q", h.matches, tt.delivered)
			}
		})
	}
}

// webhookCounts is /metrics' count of q1's matches sent and dropped.
func webhookCounts(t *testing.T, hs *httptest.Server) (sent, dropped float64) {
	t.Helper()
	fams := scrape(t, hs)
	sent, _ = lookup(fams, "sase_webhook_matches_sent_total", "query", "q1")
	dropped, _ = lookup(fams, "sase_webhook_matches_dropped_total", "query", "q1")
	return sent, dropped
}
