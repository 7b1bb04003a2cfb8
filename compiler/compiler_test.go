package compiler_test

import (
	"context"
	"iter"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/compiler"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/teststream"
	"github.com/sase-cep/sase/query"
)

// A query compiled through the registry runs, counts its matches, and
// its EXPLAIN ANALYZE reads the counts of the run that package query's
// Stats carry; an unknown engine is refused.
func TestCompileRunExplainAnalyze(t *testing.T) {
	c, err := query.Registered()
	if err != nil {
		t.Fatal(err)
	}
	stream := teststream.CSV(t, "s", "type,ts,x\nA,1,1\nB,2,2\nA,3,3\nB,4,4\n")
	text := "PATTERN SEQ(A a, B b) WITHIN 10 RETURN a, b.x"
	parsed, err := c.Parse(&ast.Source{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	q := parsed[0].(*ast.Query)
	if _, err := c.Compile(q, &ast.Source{Text: text}, stream, "no such engine"); err == nil {
		t.Error("an unknown engine compiled")
	}
	cq, err := c.Compile(q, &ast.Source{Text: text}, stream, "auto")
	if err != nil {
		t.Fatal(err)
	}
	want := []query.Column{{Name: "a", Kind: query.EventColumn}, {Name: "b.x", Kind: query.ValueColumn}}
	if got := cq.Columns(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Columns() = %v, want %v", got, want)
	}
	open := func(func()) iter.Seq[*event.Event] { return stream.All() }
	var rows int
	st, err := cq.Run(context.Background(), open, func([]query.Cell) bool { rows++; return true }, query.RunOptions{Timing: true})
	if err != nil {
		t.Fatal(err)
	}
	if rows != 3 || st.Matches != 3 || st.Events != 4 {
		t.Errorf("ran %d rows, stats %+v; want 3 matches of 4 events", rows, st)
	}
	text, err = cq.ExplainAs("text", 1, false, st)
	if err != nil || !strings.Contains(text, "(in=") {
		t.Errorf("ExplainAs with a run's stats = %q, %v; want its counts", text, err)
	}
	if compiler.Facade(cq) == nil || compiler.Of(nil) != nil {
		t.Error("Facade or Of does not round-trip")
	}
}
