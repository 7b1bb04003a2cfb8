package repl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
	"github.com/sase-cep/sase/source"
)

// query compiles and runs a query, or prints its plan (EXPLAIN), or runs it
// and prints the plan with each operator's counts (EXPLAIN ANALYZE).
func (s *Session) query(ctx context.Context, src *ast.Source, q *ast.Query) error {
	stream, err := s.streamFor(src, q.From, q.Span.Start)
	if err != nil {
		return err
	}
	if stream.Live {
		return s.liveQuery(src, q, s.lives[stream.Name])
	}
	cq, err := sase.CompileAST(q, src, stream, sase.WithEngine(s.set.engine))
	if err != nil {
		return err
	}
	if q.Explain && !q.Analyze {
		s.out.WriteString(cq.Explain())
		return nil
	}
	if q.Analyze {
		stats, err := cq.Run(ctx, stream.All(), func([]sase.Cell) bool { return true }, sase.WithTiming())
		if err != nil {
			return runError(err, stats)
		}
		s.out.WriteString(cq.ExplainAnalyze(stats))
		s.summary(stats)
		return nil
	}

	w := newResultWriter(s.set.format, s.out, cq.Columns(), stream.Schema, nil, s.paint.header)
	limit, n := s.set.limit, int64(0)
	stats, err := cq.Run(ctx, stream.All(), func(row []sase.Cell) bool {
		w.row(row)
		n++
		return limit == 0 || n < limit
	})
	w.finish()
	if err != nil {
		return runError(err, stats)
	}
	s.summary(stats)
	if limit > 0 && n >= limit {
		s.note("(stopped at the limit of %s; SET limit = 0 for all)", plural(limit, "match", "matches"))
	}
	return nil
}

// runError words a failed run; a cancelled one says how far it got.
func runError(err error, stats *sase.Stats) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("query cancelled after %d events and %d matches", stats.Events, stats.Matches)
	}
	return err
}

// summary writes "(N matches, M events, 12.3ms, 8.1M events/s)" to stderr,
// without the times when timing is off (so that output is reproducible).
func (s *Session) summary(stats *sase.Stats) {
	s.note("(%s)", s.counts(stats.Matches, stats))
}

// counts is "N matches, M events, 12.3ms, 8.1M events/s" for a summary.
func (s *Session) counts(matches int64, stats *sase.Stats) string {
	text := fmt.Sprintf("%s, %s", plural(matches, "match", "matches"), plural(stats.Events, "event", "events"))
	if s.set.timing {
		text += ", " + formatDuration(stats.Elapsed)
		if secs := stats.Elapsed.Seconds(); secs > 0 {
			text += ", " + formatRate(float64(stats.Events)/secs) + " events/s"
		}
	}
	return text
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// formatRate prints a rate with a metric suffix: 812, 8.1K, 8.1M, 1.2G.
func formatRate(r float64) string {
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "K"}} {
		if r >= u.div {
			return strconv.FormatFloat(r/u.div, 'f', 1, 64) + u.suffix
		}
	}
	return strconv.FormatFloat(r, 'f', 0, 64)
}

// streamFor returns the stream a statement names, or the current one.
// offset places the error when no stream is loaded.
func (s *Session) streamFor(src *ast.Source, name *ast.Ident, offset int) (*event.Stream, error) {
	if name != nil {
		if st, ok := s.streams[name.Name]; ok {
			return st, nil
		}
		return nil, errAt(src, name.Span.Start, "no stream named %s%s", name.Name, s.streamList())
	}
	if s.current == "" {
		return nil, errAt(src, offset, "no stream loaded: LOAD a file or GENERATE STOCKS first")
	}
	return s.streams[s.current], nil
}

// streamList is " (streams: a, b)" for error messages, "" if none.
func (s *Session) streamList() string {
	if len(s.order) == 0 {
		return " (no stream is loaded)"
	}
	return " (streams: " + strings.Join(s.order, ", ") + ")"
}

// addStream adds or replaces a stream by name. The first one becomes
// current, and so does the user's first when a built-in one is current.
func (s *Session) addStream(st *event.Stream) (current bool) {
	if _, ok := s.streams[st.Name]; !ok {
		s.order = append(s.order, st.Name)
	}
	s.streams[st.Name] = st
	if s.current == "" || s.builtin {
		s.current, s.builtin = st.Name, false
	}
	return s.current == st.Name
}

// added reports a new stream on stderr.
func (s *Session) added(verb string, st *event.Stream, elapsed time.Duration) {
	text := fmt.Sprintf("%s %s: %s of %s", verb, st.Name, plural(int64(len(st.Events)), "event", "events"),
		plural(int64(len(st.Schema.Types)), "type", "types"))
	if s.addStream(st) {
		text += ", the current stream"
	}
	if s.set.timing {
		text += " (" + formatDuration(elapsed) + ")"
	}
	s.note("%s", text)
}

// options turns a WITH list into a map, converting each value with conv
// and rejecting a repeated key.
func options[V any](src *ast.Source, opts []*ast.Option, conv func(*ast.Option) (V, error)) (map[string]V, error) {
	kv := map[string]V{}
	for _, o := range opts {
		if _, dup := kv[o.Key]; dup {
			return nil, errAt(src, o.Span.Start, "option %s is given twice", o.Key)
		}
		v, err := conv(o)
		if err != nil {
			return nil, errAt(src, o.Value.Span.Start, "%v", err)
		}
		kv[o.Key] = v
	}
	return kv, nil
}

// checkEach runs check on each option alone first, so that an error points
// at the option that caused it; then on all of them together.
func checkEach[V any](src *ast.Source, opts []*ast.Option, kv map[string]V, check func(map[string]V) error) error {
	for _, o := range opts {
		if err := check(map[string]V{o.Key: kv[o.Key]}); err != nil {
			return errAt(src, o.Span.Start, "%v", err)
		}
	}
	if err := check(kv); err != nil {
		return errAt(src, opts[0].Span.Start, "%v", err)
	}
	return nil
}

func literalText(l *ast.Literal) string {
	switch l.Kind {
	case ast.LitInt:
		return strconv.FormatInt(l.Int, 10)
	case ast.LitFloat:
		return strconv.FormatFloat(l.Float, 'g', -1, 64)
	case ast.LitBool:
		return strconv.FormatBool(l.Bool)
	}
	return l.Str
}

func (s *Session) load(src *ast.Source, st *ast.Load) error {
	opts, err := loadOptions(src, st.Options)
	if err != nil {
		return err
	}
	if st.Follow || st.Path == "-" {
		return s.loadLive(st, opts)
	}
	for _, o := range st.Options {
		if o.Key == "on_error" {
			return errAt(src, o.Span.Start, "on_error is for live streams (LOAD '-', FOLLOW, LISTEN): a bad line always stops a LOAD")
		}
	}
	start := time.Now()
	stream, err := source.Load(st.Path, st.Format, opts)
	if err != nil {
		return err // names the file and line already
	}
	stream.Name = source.DefaultName(st.Path)
	if st.Name != nil {
		stream.Name = st.Name.Name
	}
	s.added("loaded", stream, time.Since(start))
	return nil
}

// loadOptions reads a LOAD or LISTEN statement's WITH list.
func loadOptions(src *ast.Source, list []*ast.Option) (source.Options, error) {
	var opts source.Options
	kv, err := options(src, list, func(o *ast.Option) (string, error) { return literalText(o.Value), nil })
	if err != nil || len(kv) == 0 {
		return opts, err
	}
	err = checkEach(src, list, kv, func(kv map[string]string) (err error) {
		opts, err = source.ParseOptions(kv)
		return err
	})
	return opts, err
}

func (s *Session) generate(src *ast.Source, st *ast.Generate) error {
	kv, err := options(src, st.Options, func(o *ast.Option) (int64, error) {
		if o.Value.Kind != ast.LitInt {
			return 0, fmt.Errorf("GENERATE STOCKS option %s must be a whole number", o.Key)
		}
		return o.Value.Int, nil
	})
	if err != nil {
		return err
	}
	cfg := source.DefaultStockConfig()
	if len(kv) > 0 {
		err := checkEach(src, st.Options, kv, func(kv map[string]int64) (err error) {
			cfg, err = source.StockConfigFromOptions(kv)
			return err
		})
		if err != nil {
			return err
		}
	}
	name := "stocks"
	if st.Name != nil {
		name = st.Name.Name
	}
	start := time.Now()
	stream := source.GenerateStocks(name, cfg)
	s.added("generated", stream, time.Since(start))
	return nil
}

func (s *Session) use(src *ast.Source, st *ast.Use) error {
	stream, err := s.streamFor(src, st.Name, st.Span.Start)
	if err != nil {
		return err
	}
	s.current, s.builtin = stream.Name, false
	s.note("using stream %s", stream.Name)
	return nil
}

func (s *Session) setStmt(src *ast.Source, st *ast.Set) error {
	key := strings.ToLower(st.Key)
	if err := s.set.set(key, literalText(st.Value)); err != nil {
		at := st.Value.Span.Start // a bad value, or else an unknown key
		if !slices.Contains(settingKeys, key) {
			at = st.Span.Start
		}
		return errAt(src, at, "%v", err)
	}
	s.note("%s = %s", key, s.set.get(key))
	return nil
}

// ---- SHOW and DESCRIBE: small results written in the session's format ----

// listing writes rows of plain values through the session's result writer.
func (s *Session) listing(names []string, rows [][]event.Value) {
	cols := make([]planner.Column, len(names))
	for i, n := range names {
		cols[i] = planner.Column{Name: n, Kind: planner.ColValue}
	}
	w := newResultWriter(s.set.format, s.out, cols, nil, nil, s.paint.header)
	cells := make([]sase.Cell, len(names))
	for _, r := range rows {
		for i, v := range r {
			cells[i] = sase.Cell{Value: v}
		}
		w.row(cells)
	}
	w.finish()
}

// showStreams lists the streams; a live one's events are those read so far.
func (s *Session) showStreams() {
	var rows [][]event.Value
	for _, name := range s.order {
		st := s.view(s.streams[name])
		events := int64(len(st.Events))
		if l := s.lives[name]; l != nil {
			_, events, _ = l.Counts()
		}
		rows = append(rows, []event.Value{
			event.StringValue(name),
			event.IntValue(events),
			event.IntValue(int64(len(st.Schema.Types))),
			event.StringValue(st.Source),
			unitValue(st.Unit),
			event.BoolValue(name == s.current),
			event.BoolValue(st.Live),
		})
	}
	s.listing([]string{"name", "events", "types", "source", "time_unit", "current", "live"}, rows)
}

// view is a stream as it is now: a live stream's schema grows while its
// producers run, so it is read from a snapshot.
func (s *Session) view(st *event.Stream) *event.Stream {
	if l := s.lives[st.Name]; l != nil && st.Live {
		return l.Snapshot()
	}
	return st
}

// unitValue is a stream's time unit as LOAD's time_unit takes it, absent
// for unit-less timestamps.
func unitValue(d time.Duration) event.Value {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Millisecond, "ms"}, {time.Second, "s"}, {time.Minute, "m"}, {time.Hour, "h"}, {24 * time.Hour, "d"}} {
		if d == u.d {
			return event.StringValue(u.name)
		}
	}
	if d == 0 {
		return event.Value{}
	}
	return event.StringValue(d.String())
}

func (s *Session) showTypes(src *ast.Source, st *ast.ShowTypes) error {
	stream, err := s.streamFor(src, st.From, st.Span.Start)
	if err != nil {
		return err
	}
	s.types(s.view(stream))
	return nil
}

// types lists a stream's event types with their counts and attributes.
func (s *Session) types(stream *event.Stream) {
	schema := stream.Schema
	var rows [][]event.Value
	for _, t := range schema.Types {
		var attrs []string
		for slot, name := range schema.Attrs {
			if t.Has(slot) {
				attrs = append(attrs, name+" "+t.Kinds[slot].String())
			}
		}
		rows = append(rows, []event.Value{
			event.StringValue(t.Name),
			event.IntValue(t.Count),
			event.StringValue(strings.Join(attrs, ", ")),
		})
	}
	s.listing([]string{"type", "count", "attributes"}, rows)
}

// describe shows a stream (as SHOW TYPES FROM it does) or, if no stream
// has the name, an event type of the current stream: its attributes, the
// built-in ts and seq first.
func (s *Session) describe(src *ast.Source, st *ast.Describe) error {
	name := st.Name.Name
	if stream, ok := s.streams[name]; ok {
		s.types(s.view(stream))
		return nil
	}
	if s.current == "" {
		return errAt(src, st.Name.Span.Start, "no stream named %s (no stream is loaded)", name)
	}
	schema := s.view(s.streams[s.current]).Schema
	id, ok := schema.TypeID(name)
	if !ok {
		types := make([]string, len(schema.Types))
		for i, t := range schema.Types {
			types[i] = t.Name
		}
		return errAt(src, st.Name.Span.Start, "no stream or event type named %s%s; types of %s: %s",
			name, s.streamList(), s.current, strings.Join(types, ", "))
	}
	t := schema.Types[id]
	rows := [][]event.Value{
		{event.StringValue("ts"), event.StringValue("int")},
		{event.StringValue("seq"), event.StringValue("int")},
	}
	for slot, attr := range schema.Attrs {
		if t.Has(slot) && !slices.Contains([]string{"ts", "seq"}, attr) {
			rows = append(rows, []event.Value{event.StringValue(attr), event.StringValue(t.Kinds[slot].String())})
		}
	}
	s.listing([]string{"attribute", "kind"}, rows)
	return nil
}
