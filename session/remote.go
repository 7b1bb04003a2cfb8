package session

import (
	"context"
	"net/url"
	"slices"
	"strconv"

	"strings"

	"github.com/sase-cep/sase/event"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/source"
)

// A LISTEN on a scheme other than tcp:// (nats://, registered by a
// package the program imports) is opened by source.Open; its WITH options
// travel as the URL's query, where the scheme reads its own (group) and
// the source's (type_column, on_error, ...). A SET output URL is a sink
// that output.Open finds the same way.

// listenScheme reports whether a LISTEN names a registered scheme rather
// than a TCP address.
func listenScheme(addr string) bool {
	scheme, _, ok := strings.Cut(addr, "://")
	return ok && !strings.EqualFold(scheme, "tcp")
}

// listenURL opens LISTEN 'scheme://...'.
func (s *Session) listenURL(src *ast.Source, st *ast.Listen) error {
	u, err := url.Parse(st.Addr)
	if err != nil {
		return errAt(src, st.Span.Start, "LISTEN %q: %v", st.Addr, err)
	}
	q := u.Query()
	for _, o := range st.Options {
		q.Set(strings.ToLower(o.Key), literalText(o.Value))
	}
	u.RawQuery = q.Encode()
	name, err := s.claim(st.Name, "listen")
	if err != nil {
		return err
	}
	ls, err := source.Open(context.Background(), u.String(), source.WithName(name), source.WithFormat(st.Format), source.WithErrors(s.bgErrw))
	if err != nil {
		return errAt(src, st.Span.Start, "%v", err)
	}
	l := source.NewLive(name, ls)
	if g, ok := ls.(groupSource); ok {
		if s.groups == nil {
			s.groups = map[*source.Live]groupSource{}
		}
		s.groups[l] = g
	}
	s.addLive(l, "listening on "+ls.URL()+" as "+name)
	return nil
}

// A groupSource is a stream that instances of a group share (a nats://
// LISTEN WITH (group = 'g')): it runs each query itself, once per
// partition this instance owns, and publishes the matches to the output
// URL. partitionedBy says whether the query holds an equivalence test on
// the stream's key (each partition then runs its own query); compile
// compiles it on a partition's schema. GroupStatus says what this
// instance does for a query it runs (SHOW QUERIES, metrics): the
// matches it stored, and its partitions, their lag and pending acks, its
// replays and takeovers; GroupSummary what it did, for the note at the
// query's end.
type groupSource interface {
	RunGroupQuery(ctx context.Context, query, output string, partitionedBy func(key string) bool,
		compile func(*event.Schema) (q query.Query, rows output.Schema, window int64, err error)) error
	// RunGroupBook runs RULE queries (by name) as one rulebook of this
	// instance, each rule's matches published as it would publish them
	// alone (rules_group.go); a rule's number sent on stop stops it alone.
	RunGroupBook(ctx context.Context, rules []string, output string, partitionedBy func(rule int, key string) bool,
		compile func(rule int, sc *event.Schema) (query.Query, output.Schema, error),
		rulebook func(*event.Schema, []query.Rule) query.Rulebook, stop <-chan int) error
	GroupStats(query string) source.GroupStats
	GroupSummary(query string) string
}

// groupQuery starts a query on a group's stream: it runs until STOP
// QUERY or the end of the session, publishing to SET output.
func (s *Session) groupQuery(src *ast.Source, q *ast.Query, l *source.Live, g groupSource) error {
	compile, partitioned, err := s.groupCompile(src, q, l)
	if err != nil {
		return err
	}
	out := s.set.Output
	ctx, cancel := context.WithCancel(context.Background())
	lq := s.addQuery(l, q)
	name := "q" + strconv.Itoa(lq.id)
	lq.cancel, lq.group = cancel, func() source.GroupStats { return g.GroupStats(name) }
	s.note("query %d started on %s, with the other instances of its group", lq.id, l.Name())
	go func() {
		defer close(lq.done)
		defer cancel()
		err := g.RunGroupQuery(ctx, name, out, partitioned, compile)
		state := Stopped
		if err != nil && ctx.Err() == nil {
			state = Failed
			s.bgNote("%s query %d: %v", s.style.errorPrefix(), lq.id, err)
		}
		lq.state.Store(int32(state))
		s.bgNote("(query %d %s: %s)", lq.id, state, g.GroupSummary(name))
	}()
	return nil
}

// groupCompile checks query q on group stream l, and compiles it once, so
// that a bad query fails its statement. It returns how the group compiles
// it on a partition's schema, and whether its equivalence test holds a
// stream's key (its split record's keys), by which the group may run it
// in each partition.
func (s *Session) groupCompile(src *ast.Source, q *ast.Query, l *source.Live) (
	compile func(*event.Schema) (query.Query, output.Schema, int64, error), partitioned func(key string) bool, err error) {
	if q.Explain || q.Analyze {
		return nil, nil, errAt(src, q.Span.Start, "EXPLAIN needs a stream of this instance; %s is shared by a group", l.Name())
	}
	if !strings.HasPrefix(s.set.Output, "nats://") {
		return nil, nil, errAt(src, q.Span.Start, "a query on a group's stream publishes its matches to NATS: SET output = 'nats://host:port/MATCHES' first")
	}
	// As a live stream's query, in the stream's ticks (its time_unit; read
	// here, not under the schema's lock, which compile runs under).
	engine, unit := s.set.Engine, l.Unit()
	compile = func(sc *event.Schema) (query.Query, output.Schema, int64, error) {
		s.register(sc, q)
		cq, err := s.c.Compile(q, src, &event.Stream{Name: l.Name(), Schema: sc, Live: true, Unit: unit}, engine)
		if err != nil {
			return nil, output.Schema{}, 0, err
		}
		window, _ := cq.Window()
		return cq, schemaOf(cq, sc, 0, nil), window, nil
	}
	var first query.Query
	l.Update(func(sc *event.Schema) { first, _, _, err = compile(sc) })
	if err != nil {
		return nil, nil, err
	}
	keys := first.SplitKeys()
	return compile, func(key string) bool { return key != "" && slices.Contains(keys, key) }, nil
}
