package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/source"
)

// added adds a loaded stream and reports it on stderr.
func (s *Session) added(verb string, st *event.Stream, elapsed time.Duration) {
	text := fmt.Sprintf("%s %s: %s of %s", verb, st.Name, plural(int64(len(st.Events)), "event", "events"),
		plural(int64(len(st.Schema.Types)), "type", "types"))
	if s.cat.add(&entry{name: st.Name, kind: Loaded, stream: st}) {
		text += ", the current stream"
	}
	if s.set.Timing {
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

// quote writes a path as a statement's string: 'it”s.csv'.
func quote(path string) string { return "'" + strings.ReplaceAll(path, "'", "''") + "'" }

// path resolves a path a statement or command names: in a script
// (sase -f, \i) a relative path is relative to the script's folder, so a
// script finds its data wherever it is run from; typed in the shell or
// given with -c it is relative to the working directory. "-" is standard
// input.
func (s *Session) path(p string) string {
	if len(s.files) == 0 || p == "-" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(s.files[len(s.files)-1].name), p)
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

func (s *Session) load(ctx context.Context, src *ast.Source, st *ast.Load) error {
	opts, err := s.loadOptions(src, st.Options)
	if err != nil {
		return err
	}
	path, err := s.allow(s.path(st.Path))
	if err != nil {
		return errAt(src, st.Span.Start, "%v", err)
	}
	if err := s.allowLate(src, st.Options, &opts); err != nil {
		return err
	}
	live := st.Follow || path == "-"
	if err := timeOptions(src, st.Options, live); err != nil {
		return err
	}
	if live {
		return s.loadLive(st, path, opts)
	}
	name, err := s.claim(st.Name, source.DefaultName(st.Path))
	if err != nil {
		return err
	}
	defer s.prog.begin("LOAD "+quote(path), 0)()
	start := time.Now()
	var notes []string
	opts.Notes = &notes
	stream, stats, err := source.LoadReportContext(ctx, path, st.Format, opts, s.errw)
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("LOAD %s cancelled: nothing loaded: %w", quote(path), err)
	}
	if err != nil {
		return err // names the file and line already
	}
	stream.Name = name
	s.added("loaded", stream, time.Since(start))
	for _, n := range notes {
		s.note("warning: %s", n)
	}
	s.loadReport(name, opts, stats)
	return nil
}

// allowLate checks a late = 'path' option against LimitFiles.
func (s *Session) allowLate(src *ast.Source, list []*ast.Option, opts *source.Options) error {
	if opts.Late == "" {
		return nil
	}
	late, err := s.allow(opts.Late)
	if err != nil {
		i := slices.IndexFunc(list, func(o *ast.Option) bool { return strings.EqualFold(o.Key, "late") })
		return errAt(src, list[i].Span.Start, "%v", err)
	}
	opts.Late = late
	return nil
}

// timeOptions places the event-time options that do not fit the stream:
// sort = true needs a batch LOAD, clock = 'wall' a live stream, lag a
// clock.
func timeOptions(src *ast.Source, list []*ast.Option, live bool) error {
	clock := slices.ContainsFunc(list, func(o *ast.Option) bool { return strings.EqualFold(o.Key, "clock") })
	for _, o := range list {
		switch key := strings.ToLower(o.Key); {
		case key == "lag" && !clock:
			return errAt(src, o.Span.Start, "lag is how far a clock = 'wall' stream's events may lag the clock: give clock = 'wall' too")
		case key == "sort" && live:
			return errAt(src, o.Span.Start, "sort = true is for a batch LOAD: a live stream cannot wait for its end (give it a slack)")
		case key == "clock" && !live:
			return errAt(src, o.Span.Start, "clock = 'wall' is for a live stream (LOAD '-', FOLLOW, LISTEN); a file's time is its events'")
		}
	}
	return nil
}

// loadReport is a LOAD's report line when it may have left lines out
// (on_error = 'skip', a slack, sort = true): the four counts add up.
func (s *Session) loadReport(name string, o source.Options, st source.Stats) {
	if o.SkipBad || o.Slack > 0 || o.Sort || o.Late != "" {
		s.note("(stream %s loaded: %s)", name, reportCounts(st))
	}
}

// reportCounts is a stream's final counts: lines read = events used +
// late events + lines rejected (+ events a slack held, discarded: a
// stream that could not stop its reading, standard input, has them).
func reportCounts(st source.Stats) string {
	s := fmt.Sprintf("%s read, %s used, %d late, %s rejected", plural(st.Read, "line", "lines"),
		plural(st.Used, "event", "events"), st.Late, plural(st.Rejected, "line", "lines"))
	if st.Held > 0 {
		s += fmt.Sprintf(", %d held, discarded", st.Held)
	}
	if st.Behind > 0 {
		s += fmt.Sprintf("; %s behind the stream's time, ignored", plural(st.Behind, "punctuation line", "punctuation lines"))
	}
	return s
}

// loadOptions reads a LOAD or LISTEN statement's WITH list. The late
// file's path resolves as LOAD's does: in a script, against its folder.
func (s *Session) loadOptions(src *ast.Source, list []*ast.Option) (source.Options, error) {
	var opts source.Options
	kv, err := options(src, list, func(o *ast.Option) (string, error) { return literalText(o.Value), nil })
	if err != nil || len(kv) == 0 {
		return opts, err
	}
	err = checkEach(src, list, kv, func(kv map[string]string) (err error) {
		opts, err = source.ParseOptions(kv)
		return err
	})
	if err == nil && opts.Late != "" {
		opts.Late = s.path(opts.Late)
	}
	return opts, err
}

func (s *Session) generate(ctx context.Context, src *ast.Source, st *ast.Generate) error {
	for _, o := range st.Options {
		switch strings.ToLower(o.Key) {
		case "late", "slack", "sort", "clock", "lag":
			return errAt(src, o.Span.Start, "%s is for a loaded or live stream's input: a generated stream is in order, and never late", o.Key)
		}
	}
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
	name, err := s.claim(st.Name, "stocks")
	if err != nil {
		return err
	}
	defer s.prog.begin("GENERATE STOCKS", 0)()
	start := time.Now()
	stream, err := source.GenerateStocksContext(ctx, name, cfg)
	if err != nil {
		return fmt.Errorf("GENERATE STOCKS cancelled: nothing generated: %w", err)
	}
	s.added("generated", stream, time.Since(start))
	return nil
}

func (s *Session) use(src *ast.Source, st *ast.Use) error {
	e, err := s.streamFor(src, st.Name, st.Span.Start)
	if err != nil {
		return err
	}
	s.cat.current, s.cat.builtin = e.name, false
	s.note("using stream %s", e.name)
	return nil
}

func (s *Session) setStmt(src *ast.Source, st *ast.Set) error {
	key := strings.ToLower(st.Key)
	if err := s.set.Set(key, literalText(st.Value)); err != nil {
		at := st.Value.Span.Start // a bad value, or else an unknown key
		if !isKey(key) {
			at = st.KeySpan.Start
		}
		return errAt(src, at, "%v", err)
	}
	s.note("%s = %s", key, s.set.get(key))
	return nil
}

// ---- SHOW and DESCRIBE: small results written in the session's format ----

// listing writes rows of plain values in the session's format.
func (s *Session) listing(names []string, rows [][]event.Value) {
	cols := make([]output.Column, len(names))
	for i, n := range names {
		cols[i] = output.Column{Name: n, Kind: output.Value}
	}
	w := s.writer(s.out, output.Schema{Columns: cols}, 0)
	cells := make([]query.Cell, len(names))
	for _, r := range rows {
		for i, v := range r {
			cells[i] = query.Cell{Value: v}
		}
		w.Row(cells) // an error sticks in s.out
	}
	w.Finish()
}

func (s *Session) showStreams() {
	var rows [][]event.Value
	for _, st := range s.Streams() {
		rows = append(rows, []event.Value{
			event.StringValue(st.Name),
			event.IntValue(st.Events),
			event.IntValue(int64(st.Types)),
			event.StringValue(st.Source),
			unitValue(st.Unit),
			event.BoolValue(st.Current),
			event.BoolValue(st.Kind == Live),
		})
		rows[len(rows)-1] = append(rows[len(rows)-1], eventTimeCells(st.Time)...)
	}
	s.listing([]string{"name", "events", "types", "source", "time_unit", "current", "live", "slack", "time", "max_ts", "late"}, rows)
}

// eventTimeCells are SHOW STREAMS's event-time columns: a live stream's
// slack, time and largest ts (empty before its first event) and late
// events; empty for a loaded stream.
func eventTimeCells(et *source.EventTime) []event.Value {
	if et == nil {
		return make([]event.Value, 4)
	}
	cells := []event.Value{event.StringValue(et.Slack), {}, {}, event.IntValue(et.Late)}
	if et.HasTime {
		cells[1], cells[2] = event.IntValue(et.Time), event.IntValue(et.MaxTS)
	}
	return cells
}

// unitValue is a stream's time unit as LOAD's time_unit takes it, absent
// for unit-less timestamps.
func unitValue(d time.Duration) event.Value {
	for _, u := range event.TimeUnits() {
		if d == u.Duration {
			return event.StringValue(u.Name)
		}
	}
	if d == 0 {
		return event.Value{}
	}
	return event.StringValue(d.String())
}

func (s *Session) showTypes(src *ast.Source, st *ast.ShowTypes) error {
	e, err := s.streamFor(src, st.From, st.Span.Start)
	if err != nil {
		return err
	}
	s.types(e.view())
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
	if e, ok := s.cat.entries[name]; ok {
		s.types(e.view())
		return nil
	}
	if s.cat.current == "" {
		return errAt(src, st.Name.Span.Start, "no stream named %s (no stream is loaded)", name)
	}
	schema := s.cat.entries[s.cat.current].view().Schema
	id, ok := schema.TypeID(name)
	if !ok {
		types := make([]string, len(schema.Types))
		for i, t := range schema.Types {
			types[i] = t.Name
		}
		return errAt(src, st.Name.Span.Start, "no stream or event type named %s%s; types of %s: %s%s",
			name, s.cat.names(), s.cat.current, strings.Join(types, ", "), ast.DidYouMean(name, append(types, s.cat.order...)))
	}
	var rows [][]event.Value
	names, kinds := typeAttrs(schema, id)
	for i, name := range names {
		rows = append(rows, []event.Value{event.StringValue(name), event.StringValue(kinds[i])})
	}
	s.listing([]string{"attribute", "kind"}, rows)
	return nil
}

// builtinAttrs are the attributes every event has.
var builtinAttrs = []string{"ts", "seq"}

// typeAttrs returns the attributes of type id and their kinds: the
// built-ins first, then the type's own in the stream's column order.
func typeAttrs(schema *event.Schema, id int) (names, kinds []string) {
	for _, b := range builtinAttrs {
		names, kinds = append(names, b), append(kinds, "int")
	}
	t := schema.Types[id]
	for slot, attr := range schema.Attrs {
		if t.Has(slot) && !slices.Contains(builtinAttrs, attr) {
			names, kinds = append(names, attr), append(kinds, t.Kinds[slot].String())
		}
	}
	return names, kinds
}

// Attributes lists the attributes an event type of schema has, as
// DESCRIBE shows them; nil for a type the schema lacks.
func Attributes(schema *event.Schema, typ string) []string {
	id, ok := schema.TypeID(typ)
	if !ok {
		return nil
	}
	names, _ := typeAttrs(schema, id)
	return names
}
