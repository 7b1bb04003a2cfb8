package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/serve"
	"github.com/sase-cep/sase/session"
	"github.com/sase-cep/sase/source"
)

// start makes a server with cfg, runs the scripts (name: text, written
// to a temporary folder) and serves it on 127.0.0.1 at a free port.
func start(t *testing.T, cfg serve.Config, scripts map[string]string) (*serve.Server, *httptest.Server) {
	t.Helper()
	sv := newServer(t, cfg)
	dir := t.TempDir()
	testkit.WriteFiles(t, dir, scripts)
	var files []string
	for name := range scripts {
		if strings.HasSuffix(name, ".sase") {
			files = append(files, filepath.Join(dir, name))
		}
	}
	if err := sv.RunScripts(context.Background(), files); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(sv.Handler())
	t.Cleanup(hs.Close)
	return sv, hs
}

func newServer(t *testing.T, cfg serve.Config) *serve.Server {
	t.Helper()
	cfg.Session = append([]session.Option{session.WithSettings(settings(t))}, cfg.Session...)
	sv, err := serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sv.Close)
	return sv
}

// settings are reproducible ones: no times, one worker, JSON Lines.
func settings(t *testing.T) session.Settings {
	set := session.DefaultSettings()
	for _, kv := range [][2]string{{"timing", "off"}, {"workers", "1"}, {"format", "jsonl"}} {
		if err := set.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	return set
}

type response struct {
	status int
	body   string
}

func do(t *testing.T, method, url, ctype, body string, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, string(b)}
}

// stmt runs text through the API and decodes the answer.
func stmt(t *testing.T, hs *httptest.Server, text string) (int, result) {
	t.Helper()
	r := do(t, "POST", hs.URL+"/api/statements", "text/plain", text)
	var res result
	if err := json.Unmarshal([]byte(r.body), &res); err != nil {
		t.Fatalf("%s: %v in %q", text, err, r.body)
	}
	return r.status, res
}

type result struct {
	Output   string `json:"output"`
	Messages string `json:"messages"`
	Errors   []struct {
		Message string `json:"message"`
		Source  string `json:"source"`
		Line    int    `json:"line"`
		Column  int    `json:"column"`
		Caret   string `json:"caret"`
		Text    string `json:"text"`
	} `json:"errors"`
}

func TestNewListen(t *testing.T) {
	tests := []struct {
		listen, token string
		ok            bool
	}{
		{"127.0.0.1:0", "", true},
		{"localhost:8080", "", true},
		{"[::1]:0", "", true},
		{"0.0.0.0:8080", "", false},
		{":8080", "", false},
		{"10.1.2.3:80", "", false},
		{"0.0.0.0:8080", "secret", true},
		{"no-port", "secret", false},
	}
	for _, tt := range tests {
		_, err := serve.New(serve.Config{Listen: tt.listen, Token: tt.token})
		if (err == nil) != tt.ok {
			t.Errorf("New(listen %s, token %q): %v, want ok %v", tt.listen, tt.token, err, tt.ok)
		}
		if err != nil && tt.token == "" && strings.HasSuffix(tt.listen, "80") && !strings.Contains(err.Error(), "--token") {
			t.Errorf("New(listen %s): %v does not say --token", tt.listen, err)
		}
	}
}

// TestReady checks /healthz and /readyz, and that the API waits for the
// scripts.
func TestReady(t *testing.T) {
	sv := newServer(t, serve.Config{})
	hs := httptest.NewServer(sv.Handler())
	defer hs.Close()
	for _, c := range []struct {
		path   string
		status int
	}{{"/healthz", 200}, {"/readyz", 503}, {"/api/queries", 503}, {"/metrics", 200}} {
		if r := do(t, "GET", hs.URL+c.path, "", ""); r.status != c.status {
			t.Errorf("before the scripts: GET %s: %d, want %d", c.path, r.status, c.status)
		}
	}
	if err := sv.RunScripts(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/readyz", "/api/queries", "/api/streams"} {
		if r := do(t, "GET", hs.URL+path, "", ""); r.status != 200 {
			t.Errorf("GET %s: %d %s", path, r.status, r.body)
		}
	}
}

func TestAuth(t *testing.T) {
	_, hs := start(t, serve.Config{Listen: "0.0.0.0:0", Token: "s3cret"}, nil)
	tests := []struct {
		header []string
		status int
	}{
		{nil, 401},
		{[]string{"Authorization", "Bearer wrong"}, 401},
		{[]string{"Authorization", "s3cret"}, 401},
		{[]string{"Authorization", "Bearer s3cret"}, 200},
	}
	for _, path := range []string{"/healthz", "/api/queries", "/metrics"} {
		for _, tt := range tests {
			if r := do(t, "GET", hs.URL+path, "", "", tt.header...); r.status != tt.status {
				t.Errorf("GET %s with %q: %d, want %d", path, tt.header, r.status, tt.status)
			}
		}
	}
	// Without a token nothing is asked.
	_, open := start(t, serve.Config{}, nil)
	if r := do(t, "GET", open.URL+"/api/queries", "", ""); r.status != 200 {
		t.Errorf("no token: %d", r.status)
	}
}

func TestStatements(t *testing.T) {
	t.Parallel() // its own server: TestBrowser, which waits on Chromium, starts with it
	_, hs := start(t, serve.Config{Session: stocks()}, nil)
	tests := []struct {
		name, ctype, body string
		status            int
		output, messages  string // contained
		errText           string // the first error's text, contained
		line, col         int
	}{
		{name: "text", ctype: "text/plain", body: "PATTERN SEQ(stock1 a) WHERE a.price > 1000000;",
			status: 200, messages: "(0 matches, 10000 events on stocks)"},
		{name: "json", ctype: "application/json", body: `{"statement": "SET limit = 1; PATTERN SEQ(stock1 a) RETURN a.id;"}`,
			status: 200, output: `{"a.id":`, messages: "stopped at the limit"},
		{name: "show", ctype: "text/plain", body: "SHOW STREAMS;", status: 200, output: `"name":"stocks"`},
		{name: "syntax", ctype: "text/plain", body: "SET limit = 0;\nPATTERN SEQ(stock1 a WITHIN 5;",
			status: 400, errText: "<api>:2:", line: 2},
		{name: "no stream", ctype: "text/plain", body: "PATTERN SEQ(A a) FROM nowhere;",
			status: 400, errText: "no stream named nowhere", line: 1, col: 23},
		{name: "empty", ctype: "text/plain", body: "  ", status: 400, errText: "no statement"},
		{name: "bad json", ctype: "application/json", body: `{"statement": 1}`, status: 400, errText: "is not {"},
		{name: "too long", ctype: "text/plain", body: strings.Repeat(" ", 1<<20+1) + ";", status: 413, errText: "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, "POST", hs.URL+"/api/statements", tt.ctype, tt.body)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			var res result
			if err := json.Unmarshal([]byte(r.body), &res); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Output, tt.output) || !strings.Contains(res.Messages, tt.messages) {
				t.Errorf("output %q, messages %q; want %q, %q", res.Output, res.Messages, tt.output, tt.messages)
			}
			if tt.errText == "" {
				if len(res.Errors) > 0 {
					t.Errorf("errors: %+v", res.Errors)
				}
				return
			}
			if len(res.Errors) == 0 || !strings.Contains(res.Errors[0].Text, tt.errText) {
				t.Fatalf("errors %+v, want %q", res.Errors, tt.errText)
			}
			e := res.Errors[0]
			if tt.line > 0 && (e.Line != tt.line || e.Source != "<api>" || !strings.Contains(e.Caret, "^")) {
				t.Errorf("error at %s:%d:%d caret %q, want line %d with a caret", e.Source, e.Line, e.Column, e.Caret, tt.line)
			}
			if tt.col > 0 && e.Column != tt.col {
				t.Errorf("column %d, want %d", e.Column, tt.col)
			}
		})
	}
}

// TestAnswerBound checks that a statement's results are held up to the
// answer's bound and no further: the answer is built in memory, so one
// whose results did not fit (~75 MB here; SEQ(stock1, stock2, stock3)
// would be 4 GB) took all the server's memory. The query is stopped,
// the answer says why, and the next request runs as before. The server
// has a bound of 1 MiB, a 32 MiB one's behaviour at less cost.
func TestAnswerBound(t *testing.T) {
	t.Parallel()
	if serve.MaxAnswer != 32<<20 {
		t.Fatalf("the bound is %d bytes, the docs say 32 MiB", serve.MaxAnswer)
	}
	sv, hs := start(t, serve.Config{Session: stocks()}, nil)
	const bound = 1 << 20
	serve.SmallAnswers(sv, bound)
	status, res := stmt(t, hs, "PATTERN SEQ(stock1 a, stock2 b); SHOW STREAMS;")
	if status != http.StatusBadRequest {
		t.Fatalf("status %d, want 400; %d bytes of output", status, len(res.Output))
	}
	if n := len(res.Output); n > bound || n < bound/2 {
		t.Errorf("%d bytes of output, want up to the bound of %d", n, bound)
	}
	if len(res.Errors) == 0 || !strings.Contains(res.Errors[0].Text, "at most 1 MiB of results") {
		t.Errorf("errors %+v, want the answer's bound first", res.Errors)
	}
	if strings.Contains(res.Output, `"name":"stocks"`) {
		t.Error("the statement after the one that filled the answer ran")
	}
	status, res = stmt(t, hs, "SET limit = 1; PATTERN SEQ(stock1 a, stock2 b) RETURN a.id;")
	if status != http.StatusOK || !strings.Contains(res.Output, `{"a.id":`) {
		t.Errorf("the next request: status %d, output %q, errors %+v", status, res.Output, res.Errors)
	}
}

func stocks() []session.Option {
	return []session.Option{session.WithBuiltinStream(source.GenerateStocks("stocks", source.DefaultStockConfig()))}
}

// TestDataDir checks the data-dir rule: the scripts read any file, the
// API only those under --data, and none without it.
func TestDataDir(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	testkit.WriteFiles(t, dir, map[string]string{"secret.csv": "type,ts\nA,1\n", "data/ok.csv": "type,ts\nA,1\n"})
	script := map[string]string{"boot.sase": "LOAD '" + filepath.Join(dir, "secret.csv") + "' AS boot;"}
	tests := []struct {
		data, stmt string
		status     int
		errText    string
	}{
		{"", "LOAD '" + filepath.Join(data, "ok.csv") + "';", 400, "may not read or write files"},
		{"", "LISTEN 'tcp://127.0.0.1:0' AS l;", 200, ""},
		{data, "LOAD 'ok.csv';", 200, ""},
		{data, "LOAD '../secret.csv';", 400, "outside the data folder"},
		{data, `\o ../out.txt`, 400, "outside the data folder"},
	}
	for _, tt := range tests {
		t.Run(tt.data+" "+tt.stmt, func(t *testing.T) {
			_, hs := start(t, serve.Config{Data: tt.data}, script)
			status, res := stmt(t, hs, tt.stmt)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %+v", status, tt.status, res)
			}
			if tt.errText != "" && (len(res.Errors) == 0 || !strings.Contains(res.Errors[0].Message, tt.errText)) {
				t.Errorf("errors %+v, want %q", res.Errors, tt.errText)
			}
		})
	}
}

// liveServer starts a server whose script listens on a free port and
// runs query 1 on it; it returns the port's address.
func liveServer(t *testing.T, cfg serve.Config, query string) (*serve.Server, *httptest.Server, string) {
	t.Helper()
	sv, hs := start(t, cfg, map[string]string{"live.sase": "LISTEN 'tcp://127.0.0.1:0' AS s WITH (slack = 1);\n" + query})
	var streams []struct {
		Name, Source string
	}
	if err := json.Unmarshal([]byte(do(t, "GET", hs.URL+"/api/streams", "", "").body), &streams); err != nil || len(streams) != 1 {
		t.Fatalf("streams %v: %v", streams, err)
	}
	return sv, hs, strings.TrimPrefix(streams[0].Source, "tcp://")
}

type queryJSON struct {
	ID      int
	Stream  string
	State   string
	Matches int64
	Events  int64
	Text    string
}

func queries(t *testing.T, hs *httptest.Server) []queryJSON {
	t.Helper()
	var qs []queryJSON
	if err := json.Unmarshal([]byte(do(t, "GET", hs.URL+"/api/queries", "", "").body), &qs); err != nil {
		t.Fatal(err)
	}
	return qs
}

// waitQuery waits until query 1 has read events events and written
// matches matches.
func waitQuery(t *testing.T, hs *httptest.Server, events, matches int64) queryJSON {
	t.Helper()
	for end := time.Now().Add(testkit.Deadline); ; time.Sleep(5 * time.Millisecond) {
		// Both: a query counts an event as it reads it, before the
		// match that event completes is written.
		q := queries(t, hs)[0]
		if q.Events >= events && q.Matches >= matches {
			return q
		}
		if time.Now().After(end) {
			t.Fatalf("query 1 read %d events and wrote %d matches, want %d and %d", q.Events, q.Matches, events, matches)
		}
	}
}

// tick is a punctuation: the stream's time moves past every event.
const tick = ",1000000,\n"

const pairs = "PATTERN SEQ(A a, B b) WITHIN 2 RETURN a.x, b.x;"

// events is n pairs of A and B events, 10 ticks apart.
func events(n int) string {
	var b strings.Builder
	b.WriteString("type,ts,x\n")
	for i := range n {
		fmt.Fprintf(&b, "A,%d,%d\nB,%d,%d\n", 10*i+10, i, 10*i+11, i)
	}
	return b.String()
}

// TestQueries lists, explains, follows and stops a live query.
func TestQueries(t *testing.T) {
	_, hs, addr := liveServer(t, serve.Config{}, pairs)
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Deadline)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL+"/api/queries/1/matches", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	sse := bufio.NewReader(resp.Body)
	if line, _ := sse.ReadString('\n'); !strings.HasPrefix(line, ": following query 1") {
		t.Fatalf("first line %q", line)
	}
	testkit.Send(t, addr, events(3)+"A,100,9\n"+tick)
	var got []string
	for len(got) < 3 {
		line, err := sse.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			got = append(got, strings.TrimSpace(data))
		}
	}
	want := []string{`{"a.x":0,"b.x":0}`, `{"a.x":1,"b.x":1}`, `{"a.x":2,"b.x":2}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("followed %q, want %q", got, want)
	}
	q := waitQuery(t, hs, 7, 3)
	if q.ID != 1 || q.Stream != "s" || q.State != "running" || q.Matches != 3 || q.Text != strings.TrimSuffix(pairs, ";") {
		t.Errorf("query %+v", q)
	}
	for _, c := range []struct{ format, ctype, has string }{
		{"", "text/plain", "Stream s: live"},
		{"json", "application/json", `"`},
		{"dot", "text/vnd.graphviz", "digraph"},
	} {
		r, err := http.Get(hs.URL + "/api/queries/1/explain?format=" + c.format)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), c.ctype) || !strings.Contains(string(body), c.has) {
			t.Errorf("EXPLAIN %q: %d %s %q", c.format, r.StatusCode, r.Header.Get("Content-Type"), body)
		}
		if c.format == "json" && !json.Valid(body) {
			t.Errorf("EXPLAIN json is not JSON: %s", body)
		}
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/api/queries/7", 404},
		{"GET", "/api/queries/x/explain", 404},
		{"GET", "/api/queries/1/explain?format=svg", 400},
		{"POST", "/api/queries/2/stop", 404},
	} {
		if r := do(t, c.method, hs.URL+c.path, "", ""); r.status != c.status {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, r.status, c.status, r.body)
		}
	}
	r := do(t, "POST", hs.URL+"/api/queries/1/stop", "", "")
	if r.status != 200 || !strings.Contains(r.body, `"state": "stopped"`) {
		t.Errorf("stop: %d %s", r.status, r.body)
	}
	if r := do(t, "POST", hs.URL+"/api/queries/1/stop", "", ""); r.status != 409 || !strings.Contains(r.body, "query 1 has stopped") {
		t.Errorf("stop again: %d %s", r.status, r.body)
	}
	rest, _ := io.ReadAll(sse)
	if !strings.Contains(string(rest), "event: end\ndata: {\"query\":1,\"state\":\"stopped\"}") {
		t.Errorf("the follower's end: %q", rest)
	}
}

// stuckWriter is a client that reads nothing: each write waits until
// release is closed.
type stuckWriter struct {
	header  http.Header
	writing chan struct{} // closed at the first write
	once    sync.Once
	release chan struct{}
	mu      sync.Mutex
	buf     strings.Builder
}

func (w *stuckWriter) Header() http.Header { return w.header }
func (w *stuckWriter) WriteHeader(int)     {}
func (w *stuckWriter) Flush()              {}
func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.writing) })
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// TestSlowFollower checks that a follower that does not read is cut off
// and told, while the query goes on writing every match.
func TestSlowFollower(t *testing.T) {
	const n = 50
	log := &testkit.SyncBuffer{}
	sv, hs, addr := liveServer(t, serve.Config{FollowBuffer: 4, Log: log}, pairs)
	w := &stuckWriter{header: http.Header{}, writing: make(chan struct{}), release: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sv.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/api/queries/1/matches", nil))
	}()
	<-w.writing // following, and stuck
	testkit.Send(t, addr, events(n)+"A,100000,9\n"+tick)
	if q := waitQuery(t, hs, 2*n+1, int64(n)); q.Matches != n || q.State != "running" {
		t.Errorf("query %+v, want %d matches while its follower is stuck", q, n)
	}
	if got := strings.Count(log.String(), "\n"); got != n {
		t.Errorf("the log has %d matches, want %d", got, n)
	}
	close(w.release)
	<-done
	out := w.buf.String()
	var data []string
	for line := range strings.Lines(out) {
		if d, ok := strings.CutPrefix(line, "data: {\"a.x\""); ok {
			data = append(data, d)
		}
	}
	if len(data) > 4 || !strings.Contains(out, "event: cutoff\ndata: {\"reason\":\"this follower fell 4 matches behind query 1") {
		t.Errorf("%d matches, then: %q", len(data), out)
	}
	for i, d := range data {
		if want := fmt.Sprintf(":%d,\"b.x\":%d}\n", i, i); d != want {
			t.Errorf("match %d: %q, want %q", i, d, want)
		}
	}
}

// TestMetrics parses /metrics and checks the counters against a known
// stream: read = used + late + rejected, and the query's matches.
func TestMetrics(t *testing.T) {
	_, hs, addr := liveServer(t, serve.Config{Errors: io.Discard}, pairs)
	// 4 pairs, a late A (ts 5 < time 40 - slack 1), a bad line, an event
	// to release the last pair, and a tick to release that event.
	testkit.Send(t, addr, events(4)+"A,5,0\nA,notanumber,1\nA,100,9\n"+tick)
	waitQuery(t, hs, 9, 4)
	fams := scrape(t, hs)
	value := func(name string, labels ...string) float64 {
		t.Helper()
		v, ok := lookup(fams, name, labels...)
		if !ok {
			t.Fatalf("no %s%v in /metrics", name, labels)
		}
		return v
	}
	read := value("sase_stream_lines_read_total", "stream", "s")
	used := value("sase_stream_events_used_total", "stream", "s")
	late := value("sase_stream_events_late_total", "stream", "s")
	rejected := value("sase_stream_lines_rejected_total", "stream", "s")
	if read != 11 || used != 9 || late != 1 || rejected != 1 || read != used+late+rejected {
		t.Errorf("read %v, used %v, late %v, rejected %v; want 11 = 9 + 1 + 1", read, used, late, rejected)
	}
	if m := value("sase_query_matches_total", "query", "1", "stream", "s"); m != 4 {
		t.Errorf("matches %v, want 4", m)
	}
	if e := value("sase_query_events_total", "query", "1"); e != used {
		t.Errorf("query events %v, want the %v used", e, used)
	}
	if s := value("sase_query_state", "query", "1", "state", "running"); s != 1 {
		t.Errorf("state running %v", s)
	}
	if value("go_goroutines") <= 0 {
		t.Error("no goroutines")
	}
}

// scrape reads /metrics with Prometheus' text parser.
func scrape(t *testing.T, hs *httptest.Server) map[string]*dto.MetricFamily {
	t.Helper()
	r := do(t, "GET", hs.URL+"/metrics", "", "")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// lookup is the value of the first counter or gauge called name with
// labels (name, value, name, value...).
func lookup(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
metrics:
	for _, m := range fams[name].GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				found = found || (l.GetName() == labels[i] && l.GetValue() == labels[i+1])
			}
			if !found {
				continue metrics
			}
		}
		if c := m.GetCounter(); c != nil {
			return c.GetValue(), true
		}
		return m.GetGauge().GetValue(), true
	}
	return 0, false
}

// TestMatchDelay checks the histogram of a live query's match delays:
// one observation per match written, in increasing buckets.
func TestMatchDelay(t *testing.T) {
	const n = 5
	_, hs, addr := liveServer(t, serve.Config{}, pairs)
	testkit.Send(t, addr, events(n)+"A,1000,9\n"+tick)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	for end := time.Now().Add(testkit.Deadline); ; time.Sleep(5 * time.Millisecond) {
		fams, err := parser.TextToMetricFamilies(strings.NewReader(do(t, "GET", hs.URL+"/metrics", "", "").body))
		if err != nil {
			t.Fatal(err)
		}
		f := fams["sase_query_match_delay_seconds"]
		if f == nil || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetHistogram().GetSampleCount() < n {
			if time.Now().After(end) {
				t.Fatalf("no histogram of %d matches' delays: %v", n, f)
			}
			continue
		}
		m := f.GetMetric()[0]
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["query"] != "1" || labels["stream"] != "s" {
			t.Errorf("labels %v, want query 1 on s", labels)
		}
		h := m.GetHistogram()
		matches := fams["sase_query_matches_total"].GetMetric()[0].GetCounter().GetValue()
		if h.GetSampleCount() != n || matches != n {
			t.Errorf("%d delays, %v matches; want %d of each", h.GetSampleCount(), matches, n)
		}
		if h.GetSampleSum() < 0 {
			t.Errorf("delays sum to %v s", h.GetSampleSum())
		}
		b := h.GetBucket()
		if len(b) < 2 || b[0].GetUpperBound() > 1e-4 || b[len(b)-1].GetUpperBound() < 1 {
			t.Fatalf("buckets %v, want from at most 100µs to at least 1s", b)
		}
		for i := 1; i < len(b); i++ {
			if b[i].GetUpperBound() <= b[i-1].GetUpperBound() || b[i].GetCumulativeCount() < b[i-1].GetCumulativeCount() || b[i].GetCumulativeCount() > n {
				t.Errorf("bucket %d %v after %v", i, b[i], b[i-1])
			}
		}
		return
	}
}

// TestMainUsage checks sase serve's command line errors.
func TestMainUsage(t *testing.T) {
	t.Setenv("SASE_TOKEN", "") // none from the environment
	tests := []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, 2, "--token"},
		{[]string{"extra"}, 2, "unexpected argument"},
		{[]string{"--format", "xml"}, 2, "--format"},
		{[]string{"--listen", "127.0.0.1:0", "-f", filepath.Join(t.TempDir(), "missing.sase")}, 1, "missing.sase"},
	}
	for _, tt := range tests {
		var stderr strings.Builder
		if got := serve.Main(tt.args, io.Discard, &stderr); got != tt.status || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("sase serve %q: %d %q, want %d %q", tt.args, got, stderr.String(), tt.status, tt.stderr)
		}
	}
}

// TestDashboard checks that the dashboard's files are served, without
// the token (they hold no data; the API behind them still asks for it),
// and that they need nothing from the network.
func TestDashboard(t *testing.T) {
	_, hs := start(t, serve.Config{Listen: "0.0.0.0:0", Token: "s3cret"}, nil)
	tests := []struct {
		path, ctype string
		has         []string
	}{
		{"/", "text/html", []string{`<form id="run">`, `<script src="static/app.js">`, `id="queries"`}},
		{"/static/app.js", "text/javascript", []string{`api("api/statements"`, "api/queries/${id}/matches", "polyline"}},
		{"/static/style.css", "text/css", []string{"svg.spark"}},
	}
	for _, tt := range tests {
		r, err := http.Get(hs.URL + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), tt.ctype) {
			t.Errorf("GET %s: %d %s", tt.path, r.StatusCode, r.Header.Get("Content-Type"))
		}
		for _, s := range append(tt.has, "") {
			if !strings.Contains(string(body), s) {
				t.Errorf("GET %s lacks %q", tt.path, s)
			}
		}
		for _, ext := range []string{"https://", `src="http`, `href="http`, "@import", "url("} {
			if strings.Contains(string(body), ext) {
				t.Errorf("GET %s refers to the network: %q", tt.path, ext)
			}
		}
	}
	for _, path := range []string{"/api/queries", "/static/missing.js", "/nothing"} {
		if r := do(t, "GET", hs.URL+path, "", ""); r.status != 401 && r.status != 404 {
			t.Errorf("GET %s without the token: %d", path, r.status)
		}
	}
	if r := do(t, "GET", hs.URL+"/api/queries", "", ""); r.status != 401 {
		t.Errorf("the API without the token: %d", r.status)
	}
}

// TestRunGraceful runs a server as sase serve does and cancels it, as
// SIGTERM does: a follower gets its end event, the live query stops
// writing its summary, and Run returns.
func TestRunGraceful(t *testing.T) {
	log := &testkit.SyncBuffer{}
	sv := newServer(t, serve.Config{Listen: "127.0.0.1:0", Errors: log})
	dir := t.TempDir()
	testkit.WriteFiles(t, dir, map[string]string{"live.sase": "LISTEN 'tcp://127.0.0.1:0' AS s;\n" + pairs})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- sv.Run(ctx, []string{filepath.Join(dir, "live.sase")}) }()
	testkit.WaitFor(t, log, "query 1 started on s")
	_, rest, _ := strings.Cut(log.String(), "listening on http://")
	url := "http://" + strings.Fields(rest)[0]
	for end := time.Now().Add(testkit.Deadline); do(t, "GET", url+"/readyz", "", "").status != 200; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("never ready")
		}
	}
	resp, err := http.Get(url + "/api/queries/1/matches")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sse := bufio.NewReader(resp.Body)
	sse.ReadString('\n') // following
	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(testkit.Deadline):
		t.Fatal("Run did not return after its context was cancelled")
	}
	rest2, _ := io.ReadAll(sse)
	if !strings.Contains(string(rest2), "event: end\ndata: {\"query\":1,\"state\":\"server closing\"}") {
		t.Errorf("the follower's end: %q", rest2)
	}
	testkit.WaitFor(t, log, "(query 1 stopped: 0 matches, 0 events on s)")
}
