package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/query"
)

// What a server (package serve) needs of a session beyond a script's:
// live streams that start with their queries, files confined to a folder,
// and a way to follow a query's matches.

// StartLive starts the live streams the queries so far read, as Wait
// does, and from then on a live stream starts with its first query, as
// in the shell: a server's queries run until they are stopped, not until
// a Wait.
func (s *Session) StartLive() {
	s.startLive = true
	for _, q := range s.queries {
		q.live.Start()
	}
}

// LimitFiles confines the files that later statements and commands read
// and write (LOAD, FOLLOW, late = 'path', \i, \o) to the folder dir: a
// relative path is relative to it, and a path that leads out of it (by
// .. or a symbolic link) is refused. With dir "" every file is refused.
// A server calls it once its own scripts ran: a statement from its API
// must not read or write the server's other files.
func (s *Session) LimitFiles(dir string) { s.root = &dir }

// errNoFiles is the refusal of a file by a session with LimitFiles("").
var errNoFiles = errors.New("this session may not read or write files (sase serve --data DIR gives it a folder)")

// allow returns the path to open for a path a statement names (after
// path), or an error when LimitFiles forbids it. Standard input ("-") is
// not a file.
func (s *Session) allow(p string) (string, error) {
	if s.root == nil || p == "-" {
		return p, nil
	}
	if *s.root == "" {
		return "", fmt.Errorf("%s: %w", p, errNoFiles)
	}
	root, err := filepath.Abs(*s.root)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return "", fmt.Errorf("the data folder: %w", err)
	}
	full := p
	if !filepath.IsAbs(full) {
		full = filepath.Join(root, full)
	}
	// Where it really is: the file's links resolved, or its folder's for
	// a file that does not exist yet.
	real, err := filepath.EvalSymlinks(full)
	if errors.Is(err, os.ErrNotExist) {
		var dir string
		if dir, err = filepath.EvalSymlinks(filepath.Dir(full)); err == nil {
			real = filepath.Join(dir, filepath.Base(full))
		}
	}
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: outside the data folder %s", p, *s.root)
	}
	return real, nil
}

// Follow calls deliver with each match query id writes from now on, as
// one line of JSON Lines (the jsonl format's encoding), on the query's
// goroutine and in its order: deliver must not block, the query waits
// for it, and must copy the line to keep it. done is closed when the
// query has ended; stop ends the following (it must not be called from
// deliver). A query that writes INTO a stream, or a group query, has no
// matches of its own to follow.
func (s *Session) Follow(id int, deliver func(line []byte)) (done <-chan struct{}, stop func(), err error) {
	if id < 1 || id > len(s.queries) {
		return nil, nil, fmt.Errorf("no query %d (SHOW QUERIES lists them)", id)
	}
	q := s.queries[id-1]
	if q.taps == nil {
		return nil, nil, fmt.Errorf("query %d writes no matches of its own (an INTO or a group query)", id)
	}
	return q.done, q.taps.add(deliver), nil
}

// taps are the followers of a live query's matches.
type taps struct {
	n   atomic.Int32 // followers, read on each match
	mu  sync.Mutex
	enc query.Encode
	buf []byte
	fs  map[*func([]byte)]struct{}
}

func newTaps(sc output.Schema) *taps {
	w := output.New(output.JSONL, io.Discard, sc).(output.Chunked)
	return &taps{enc: w.NewEncoder(), fs: map[*func([]byte)]struct{}{}}
}

func (t *taps) add(deliver func([]byte)) (stop func()) {
	key := &deliver
	t.mu.Lock()
	t.fs[key] = struct{}{}
	t.n.Store(int32(len(t.fs)))
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		delete(t.fs, key)
		t.n.Store(int32(len(t.fs)))
		t.mu.Unlock()
	}
}

// row hands a match to the followers, if any.
func (t *taps) row(cells []query.Cell) {
	if t == nil || t.n.Load() == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = t.enc(t.buf[:0], cells)
	for f := range t.fs {
		(*f)(t.buf)
	}
}
