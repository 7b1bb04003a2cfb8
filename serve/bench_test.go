package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/internal/bench"
	"github.com/sase-cep/sase/serve"
	"github.com/sase-cep/sase/session"
	"github.com/sase-cep/sase/source"
)

// BenchmarkLiveW1 is the overhead of serving: W1 on a live tcp stream of
// 100K stock events, run by a session alone, behind the server, and
// behind the server with one SSE follower (with the default buffer, and
// with one of 1M matches, which W1's 688K never overflow). It
// reports events/s (the time from the first event sent to the query
// having read the last) and the matches.
//
//	go test ./serve -run '^$' -bench LiveW1 -benchtime 5x
func BenchmarkLiveW1(b *testing.B) {
	const n = 100_000
	cfg := source.DefaultStockConfig()
	cfg.Events = n
	var csv bytes.Buffer
	if err := source.WriteStocksCSV(&csv, cfg); err != nil {
		b.Fatal(err)
	}
	// One more event past the window releases the last matches; a tick
	// the event.
	input := csv.String() + "stock1,100000000,100000,1,1,1\n,200000000,,,,\n"
	script := "SET format = count; LISTEN 'tcp://127.0.0.1:0' AS s; " + bench.W1 + ";"
	for _, mode := range []string{"session", "serve", "serve+follower", "serve+follower-1M"} {
		b.Run(mode, func(b *testing.B) {
			var elapsed time.Duration
			var matches int64
			for range b.N {
				d, m := runLive(b, mode, script, input, n+1)
				elapsed += d
				matches = m
			}
			b.ReportMetric(float64(n)*float64(b.N)/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(matches), "matches")
			if strings.HasPrefix(mode, "serve+follower") {
				b.ReportMetric(float64(followed.Load())/float64(b.N), "followed/op")
				b.ReportMetric(float64(cutoffs.Load())/float64(b.N), "cutoffs/op")
				followed.Store(0)
				cutoffs.Store(0)
			}
		})
	}
}

// followed and cutoffs count what the follower of serve+follower got
// (when the query has read its events, the follower may still be
// reading).
var followed, cutoffs atomic.Int64

// runLive runs one trial: it returns the time until the query has read
// events events and its matches then.
func runLive(b *testing.B, mode, script, input string, events int64) (time.Duration, int64) {
	var queries func() []session.QueryInfo
	var addr string
	if mode == "session" {
		s := session.New(io.Discard, io.Discard)
		s.Set("timing", "off")
		if err := s.Exec(context.Background(), &ast.Source{Name: "<bench>", Text: script}); err != nil {
			b.Fatal(err)
		}
		s.StartLive()
		defer s.Wait(cancelled())
		queries, addr = s.Queries, strings.TrimPrefix(s.Streams()[0].Source, "tcp://")
	} else {
		buffer := 0 // the default
		if strings.HasSuffix(mode, "-1M") {
			buffer = 1 << 20 // more than the matches: never cut off
		}
		sv, err := serve.New(serve.Config{FollowBuffer: buffer})
		if err != nil {
			b.Fatal(err)
		}
		defer sv.Close()
		if err := sv.RunScripts(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(sv.Handler())
		defer hs.Close()
		post(b, hs.URL+"/api/statements", script)
		var streams []struct{ Source string }
		getJSON(b, hs.URL+"/api/streams", &streams)
		addr = strings.TrimPrefix(streams[0].Source, "tcp://")
		queries = func() []session.QueryInfo {
			var qs []struct{ Events, Matches int64 }
			getJSON(b, hs.URL+"/api/queries", &qs)
			return []session.QueryInfo{{Events: qs[0].Events, Matches: qs[0].Matches}}
		}
		if strings.HasPrefix(mode, "serve+follower") {
			resp, err := http.Get(hs.URL + "/api/queries/1/matches")
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			r := bufio.NewReader(resp.Body)
			r.ReadString('\n') // following: the follower is in place
			go func() {
				for {
					line, err := r.ReadSlice('\n')
					switch {
					case err != nil:
						return
					case bytes.HasPrefix(line, []byte("data: {")):
						followed.Add(1)
					case bytes.HasPrefix(line, []byte("event: cutoff")):
						cutoffs.Add(1)
						return
					}
				}
			}()
		}
	}
	start := time.Now()
	go sendInput(b, addr, input)
	for {
		if q := queries()[0]; q.Events >= events {
			return time.Since(start), q.Matches
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func sendInput(b *testing.B, addr, input string) {
	conn, err := (&net.Dialer{}).Dial("tcp", addr)
	if err != nil {
		b.Error(err)
		return
	}
	defer conn.Close()
	io.WriteString(conn, input)
}

func post(b *testing.B, url, text string) {
	resp, err := http.Post(url, "text/plain", strings.NewReader(text))
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("%s: %s", text, body)
	}
}

func getJSON(b *testing.B, url string, v any) {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		b.Fatal(err)
	}
}
