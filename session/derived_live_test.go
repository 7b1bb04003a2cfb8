package session

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/derive"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/internal/teststream"
	"github.com/sase-cep/sase/syntax"
)

// A producer and a consumer over a stream piped in (a real pipe, read as
// LOAD '-') give the derived stream and the consumer matches they give
// over the same stream loaded from a file; the cases take turns with the
// engines a live stream allows. From seed 70 on the producer is a v3
// pattern (LANGUAGE.md §9) whose RETURN reads variables a match may leave
// unbound (null attributes), and whose events' ts is the largest bound.
// One seed in four runs the producer live as a rule, in the stream's
// rulebook.
func TestDerivedLiveMatchesLoaded(t *testing.T) {
	t.Parallel() // its folder and sessions are its own
	dir := t.TempDir()
	var compared atomic.Int32
	t.Run("seeds", func(t *testing.T) {
		for seed := range uint64(100) {
			// Each seed has its own random source, file and sessions: the
			// seeds share nothing, so they run in parallel.
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				t.Parallel()
				if derivedLiveCase(t, dir, seed) {
					compared.Add(1)
				}
			})
		}
	})
	if n := compared.Load(); n < 45 {
		t.Errorf("only %d runs derived any event", n)
	}
}

// derivedLiveCase runs one seed's case of TestDerivedLiveMatchesLoaded
// and reports whether the producer derived any event.
func derivedLiveCase(t *testing.T, dir string, seed uint64) bool {
	r := rand.New(rand.NewPCG(seed, 41))
	var c randquery.Case
	switch {
	case seed >= 70:
		c = randquery.Generate(r, randquery.Nested())
	case seed%2 == 0:
		c = lateCase(r)
	default:
		c = randquery.Generate(r, randquery.Strategies())
	}
	producer := intoQuery(t, withWindow(t, c.Query), "d", false)
	if _, err := sase.Compile(producer, teststream.CSV(t, "s", c.StreamCSV)); err != nil {
		return false // a strategy's rules reject some random queries
	}
	consumer := withWindow(t, anyType.ReplaceAllString(randquery.Generate(r).Query, "d"))
	path := filepath.Join(dir, fmt.Sprintf("s%d.csv", seed))
	if err := os.WriteFile(path, []byte(c.StreamCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	// The query of e lists the derived stream itself.
	queries := producer + "; USE d; PATTERN d e WITHIN 0; " + consumer + ";"
	engine := liveEngines[seed%uint64(len(liveEngines))]
	name := fmt.Sprintf("seed %d, %s: %s", seed, engine, queries)
	loaded, lerr := runScript(t, engine, "LOAD '"+path+"' AS s; "+queries, nil)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		io.WriteString(pw, c.StreamCSV)
		pw.Close()
	}()
	if seed%4 == 1 {
		// As a rule, the producer runs in the stream's rulebook.
		queries = "RULE p: " + queries
	}
	live, stderr := runScript(t, engine, "LOAD '-' AS s; "+queries, pr)
	pr.Close()
	if !slices.Equal(byQuery(live), byQuery(loaded)) {
		t.Fatalf("%s:\nlive\n%s\nloaded\n%s\n%s", name, live, loaded, lerr)
	}
	if !summary.MatchString(stderr) {
		t.Fatalf("%s: the derived stream's summary:\n%s", name, stderr)
	}
	return strings.Contains(loaded, `{"e":`)
}

// liveEngines are the engines that bound their state by the window, which
// a live stream needs.
var liveEngines = slices.DeleteFunc(sase.EngineNames(), func(e string) bool { return e == "basic" })

// summary is the derived stream's summary when it has used every line.
var summary = regexp.MustCompile(`\(stream d ended: (\d+) lines? read, (\d+) events? used, 0 late, 0 lines rejected\)`)

// withWindow gives a query a window if it has none: a live stream needs one.
func withWindow(t *testing.T, text string) string {
	t.Helper()
	q, err := syntax.ParseQuery(&ast.Source{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	if q.Within == nil {
		text += " WITHIN 10"
	}
	return text
}

// runScript runs a script as `sase -f` does, JSON Lines out, standard input
// from stdin, and waits for its live queries. Its queries split over two
// workers, as workers = auto splits larger streams than a test's.
func runScript(t *testing.T, engine, text string, stdin io.Reader) (stdout, stderr string) {
	t.Helper()
	out, errw := &bytes.Buffer{}, &testkit.SyncBuffer{}
	var opts []Option
	if stdin != nil {
		opts = append(opts, WithStdin(stdin))
	}
	s := New(out, errw, opts...)
	for k, v := range map[string]string{"timing": "off", "format": "jsonl", "engine": engine, "workers": "2"} {
		if err := s.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Exec(context.Background(), &ast.Source{Name: "<test>", Text: text}); err != nil {
		t.Fatalf("%s: %v\n%s", text, err, errw)
	}
	if err := s.Wait(context.Background()); err != nil {
		t.Fatalf("%s: Wait: %v\n%s", text, err, errw)
	}
	return out.String(), errw.String()
}

// byQuery splits JSON Lines by the query that wrote them (the derived
// events' query has the key e), each in its order: live queries' lines
// interleave.
func byQuery(out string) []string {
	var events, others []string
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, `{"e":`) {
			events = append(events, line)
		} else {
			others = append(others, line)
		}
	}
	return []string{strings.Join(events, ""), strings.Join(others, "")}
}

// TestDerivedSourceColumns: a live derived stream's second producer whose
// columns sit at other slots (b is the first's, c is new) has its values
// moved there; events are numbered and typed in ts order across both.
func TestDerivedSourceColumns(t *testing.T) {
	ds := newDerivedSource("d", func() time.Duration { return 0 })
	merge := derive.New(mergeOut{ds})
	p1, _ := merge.Add([]string{"a", "b"}, false, 0)
	p2, _ := merge.Add([]string{"b", "c"}, false, 0)
	ds.declare(p1, []string{"a", "b"})
	ds.declare(p2, []string{"b", "c"})
	row := func(ts, x, y int64) []sase.Cell {
		return []sase.Cell{{Value: event.IntValue(x)}, {Value: event.IntValue(y)}, {Event: &event.Event{TS: ts}}}
	}
	p1.Row(row(2, 1, 2))
	p2.Row(row(1, 3, 4))
	p1.Finish()
	p2.Finish()
	var got []string
	ds.Read(context.Background(), func(batch []*event.Event) bool {
		for _, e := range batch {
			ds.Schema(func(sc *event.Schema) {
				text := fmt.Sprintf("%s@%d#%d", sc.Types[e.Type].Name, e.TS, e.Seq)
				for slot, v := range e.Attrs {
					if !v.IsAbsent() {
						text += " " + sc.Attrs[slot] + "=" + v.String()
					}
				}
				got = append(got, text)
			})
		}
		return true
	})
	if want := []string{"d@1#0 b=3 c=4", "d@2#1 a=1 b=2"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// TestDerivedAlgebraTS: a v3 pattern's derived event has its match's
// largest bound ts (LANGUAGE.md §9.3), whichever variable binds it, and
// no attribute for an unbound variable's (jsonl), loaded and live.
func TestDerivedAlgebraTS(t *testing.T) {
	const csv = "type,ts,x\nB,1,10\nA,3,30\nC,4,40\nA,9,90\n"
	path := filepath.Join(t.TempDir(), "s.csv")
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	const queries = "PATTERN SEQ(AND(A a, B b), C? c) WITHIN 5 RETURN b.x AS bx, c.x AS cx INTO d; USE d; PATTERN d e WITHIN 0;"
	want := `{"e":{"type":"d","ts":3,"seq":0,"bx":10}}` + "\n" + `{"e":{"type":"d","ts":4,"seq":1,"bx":10,"cx":40}}` + "\n"
	loaded, _ := runScript(t, "auto", "LOAD '"+path+"' AS s; "+queries, nil)
	live, _ := runScript(t, "auto", "LOAD '-' AS s; "+queries, strings.NewReader(csv))
	for name, out := range map[string]string{"loaded": loaded, "live": live} {
		if got := byQuery(out)[0]; got != want {
			t.Errorf("%s: got\n%swant\n%s", name, got, want)
		}
	}
}
