package session

import (
	"strconv"
	"sync"
	"time"

	"github.com/sase-cep/sase/job"
)

// The session counts how far a long statement has got; the shell draws
// it as a progress line on a terminal. Counting is off unless the session
// was made with TrackProgress, so scripts pay nothing for it.

// Progress is how far the running statement has got.
type Progress struct {
	Work    string // what runs: "query", "EXPLAIN ANALYZE", "LOAD 'x.csv'", "GENERATE STOCKS"
	Events  int64  // events read so far (queries)
	Total   int64  // events the query will read; 0: unknown
	Matches int64  // matches so far (queries)
	Elapsed time.Duration
}

// String is the progress line: "query: 1.2M of 3.0M events (40%), 5021
// matches, 812.0K events/s, 2.31s".
func (p Progress) String() string {
	b := append([]byte(p.Work), ": "...)
	if p.Events > 0 || p.Total > 0 {
		b = append(b, formatCount(p.Events)...)
		if p.Total > 0 {
			b = append(b, " of "...)
			b = append(b, formatCount(p.Total)...)
			b = append(b, " events ("...)
			b = strconv.AppendInt(b, p.Events*100/p.Total, 10)
			b = append(b, "%), "...)
		} else {
			b = append(b, " events, "...)
		}
		b = append(b, plural(p.Matches, "match", "matches")...)
		if secs := p.Elapsed.Seconds(); secs > 0 {
			b = append(b, ", "...)
			b = append(b, formatRate(float64(p.Events)/secs)...)
			b = append(b, " events/s"...)
		}
		b = append(b, ", "...)
	}
	return string(append(b, formatDuration(p.Elapsed)...))
}

// formatCount is a count of events for a progress line: 812, 8.1K, 1.2M.
func formatCount(n int64) string { return formatRate(float64(n)) }

// TrackProgress makes the session count what its statements read, for
// Progress.
func TrackProgress() Option { return func(s *Session) { s.prog = &progress{} } }

// progress holds the running statement's counters, written by the
// statement and read by the shell's goroutine.
type progress struct {
	mu    sync.Mutex // guards work, start, total and job
	work  string     // "" when nothing runs
	start time.Time
	total int64
	job   *job.Job // the query that runs, if one does
}

// Progress returns the running statement's progress; ok is false when no
// statement runs or the session does not track progress.
func (s *Session) Progress() (p Progress, ok bool) {
	if s.prog == nil {
		return p, false
	}
	s.prog.mu.Lock()
	p.Work, p.Total, p.Elapsed = s.prog.work, s.prog.total, time.Since(s.prog.start)
	if j := s.prog.job; j != nil {
		st := j.Stats()
		p.Events, p.Matches = st.Events, st.Matches
	}
	s.prog.mu.Unlock()
	return p, p.Work != ""
}

// begin starts counting work; the returned function ends it.
func (p *progress) begin(work string, total int64) (end func()) {
	if p == nil {
		return func() {}
	}
	p.mu.Lock()
	p.work, p.start, p.total, p.job = work, time.Now(), total, nil
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.work, p.job = "", nil
		p.mu.Unlock()
	}
}

// running says which query's job the work runs, for its counts.
func (p *progress) running(j *job.Job) {
	if p != nil {
		p.mu.Lock()
		p.job = j
		p.mu.Unlock()
	}
}
