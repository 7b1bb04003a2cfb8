package serve_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

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
