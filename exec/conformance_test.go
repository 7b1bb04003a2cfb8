package exec_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/planner"
	"github.com/sase-cep/sase/source"
)

// conformanceCase is one line of testdata/conformance/cases.jsonl.
type conformanceCase struct {
	Name      string           `json:"name"`
	StreamCSV string           `json:"stream_csv"`
	Query     string           `json:"query"`
	Matches   []map[string]any `json:"matches"`
	Error     string           `json:"error"`
}

func readCases(t *testing.T, path string) []conformanceCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []conformanceCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var c conformanceCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		cases = append(cases, c)
	}
	return cases
}

// engines is every plan shape that must return the conformance answers.
var engines = sase.EngineNames()

// runCase compiles and runs one case's query on one engine and returns the
// matches as canonical strings, as in the conformance file.
func runCase(c conformanceCase, engine string) ([]string, error) {
	stream, err := source.LoadCSV(strings.NewReader(c.StreamCSV), c.Name+".csv", source.Options{})
	if err != nil {
		return nil, err
	}
	stream.Name = "s"
	return queryMatches(stream, c.Query, engine)
}

// queryMatches runs a query on a stream and returns its matches, sorted,
// as canonical strings: variables (positive singles and closures, by name)
// to seq numbers. It compares bindings, not RETURN columns: the query is
// compiled as written (its RETURN must compile too), then run without
// RETURN.
func queryMatches(stream *event.Stream, text, engine string) ([]string, error) {
	src := &ast.Source{Name: "<query>", Text: text}
	q, err := grammar.ParseQuery(src)
	if err != nil {
		return nil, err
	}
	e, err := sase.LookupEngine(engine)
	if err != nil {
		return nil, err
	}
	if _, err := sase.CompileAST(q, src, stream, sase.WithEngine(e)); err != nil {
		return nil, err
	}
	q.Return = nil
	cq, err := sase.CompileAST(q, src, stream, sase.WithEngine(e))
	if err != nil {
		return nil, err
	}
	got := []string{}
	_, err = cq.Run(context.Background(), stream.All(), func(row []sase.Cell) bool {
		m := map[string]any{}
		for i, col := range cq.Columns() {
			if col.Kind == planner.ColList {
				seqs := []int64{}
				for _, e := range row[i].List {
					seqs = append(seqs, e.Seq)
				}
				m[col.Name] = seqs
			} else {
				m[col.Name] = row[i].Event.Seq
			}
		}
		got = append(got, canonical(m))
		return true
	})
	slices.Sort(got)
	return got, err
}

func canonical(m map[string]any) string {
	b, err := json.Marshal(m) // map keys are sorted
	if err != nil {
		panic(err)
	}
	return string(b)
}

func expected(c conformanceCase) []string {
	out := []string{}
	for _, m := range c.Matches {
		out = append(out, canonical(m))
	}
	slices.Sort(out)
	return out
}

// TestConformance runs cases.jsonl on every engine.
func TestConformance(t *testing.T) {
	for _, c := range readCases(t, "../testdata/conformance/cases.jsonl") {
		for _, engine := range engines {
			t.Run(engine+"/"+c.Name, func(t *testing.T) { checkCase(t, c, engine) })
		}
	}
}

// checkCase asserts one case on one engine: its error, or its matches as
// a multiset.
func checkCase(t *testing.T, c conformanceCase, engine string) {
	t.Helper()
	got, err := runCase(c, engine)
	if c.Error != "" {
		if err == nil {
			t.Fatalf("query %q: want an error like %q, got %d matches", c.Query, c.Error, len(got))
		}
		return
	}
	if err != nil {
		t.Fatalf("query %q: %v", c.Query, err)
	}
	if want := expected(c); !slices.Equal(got, want) {
		t.Fatalf("query %q\nstream:\n%s\ngot  %d: %s\nwant %d: %s", c.Query, c.StreamCSV, len(got), strings.Join(got, " "), len(want), strings.Join(want, " "))
	}
}

// TestPaperQ3Counts checks the SASE paper's Figure 1 counts on its basic
// plan: SSC 7, selection 3, window 2, negation 1; and that the optimized
// plan builds fewer intermediate sequences (its Figure 6 shows 2).
func TestPaperQ3Counts(t *testing.T) {
	var q3 conformanceCase
	for _, c := range readCases(t, "../testdata/conformance/cases.jsonl") {
		if c.Name == "sase06-q3" {
			q3 = c
		}
	}
	stream, err := source.LoadCSV(strings.NewReader(q3.StreamCSV), "q3.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	query, stats := runEngine(t, stream, q3.Query, "basic")
	var got []string
	for i, op := range query.Plan().Operators() {
		got = append(got, fmt.Sprintf("%s %d", op.Name(), stats.Operators[i].Out))
	}
	want := []string{"SSC 7", "Selection 3", "Window 2", "Negation 1", "Transformation 1"}
	if !slices.Equal(got, want) {
		t.Fatalf("basic plan outputs: got %v, want %v", got, want)
	}

	_, stats = runEngine(t, stream, q3.Query, "auto")
	if sequences := stats.Operators[0].Out; sequences >= 7 || stats.Matches != 1 {
		t.Errorf("auto plan: SSC built %d sequences (want fewer than 7), %d matches (want 1)", sequences, stats.Matches)
	}
	t.Logf("auto plan: SSC built %d sequences from %d stack instances", stats.Operators[0].Out, stats.Instances)
}
