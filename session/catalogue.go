package session

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/source"
)

// Kind says how a stream holds its events.
type Kind uint8

const (
	Loaded Kind = iota // in memory: LOAD of a file, GENERATE, a built-in stream
	Live               // read as they arrive: LOAD '-', LOAD ... FOLLOW, LISTEN
)

func (k Kind) String() string {
	if k == Live {
		return "live"
	}
	return "loaded"
}

// StreamInfo describes a stream as SHOW STREAMS lists it.
type StreamInfo struct {
	Name    string
	Kind    Kind
	Source  string        // a path, "-", "generated", a listener's tcp:// address, or "INTO from stocks"
	Events  int64         // a live stream's: those used so far
	Types   int           // event types (a live stream's: seen or named by a query so far)
	Unit    time.Duration // one timestamp tick; 0: unit-less
	Current bool
	// Time is a live stream's event time (slack, clock, time, largest ts,
	// late events); nil for a loaded stream.
	Time *source.EventTime
}

// entry is one stream of the catalogue.
type entry struct {
	name   string
	kind   Kind
	stream *event.Stream // Loaded: the stream and its events
	live   *source.Live  // Live
	// derived is set for a stream made by INTO, loaded or live.
	derived *derivation
}

// view is the stream as it is now: a live stream's schema grows while its
// producers run, so it is read from a snapshot (which has no events).
func (e *entry) view() *event.Stream {
	if e.kind == Live {
		return e.live.Snapshot()
	}
	return e.stream
}

// catalogue holds the session's streams by name.
type catalogue struct {
	entries map[string]*entry
	order   []string // names, in the order they were first added
	current string
	// builtin is set while the current stream is the preloaded one: the
	// user's first stream then becomes current instead.
	builtin bool
}

// add adds or replaces a stream by name. The first one becomes current,
// and so does the user's first when a built-in one is current; a derived
// stream does not (its query reads another, which is already there). A
// live stream it replaces is closed only now, once its successor has
// opened: a replacement that fails leaves it running (claim checked that
// no query reads it).
func (c *catalogue) add(e *entry) (current bool) {
	old, ok := c.entries[e.name]
	if !ok {
		c.order = append(c.order, e.name)
	} else if old.kind == Live && old.live != e.live {
		old.live.Close()
	}
	c.entries[e.name] = e
	if e.derived == nil && (c.current == "" || c.builtin) {
		c.current, c.builtin = e.name, false
	}
	return c.current == e.name
}

// names is " (streams: a, b)" for error messages.
func (c *catalogue) names() string {
	if len(c.order) == 0 {
		return " (no stream is loaded)"
	}
	return " (streams: " + strings.Join(c.order, ", ") + ")"
}

// Streams lists the streams in the order they were first added.
func (s *Session) Streams() []StreamInfo {
	infos := make([]StreamInfo, 0, len(s.cat.order))
	for _, name := range s.cat.order {
		e := s.cat.entries[name]
		st := e.view()
		events := int64(len(st.Events))
		src := st.Source
		var et *source.EventTime
		if e.kind == Live {
			t := e.live.EventTime()
			events, et = t.Used, &t
		}
		if e.derived != nil {
			src = e.derived.describe()
		}
		infos = append(infos, StreamInfo{Name: name, Kind: e.kind, Source: src, Events: events,
			Types: len(st.Schema.Types), Unit: st.Unit, Current: name == s.cat.current, Time: et})
	}
	return infos
}

// streamFor returns the stream a statement names, or the current one.
// offset places the error when no stream is loaded.
func (s *Session) streamFor(src *ast.Source, name *ast.Ident, offset int) (*entry, error) {
	if name != nil {
		if e, ok := s.cat.entries[name.Name]; ok {
			return e, nil
		}
		return nil, errAt(src, name.Span.Start, "no stream named %s%s%s", name.Name, s.cat.names(), ast.DidYouMean(name.Name, s.cat.order))
	}
	if s.cat.current == "" && len(s.cat.order) > 0 {
		return nil, errAt(src, offset, "no current stream: USE one, or name it with FROM%s", s.cat.names())
	}
	if s.cat.current == "" {
		return nil, errAt(src, offset, "no stream loaded: LOAD a file or GENERATE STOCKS first")
	}
	return s.cat.entries[s.cat.current], nil
}

// claim names a new stream, AS name or else def: it refuses while queries
// read a live stream of that name. The stream it replaces stays as it is
// until the new one has opened (add).
func (s *Session) claim(as *ast.Ident, def string) (string, error) {
	name := def
	if as != nil {
		name = as.Name
	}
	e, ok := s.cat.entries[name]
	if !ok || e.kind != Live {
		return name, nil
	}
	for _, q := range s.queries {
		if q.live == e.live && q.State() == Running {
			return "", fmt.Errorf("stream %s has running queries (STOP QUERY %d first)", name, q.id)
		}
	}
	return name, nil
}

// remove takes a stream out of the catalogue (one closed for a
// replacement that then failed); it is no longer current.
func (c *catalogue) remove(name string) {
	delete(c.entries, name)
	c.order = slices.DeleteFunc(c.order, func(n string) bool { return n == name })
	if c.current == name {
		c.current, c.builtin = "", false
	}
}

// Schema returns the types and attributes of the named stream, the
// current one for "", nil when there is none: what the shell's completion
// offers. A live stream's is a snapshot.
func (s *Session) Schema(name string) *event.Schema {
	if name == "" {
		name = s.cat.current
	}
	if e, ok := s.cat.entries[name]; ok {
		return e.view().Schema
	}
	return nil
}

// creating ends a statement that makes a stream (LOAD, LISTEN, GENERATE).
// If it failed while the built-in stream was current only until the
// user's first, that stream stops being current: the next query must not
// run on data the user did not name (it can still name it).
func (s *Session) creating(err error) error {
	if err == nil || !s.cat.builtin {
		return err
	}
	name := s.cat.current
	s.cat.current, s.cat.builtin = "", false
	return fmt.Errorf("%w\n(no stream is current now: the built-in %s was current only until a stream of your own; USE %s to query it)", err, name, name)
}
