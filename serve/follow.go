package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
)

// follow streams a query's matches as Server-Sent Events: one event per
// match, its data the match as a JSON object (the jsonl format's line).
// The follower gets a buffer of Config.FollowBuffer matches: one that
// falls further behind is cut off (event "cutoff") and the query goes on
// at its pace. When the query ends the stream ends with event "end".
func (sv *Server) follow(w http.ResponseWriter, r *http.Request) {
	q, ok := sv.queryFor(w, r)
	if !ok {
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "this connection cannot stream")
		return
	}
	f := &follower{lines: make(chan []byte, sv.cfg.FollowBuffer), cut: make(chan struct{})}
	sv.mu.Lock()
	done, stop, err := sv.s.Follow(q.ID, f.deliver)
	sv.mu.Unlock()
	if err != nil {
		writeError(w, http.StatusConflict, err.Error())
		return
	}
	defer stop()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // a proxy must not hold the events back
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, ": following query %d\n\n", q.ID)
	flusher.Flush()
	var buf []byte
	for {
		select {
		case line := <-f.lines:
			// With the matches waiting behind it, in one write.
			buf = appendMatch(buf[:0], line)
			for more := true; more && len(buf) < 64<<10; {
				select {
				case line := <-f.lines:
					buf = appendMatch(buf, line)
				default:
					more = false
				}
			}
			if _, err := w.Write(buf); err != nil {
				return
			}
			flusher.Flush()
		case <-f.cut:
			f.drain(w)
			writeEvent(w, "cutoff", map[string]any{
				"reason": fmt.Sprintf("this follower fell %d matches behind query %d, which does not wait for followers: follow it again", sv.cfg.FollowBuffer, q.ID),
			})
			flusher.Flush()
			return
		case <-done:
			f.drain(w)
			state := "ended"
			if infos := sv.queryInfos(); q.ID <= len(infos) {
				state = infos[q.ID-1].State.String()
			}
			writeEvent(w, "end", map[string]any{"query": q.ID, "state": state})
			flusher.Flush()
			return
		case <-sv.closed:
			writeEvent(w, "end", map[string]any{"query": q.ID, "state": "server closing"})
			flusher.Flush()
			return
		case <-r.Context().Done():
			return
		}
	}
}

// follower is one SSE client's buffer; deliver runs on the query's
// goroutine and never blocks.
type follower struct {
	lines chan []byte
	once  sync.Once
	cut   chan struct{} // closed when the buffer overflowed
}

func (f *follower) deliver(line []byte) {
	select {
	case <-f.cut:
	case f.lines <- bytes.Clone(line):
	default:
		f.once.Do(func() { close(f.cut) })
	}
}

// drain writes the matches still buffered.
func (f *follower) drain(w http.ResponseWriter) {
	for {
		select {
		case line := <-f.lines:
			if _, err := w.Write(appendMatch(nil, line)); err != nil {
				return
			}
		default:
			return
		}
	}
}

// appendMatch appends a match's event: its line as the data.
func appendMatch(b, line []byte) []byte {
	b = append(b, "data: "...)
	b = append(b, bytes.TrimSuffix(line, []byte("\n"))...)
	return append(b, "\n\n"...)
}

func writeEvent(w http.ResponseWriter, name string, v any) {
	data, _ := json.Marshal(v)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
}
