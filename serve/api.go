package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/session"
	"github.com/sase-cep/sase/syntax"
)

func (sv *Server) routes() {
	sv.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	sv.mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !sv.ready.Load() {
			http.Error(w, "the scripts are running", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
	})
	sv.mux.Handle("GET /metrics", sv.metricsHandler())
	api := map[string]http.HandlerFunc{
		"POST /api/statements":          sv.statements,
		"GET /api/streams":              sv.streams,
		"GET /api/queries":              sv.queries,
		"GET /api/queries/{id}":         sv.query,
		"POST /api/queries/{id}/stop":   sv.stop,
		"GET /api/queries/{id}/explain": sv.explain,
		"GET /api/queries/{id}/matches": sv.follow,
	}
	for pattern, h := range api {
		sv.mux.Handle(pattern, sv.whenReady(h))
	}
}

// whenReady answers 503 until the scripts have run.
func (sv *Server) whenReady(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !sv.ready.Load() {
			writeError(w, http.StatusServiceUnavailable, "not ready: the server's scripts are running")
			return
		}
		h(w, r)
	}
}

// apiError is a statement's error: its message, where it is and the
// caret text that shows it, as the shell prints it.
type apiError struct {
	Message string `json:"message"`
	Source  string `json:"source,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Caret   string `json:"caret,omitempty"` // the statement's line and a caret under the column
	Text    string `json:"text"`            // the whole error as the shell prints it
}

// errorsOf is err as apiErrors: one per positioned error it holds.
func errorsOf(err error) []apiError {
	var list ast.ErrorList
	var one *ast.Error
	switch {
	case errors.As(err, &list) && len(list) > 0:
		out := make([]apiError, len(list))
		for i, e := range list {
			out[i] = positioned(e)
		}
		return out
	case errors.As(err, &one) && one.Src != nil:
		e := positioned(one)
		e.Text = err.Error() // with what wraps it
		return []apiError{e}
	}
	return []apiError{{Message: err.Error(), Text: err.Error()}}
}

func positioned(e *ast.Error) apiError {
	text := e.Error()
	line, col := e.Src.Position(e.Offset)
	_, caret, _ := strings.Cut(text, "\n")
	return apiError{Message: e.Msg, Source: e.Src.Name, Line: line, Column: col, Caret: caret, Text: text}
}

// statementResult is POST /api/statements' answer.
type statementResult struct {
	Output   string     `json:"output"`   // results (a query's rows, SHOW's lists, EXPLAIN's plan)
	Messages string     `json:"messages"` // notes and summaries, as the shell writes on stderr
	Errors   []apiError `json:"errors,omitempty"`
}

// statements runs the body's statements: the text itself, or JSON
// {"statement": "..."}.
func (sv *Server) statements(w http.ResponseWriter, r *http.Request) {
	text, err := statementText(w, r)
	if err != nil {
		status := http.StatusBadRequest
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			status = http.StatusRequestEntityTooLarge
		}
		writeError(w, status, err.Error())
		return
	}
	out, msgs, errs, failed := sv.exec(r.Context(), text)
	status := http.StatusOK
	if failed {
		status = http.StatusBadRequest
	}
	writeJSON(w, status, statementResult{Output: out, Messages: msgs, Errors: errs})
}

func statementText(w http.ResponseWriter, r *http.Request) (string, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return "", fmt.Errorf("reading the statement: %w", err)
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/json" {
		var req struct {
			Statement string `json:"statement"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return "", fmt.Errorf("the body is not {\"statement\": \"...\"}: %w", err)
		}
		body = []byte(req.Statement)
	}
	if strings.TrimSpace(string(body)) == "" {
		return "", errors.New("no statement: send it as the body (text/plain) or as {\"statement\": \"...\"}")
	}
	return string(body), nil
}

type streamJSON struct {
	Name    string    `json:"name"`
	Kind    string    `json:"kind"` // loaded or live
	Source  string    `json:"source"`
	Events  int64     `json:"events"` // a live stream's: used so far
	Types   int       `json:"types"`
	Unit    string    `json:"unit,omitempty"` // a timestamp tick, "1ms"; none for unit-less
	Current bool      `json:"current"`
	Live    *liveJSON `json:"live,omitempty"`
}

// liveJSON is a live stream's counts and event time: read = used + late
// + rejected, once the lines read so far have gone through.
type liveJSON struct {
	Read     int64  `json:"read"`
	Used     int64  `json:"used"`
	Late     int64  `json:"late"`
	Rejected int64  `json:"rejected"`
	Time     *int64 `json:"time,omitempty"` // the stream's time, in its ticks
	MaxTS    *int64 `json:"max_ts,omitempty"`
	Slack    string `json:"slack"`
	Clock    string `json:"clock"`
}

func streamOf(st session.StreamInfo) streamJSON {
	j := streamJSON{Name: st.Name, Kind: st.Kind.String(), Source: st.Source, Events: st.Events, Types: st.Types, Current: st.Current}
	if st.Unit != 0 {
		j.Unit = st.Unit.String()
	}
	if t := st.Time; t != nil {
		j.Live = &liveJSON{Read: t.Read, Used: t.Used, Late: t.Late, Rejected: t.Rejected, Slack: t.Slack, Clock: t.Clock}
		if t.HasTime {
			j.Live.Time, j.Live.MaxTS = &t.Time, &t.MaxTS
		}
	}
	return j
}

type queryJSON struct {
	ID      int    `json:"id"`
	Stream  string `json:"stream"`
	State   string `json:"state"`
	Matches int64  `json:"matches"`
	Events  int64  `json:"events"`
	Text    string `json:"text"`
	Group   string `json:"group,omitempty"`
}

func queryOf(q session.QueryInfo) queryJSON {
	return queryJSON{ID: q.ID, Stream: q.Stream, State: q.State.String(), Matches: q.Matches, Events: q.Events, Text: q.Text, Group: q.Group}
}

func (sv *Server) streams(w http.ResponseWriter, _ *http.Request) {
	sv.mu.Lock()
	infos := sv.s.Streams()
	sv.mu.Unlock()
	list := make([]streamJSON, len(infos))
	for i, st := range infos {
		list[i] = streamOf(st)
	}
	writeJSON(w, http.StatusOK, list)
}

func (sv *Server) queries(w http.ResponseWriter, _ *http.Request) {
	list := []queryJSON{}
	for _, q := range sv.queryInfos() {
		list = append(list, queryOf(q))
	}
	writeJSON(w, http.StatusOK, list)
}

func (sv *Server) queryInfos() []session.QueryInfo {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return sv.s.Queries()
}

// queryFor is the query {id} names, or false after answering 404.
func (sv *Server) queryFor(w http.ResponseWriter, r *http.Request) (session.QueryInfo, bool) {
	id, err := strconv.Atoi(r.PathValue("id"))
	infos := sv.queryInfos()
	if err != nil || id < 1 || id > len(infos) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no query %s (GET /api/queries lists them)", r.PathValue("id")))
		return session.QueryInfo{}, false
	}
	return infos[id-1], true
}

func (sv *Server) query(w http.ResponseWriter, r *http.Request) {
	if q, ok := sv.queryFor(w, r); ok {
		writeJSON(w, http.StatusOK, queryOf(q))
	}
}

// stop is STOP QUERY: it answers once the query has written its matches.
func (sv *Server) stop(w http.ResponseWriter, r *http.Request) {
	q, ok := sv.queryFor(w, r)
	if !ok {
		return
	}
	if _, _, errs, failed := sv.exec(r.Context(), "STOP QUERY "+strconv.Itoa(q.ID)+";"); failed {
		writeJSON(w, http.StatusConflict, statementResult{Errors: errs})
		return
	}
	q, _ = sv.queryFor(w, r)
	writeJSON(w, http.StatusOK, queryOf(q))
}

// explainTypes are EXPLAIN's formats and what they are served as.
var explainTypes = map[string]string{
	"text": "text/plain; charset=utf-8",
	"json": "application/json",
	"dot":  "text/vnd.graphviz; charset=utf-8",
}

// explain is the query's EXPLAIN on its stream as it is now.
func (sv *Server) explain(w http.ResponseWriter, r *http.Request) {
	q, ok := sv.queryFor(w, r)
	if !ok {
		return
	}
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "text"
	}
	ctype, ok := explainTypes[format]
	if !ok {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("format %q: EXPLAIN's formats are text, json and dot", format))
		return
	}
	stmts, err := syntax.Parse(&ast.Source{Name: apiSource, Text: q.Text})
	aq, isQuery := firstQuery(stmts)
	if err != nil || !isQuery {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("query %d's text does not parse again: %v", q.ID, err))
		return
	}
	aq.Explain, aq.Analyze, aq.ExplainFormat = true, false, format
	if aq.From == nil {
		aq.From = &ast.Ident{Name: q.Stream} // the current stream may have changed
	}
	out, _, errs, failed := sv.exec(r.Context(), aq.String()+";")
	if failed {
		writeJSON(w, http.StatusConflict, statementResult{Errors: errs})
		return
	}
	w.Header().Set("Content-Type", ctype)
	io.WriteString(w, out)
}

func firstQuery(stmts []ast.Stmt) (*ast.Query, bool) {
	if len(stmts) != 1 {
		return nil, false
	}
	q, ok := stmts[0].(*ast.Query)
	return q, ok
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// writeError answers {"errors": [{"message": msg}]}, as a failed
// statement's answer is shaped.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, statementResult{Errors: []apiError{{Message: msg, Text: msg}}})
}
