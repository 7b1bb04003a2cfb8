package session

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/internal/teststream"
	"github.com/sase-cep/sase/syntax"
)

// The oracle for INTO: for random producer queries over random streams
// (negated ends and trailing closures among them, whose matches complete
// late), on every engine, the derived stream is the producer's matches
// turned into events and stably sorted by ts, numbered in that order; and
// a random consumer query over it has the matches the same query has over
// that sorted stream written to a CSV file and loaded. It runs 50 seeds,
// 100 with -long.
func TestDerivedOracle(t *testing.T) {
	t.Parallel() // its seeds' files are its own, its sessions too
	ctx := context.Background()
	dir := t.TempDir()
	late, unordered, consumed, skipped := 0, 0, 0, 0
	n := testkit.Size(50, 100)
	for seed := range uint64(n) {
		r := rand.New(rand.NewPCG(seed, 14))
		var c randquery.Case
		if seed%2 == 0 {
			c = lateCase(r)
		} else {
			c = randquery.Generate(r, randquery.Long(), randquery.Strategies())
		}
		producer := intoQuery(t, c.Query, "d", seed%3 == 1)
		consumer := anyType.ReplaceAllString(randquery.Generate(r, randquery.Strategies()).Query, "d")
		if _, err := sase.Compile(producer, teststream.CSV(t, "s", c.StreamCSV)); err != nil {
			skipped++ // a strategy's rules reject some random queries
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("s%d.csv", seed))
		if err := os.WriteFile(path, []byte(c.StreamCSV), 0o644); err != nil {
			t.Fatal(err)
		}
		if q, _ := syntax.ParseQuery(&ast.Source{Text: c.Query}); q != nil && isLate(q) {
			late++
		}
		for _, engine := range sase.EngineNames() {
			name := fmt.Sprintf("seed %d, %s: %s", seed, engine, producer)
			var stderr bytes.Buffer
			s := New(&bytes.Buffer{}, &stderr)
			if err := s.Set("engine", engine); err != nil {
				t.Fatal(err)
			}
			if err := s.Exec(ctx, &ast.Source{Name: "<test>", Text: "LOAD '" + path + "' AS s; " + producer}); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, stderr.String())
			}
			d := s.cat.entries["d"].stream
			// Build sorts, so check that the producer released in ts order
			// itself, as a live stream needs.
			part := s.cat.entries["d"].derived.producers[0].part.Events
			if !slices.IsSortedFunc(part, func(a, b *event.Event) int { return cmp.Compare(a.TS, b.TS) }) {
				t.Fatalf("%s: released out of ts order", name)
			}
			want, reordered := expectedDerived(t, c.StreamCSV, producer, engine)
			if reordered {
				unordered++
			}
			if got := render(d); !slices.Equal(got, want) {
				t.Fatalf("%s:\nderived stream\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if got := inBook(t, path, producer, engine, 1+int(seed%2)); !slices.Equal(got, want) {
				t.Fatalf("%s: as a rule of a rulebook, on %d passes:\nderived stream\n%s\nwant\n%s", name, 1+seed%2, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}

			if len(d.Events) > maxConsumed {
				continue
			}
			file := teststream.CSV(t, "f", csvOf(d))
			got, gerr := randquery.Matches(ctx, d, consumer, engine)
			wantM, werr := randquery.Matches(ctx, file, consumer, engine)
			switch {
			case (gerr != nil) != (werr != nil):
				t.Fatalf("%s, then %s: over the derived stream %v, over the file %v", name, consumer, gerr, werr)
			case gerr == nil && !slices.Equal(got, wantM):
				t.Fatalf("%s, then %s:\nover the derived stream %q\nover the file %q", name, consumer, got, wantM)
			case gerr == nil && len(got) > 0:
				consumed++
			}
		}
	}
	// The random cases must reach what they are for: per 100 seeds, 40
	// late producers, 40 reordered runs, 80 consumers with matches, and at
	// most 10 producers that do not compile.
	if late < 2*n/5 || unordered < 2*n/5 || consumed < 4*n/5 || skipped > n/10 {
		t.Errorf("%d late producers, %d runs whose matches complete out of ts order, %d consumers with matches, %d producers that do not compile: the cases miss the point",
			late, unordered, consumed, skipped)
	}
}

// inBook runs producer, an INTO d query over the stream of the file at
// path, as a rule of a rulebook beside another rule (the book's index then
// hands it its events), on the engine, shared among workers passes, and
// returns the derived stream d, rendered; its producer released its events
// in ts order, as alone.
func inBook(t *testing.T, path, producer, engine string, workers int) []string {
	t.Helper()
	var stderr bytes.Buffer
	s := New(&bytes.Buffer{}, &stderr)
	for k, v := range map[string]string{"engine": engine, "workers": fmt.Sprint(workers)} {
		if err := s.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	script := "LOAD '" + path + "' AS s; RULE other: PATTERN SEQ(A a, B b) WITHIN 3; RULE p: " + producer + ";"
	if err := s.Exec(context.Background(), &ast.Source{Name: "<test>", Text: script}); err != nil || !strings.Contains(stderr.String(), "(rule p: ") {
		t.Fatalf("%s: %v\n%s", script, err, stderr.String())
	}
	d := s.cat.entries["d"]
	if !slices.IsSortedFunc(d.derived.producers[0].part.Events, func(a, b *event.Event) int { return cmp.Compare(a.TS, b.TS) }) {
		t.Fatalf("%s: released out of ts order", script)
	}
	return render(d.stream)
}

// maxConsumed bounds the derived streams a consumer runs on: every event
// has one type, and basic enumerates every sequence of them.
const maxConsumed = 40

// anyType is a type name of randquery's streams.
var anyType = regexp.MustCompile(`\b[ABCD]\b`)

func isLate(q *ast.Query) bool {
	last := q.Pattern.Components[len(q.Pattern.Components)-1]
	return last.Negated || last.Closure != nil
}

// lateCase is a query whose matches complete late, in an order other
// than their ts (positives, then a negation or a closure, few conditions),
// over a stream with gaps in time, which release many matches at once.
func lateCase(r *rand.Rand) randquery.Case {
	var b strings.Builder
	b.WriteString("type,ts,price,vol,sym,id\n")
	ts := 0
	for range 20 + r.IntN(20) {
		ts += r.IntN(2)
		if r.IntN(6) == 0 {
			ts += 3 + r.IntN(8)
		}
		fmt.Fprintf(&b, "%c,%d,%d,%d,%c,%d\n", 'A'+r.IntN(4), ts, 1+r.IntN(20), r.IntN(8), 'x'+r.IntN(3), 1+r.IntN(3))
	}
	return randquery.Case{StreamCSV: b.String(), Query: lateQuery(r)}
}

func lateQuery(r *rand.Rand) string {
	typ := func() string { return string(rune('A' + r.IntN(4))) }
	var comps []string
	for i := range 2 + r.IntN(2) {
		comps = append(comps, fmt.Sprintf("%s p%d", typ(), i))
	}
	var where string
	switch r.IntN(3) {
	case 0: // E never occurs: every match waits for its window
		comps = append(comps, "!E n")
	case 1:
		comps = append(comps, "!"+typ()+" n")
		where = " WHERE n.price > p0.price + 5"
	default:
		comps = append(comps, typ()+"+ c[]")
		if r.IntN(2) == 0 {
			where = " WHERE c[i].price > c[i-1].price"
		}
	}
	return fmt.Sprintf("PATTERN SEQ(%s)%s WITHIN %d", strings.Join(comps, ", "), where, 2+r.IntN(14))
}

// intoQuery gives a random query scalar columns that a consumer of
// randquery's attributes reads (price, vol, sym, id), an expression and,
// with a closure, an aggregate, and writes it into name. Loose drops its
// WHERE, for more matches: more of them complete out of ts order.
func intoQuery(t *testing.T, text, name string, loose bool) string {
	t.Helper()
	q, err := syntax.ParseQuery(&ast.Source{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	if loose {
		q.Where = nil
		text = q.String()
	}
	var singles, closures []string
	for _, c := range q.Pattern.Components {
		switch {
		case c.Closure != nil:
			closures = append(closures, c.VarName())
		case !c.Negated:
			singles = append(singles, c.VarName())
		}
	}
	first, last := singles[0], singles[len(singles)-1]
	cols := []string{last + ".price AS price", first + ".vol AS vol", first + ".sym AS sym", last + ".id AS id",
		first + ".price * 2 - " + last + ".vol AS e"}
	for _, c := range closures {
		cols = append(cols, "count("+c+"[]) AS n_"+c)
	}
	return text + " RETURN " + strings.Join(cols, ", ") + " INTO " + name
}

// expectedDerived runs the producer query through the facade, twice: with
// its RETURN for the attributes, without it for the bound events, whose
// latest ts is the event's; then sorts the events stably by ts. It reports
// whether the matches completed out of ts order.
func expectedDerived(t *testing.T, csv, text, engine string) (events []string, reordered bool) {
	t.Helper()
	stream := teststream.CSV(t, "s", csv)
	src := &ast.Source{Text: text}
	q, err := syntax.ParseQuery(src)
	if err != nil {
		t.Fatal(err)
	}
	e, err := sase.LookupEngine(engine)
	if err != nil {
		t.Fatal(err)
	}
	run := func(q *ast.Query, each func(row []sase.Cell)) *sase.Query {
		cq, err := sase.CompileAST(q, src, stream, sase.WithEngine(e))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cq.Run(context.Background(), stream.All(), func(row []sase.Cell) bool { each(row); return true }); err != nil {
			t.Fatal(err)
		}
		return cq
	}
	var attrs []string
	cq := run(q, func(row []sase.Cell) {
		var b strings.Builder
		for _, c := range row {
			b.WriteString(" " + valueText(c.Value))
		}
		attrs = append(attrs, b.String())
	})
	var names []string
	for _, c := range cq.Columns() {
		names = append(names, c.Name)
	}
	bare := *q
	bare.Return = nil
	var ts []int64
	run(&bare, func(row []sase.Cell) {
		latest := int64(-1 << 63)
		for _, c := range row {
			if c.Event != nil {
				latest = max(latest, c.Event.TS)
			}
			for _, e := range c.List {
				latest = max(latest, e.TS)
			}
		}
		ts = append(ts, latest)
	})
	if len(ts) != len(attrs) {
		t.Fatalf("%s: %d matches with RETURN, %d without", text, len(attrs), len(ts))
	}
	order := make([]int, len(ts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ts[a], ts[b]) })
	out := make([]string, len(order))
	for seq, i := range order {
		out[seq] = fmt.Sprintf("%d d@%d %s:%s", seq, ts[i], strings.Join(names, ","), attrs[i])
	}
	return out, !slices.IsSorted(ts)
}

// render prints a derived stream's events as expectedDerived does, its
// attributes in the producer's column order (its schema's).
func render(st *event.Stream) []string {
	out := make([]string, len(st.Events))
	for i, e := range st.Events {
		var b strings.Builder
		for slot := range st.Schema.Attrs {
			b.WriteString(" " + valueText(e.Attr(slot)))
		}
		out[i] = fmt.Sprintf("%d %s@%d %s:%s", e.Seq, st.Schema.Types[e.Type].Name, e.TS, strings.Join(st.Schema.Attrs, ","), b.String())
	}
	return out
}

// valueText shows a value with its kind, so that 2 and 2.0 differ.
func valueText(v event.Value) string { return v.Kind().String() + "(" + v.String() + ")" }

// csvOf writes a stream as CSV that loads back as the same events: floats
// keep a decimal point, absent values are empty cells.
func csvOf(st *event.Stream) string {
	var b []byte
	b = append(b, "type,ts"...)
	for _, a := range st.Schema.Attrs {
		b = append(append(b, ','), a...)
	}
	b = append(b, '\n')
	for _, e := range st.Events {
		b = append(b, st.Schema.Types[e.Type].Name...)
		b = fmt.Appendf(b, ",%d", e.TS)
		for slot := range st.Schema.Attrs {
			b = append(b, ',')
			if v := e.Attr(slot); v.Kind() == event.String {
				b = append(b, v.Str()...)
			} else if !v.IsAbsent() {
				b = v.AppendJSON(b)
			}
		}
		b = append(b, '\n')
	}
	return string(b)
}

// A late producer's matches complete out of ts order: here (a1, b3) and
// (a1, b9) once ts 11 has passed, (a2, b3) after them. Its events are
// released in ts order all the same, equal ts in completion order.
func TestLateProducerReleasesInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "late.csv")
	if err := os.WriteFile(path, []byte("type,ts,x\nA,1,1\nA,2,2\nB,3,3\nB,9,9\nD,11,0\nD,12,0\nD,13,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, engine := range sase.EngineNames() {
		var stderr bytes.Buffer
		s := New(&bytes.Buffer{}, &stderr)
		s.Set("engine", engine)
		err := s.Exec(context.Background(), &ast.Source{Name: "<test>",
			Text: "LOAD '" + path + "' AS s; PATTERN SEQ(A a, B b, !C c) WITHIN 10 RETURN a.x AS ax, b.x AS bx INTO d;"})
		if err != nil {
			t.Fatalf("%s: %v\n%s", engine, err, &stderr)
		}
		var got []string
		for _, e := range s.cat.entries["d"].derived.producers[0].part.Events {
			got = append(got, fmt.Sprintf("%d:%s", e.TS, e.Attrs[0]))
		}
		if want := []string{"3:1", "3:2", "9:1", "9:2"}; !slices.Equal(got, want) {
			t.Errorf("%s: released %q, want %q", engine, got, want)
		}
	}
}
