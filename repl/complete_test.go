package repl_test

import (
	"context"
	"slices"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/repl"
)

// TestComplete checks the candidates in each context: statements,
// keywords, backslash commands, settings and their values, streams, event
// types, attributes of a variable's types, and files.
func TestComplete(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteFiles(t, dir, map[string]string{
		"trades.csv":        "type,ts,symbol,price\nIBM,1,IBM,101.5\nSun,2,Sun,12\n",
		"trips.jsonl":       `{"type":"trip","ts":1,"城市":"東京","geo":{"country":"JP","city":"Tokyo"}}` + "\n",
		"data/more.csv":     "type,ts\nA,1\n",
		"it's.csv":          "type,ts\nA,1\n",
		".hidden.csv":       "type,ts\nA,1\n",
		"scripts/one.sase":  "SHOW STREAMS;\n",
		"my dir/x.sase":     "SHOW STREAMS;\n",
		"data/nested/z.csv": "type,ts\nA,1\n",
	})
	t.Chdir(dir)
	_, s, _, stderr := newShell(t)
	if err := s.Exec(context.Background(), &ast.Source{Name: "<test>", Text: "LOAD 'trades.csv'; LOAD 'trips.jsonl'; USE stocks;"}); err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	statements := []string{"DESCRIBE ", "EVENT ", "EXPLAIN ", "GENERATE ", "LISTEN ", "LOAD ", "PATTERN ", "RULE ", "SET ", "SHOW ", "STOP ", "USE "}
	types := []string{"stock1 ", "stock10 ", "stock2 ", "stock3 ", "stock4 ", "stock5 ", "stock6 ", "stock7 ", "stock8 ", "stock9 "}
	tests := []struct {
		name, text string
		word       string
		want       []string
	}{
		{"statements", "", "", statements},
		{"statements after a finished one", "SHOW STREAMS; ", "", statements},
		{"a statement, lower case", "sh", "sh", []string{"show "}},
		{"a statement, upper case", "S", "S", []string{"SET ", "SHOW ", "STOP "}},
		{"SHOW", "SHOW ", "", []string{"QUERIES ", "SETTINGS ", "STREAMS ", "TYPES "}},
		{"EXPLAIN", "explain ", "", []string{"analyze ", "event ", "pattern "}},
		{"clauses after a pattern", "PATTERN SEQ(stock1 a, stock2 b) W", "W", []string{"WHERE ", "WITHIN "}},
		{"every clause after a pattern", "PATTERN SEQ(stock1 a, stock2 b) ", "", []string{"FROM ", "RETURN ", "WHERE ", "WITHIN "}},
		{"after a condition", "PATTERN SEQ(stock1 a) WHERE a.price > 3 ", "", []string{"AND ", "OR ", "RETURN ", "WITHIN "}},
		{"types in a pattern", "PATTERN SEQ(stock1 a, stock", "stock", types},
		{"groups and types after PATTERN", "PATTERN ", "", append(slices.Clone(types), "AND(", "ANY(", "OR(", "SEQ(")},
		{"a nested group", "PATTERN SEQ(stock1 a, O", "O", []string{"OR("}},
		{"a nested group, lower case", "pattern and(stock1 a, se", "se", []string{"seq("}},
		{"variables of nested groups", "PATTERN SEQ(stock1 a, OR(SEQ(stock2 b, stock3? c), stock4{2,3} d[])) WHERE ", "", []string{"a", "b", "c", "d", "FALSE ", "NOT ", "TRUE "}},
		{"a bounded closure's LEN", "PATTERN SEQ(stock1 a, stock2{2,3} b[], stock3 c) WHERE b.l", "l", []string{"len "}},
		{"types of the FROM stream are not known yet", "PATTERN SEQ(I", "I", nil},
		{"types in ANY", "PATTERN SEQ(ANY(stock1, stock2) a, !stock3", "stock3", []string{"stock3 "}},
		{"a new variable: nothing to offer", "PATTERN SEQ(stock1 ", "", nil},
		{"streams after USE", "USE ", "", []string{"stocks ", "trades ", "trips "}},
		{"streams after FROM", "PATTERN SEQ(IBM a, Sun b) FROM t", "t", []string{"trades ", "trips "}},
		{"streams after SHOW TYPES FROM", "SHOW TYPES FROM st", "st", []string{"stocks "}},
		{"DESCRIBE: streams and types", "DESCRIBE stock", "stock", append(types, "stocks ")},
		{"variables in WHERE", "PATTERN SEQ(stock1 a, stock2+ bb[], stock3 c) WHERE ", "", []string{"a", "bb", "c", "FALSE ", "NOT ", "TRUE "}},
		{"variables in RETURN", "PATTERN SEQ(stock1 a, stock2 b) WITHIN 5 RETURN b", "b", []string{"b"}},
		{"attributes of a variable", "PATTERN SEQ(stock1 a, stock2 b) WHERE a.", "", []string{"id ", "price ", "seq ", "symbol ", "ts ", "volume "}},
		{"attributes by prefix", "PATTERN SEQ(stock1 a) WHERE a.p", "p", []string{"price "}},
		{"attributes of the FROM stream", "PATTERN SEQ(IBM a, Sun b) FROM trades WHERE a.price > b.", "", []string{"price ", "seq ", "symbol ", "ts "}},
		{"attributes of a closure element", "PATTERN SEQ(stock1 a, stock2+ b[]) WHERE b[i].vo", "vo", []string{"volume "}},
		{"a closure's LEN", "PATTERN SEQ(stock1 a, stock2+ b[]) WHERE b.l", "l", []string{"len "}},
		{"attributes, multi-line", "PATTERN SEQ(stock1 a,\n  stock2 b)\nWHERE b.sy", "sy", []string{"symbol "}},
		{"attributes in an equivalence test", "PATTERN SEQ(stock1 a, stock2 b) WHERE [s", "s", []string{"symbol"}},
		{"a nested JSON key by its dotted name", "PATTERN trip t FROM trips WHERE t.ge", "ge", []string{"geo.city ", "geo.country "}},
		{"a nested JSON key after its first part", "PATTERN trip t FROM trips WHERE t.geo.co", "geo.co", []string{"geo.country "}},
		{"a nested JSON key in an equivalence test", "PATTERN SEQ(trip a, trip b) FROM trips WHERE [geo.", "geo.", []string{"geo.city", "geo.country"}},
		{"a name that needs backquotes", "PATTERN trip t FROM trips WHERE t.", "", []string{"`城市` ", "geo.city ", "geo.country ", "seq ", "ts "}},
		{"a name opened with a backquote", "PATTERN trip t FROM trips WHERE t.`城", "`城", []string{"`城市` "}},
		{"plain names after a backquote", "USE `tr", "`tr", []string{"`trades` ", "`trips` "}},
		{"a backquoted nested key", "PATTERN trip t FROM trips WHERE t.`geo.ci", "`geo.ci", []string{"`geo.city` "}},
		{"an unknown variable has no attributes", "PATTERN SEQ(stock1 a) WHERE z.", "", nil},
		{"settings", "SET ", "", []string{"engine ", "expanded ", "format ", "limit ", "order ", "output ", "timing ", "workers "}},
		{"setting values", "SET engine = p", "p", []string{"pais"}},
		{"setting values, format", "SET format = ", "", []string{"count", "csv", "jsonl", "table"}},
		{"LOAD's formats", "LOAD 'x' FORMAT ", "", []string{"csv ", "jsonl "}},
		{"EXPLAIN's formats", "EXPLAIN (FORMAT j", "j", []string{"json "}},
		{"EXPLAIN's options", "EXPLAIN (", "", []string{"ANALYZE ", "FORMAT "}},
		{"commands", `\`, `\`, []string{`\? `, `\h `, `\help `, `\i `, `\include `, `\o `, `\out `, `\q `, `\quit `, `\set `, `\timing `, `\x `}},
		{"commands by prefix", `\ti`, `\ti`, []string{`\timing `}},
		{"a command's values", `\x o`, "o", []string{"off", "on"}},
		{"\\set keys", `\set ti`, "ti", []string{"timing"}},
		{"\\set values", `\set engine a`, "a", []string{"ais", "auto"}},
		{"files in LOAD", "LOAD 'tr", "tr", []string{"trades.csv'", "trips.jsonl'"}},
		{"folders in LOAD", "LOAD 'da", "da", []string{"data/"}},
		{"inside a folder", "LOAD 'data/", "data/", []string{"data/more.csv'", "data/nested/"}},
		{"a quote in a name", "LOAD 'it''", "it'", []string{"it's.csv'"}},
		{"hidden files once a dot is typed", "LOAD '.h", ".h", []string{".hidden.csv'"}},
		{"a missing folder", "LOAD 'nope/", "nope/", nil},
		{"files after \\i", `\i scr`, "scr", []string{"scripts/"}},
		{"files after \\i in quotes", `\i 'my`, "my", []string{"my dir/"}},
		{"files after \\o", `\o tr`, "tr", []string{"trades.csv", "trips.jsonl"}},
		{"no files in other strings", "LISTEN 'tcp", "", nil},
		{"STOP QUERY: no query runs", "STOP QUERY ", "", nil},
		{"inside a comment", "PATTERN /* stock", "stock", nil},
		{"after a syntax error", "PATTERN SEQ(stock1 a)) WHERE ", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			word, got := repl.Complete(s, tt.text)
			if word != tt.word || !slices.Equal(got, tt.want) {
				t.Errorf("Complete(%q) = %q, %q\nwant %q, %q", tt.text, word, got, tt.word, tt.want)
			}
		})
	}
}

// TestCompleteQueryIDs checks that STOP QUERY offers the running queries.
func TestCompleteQueryIDs(t *testing.T) {
	_, s, _, stderr := newShell(t)
	exec := func(text string) {
		if err := s.Exec(context.Background(), &ast.Source{Name: "<test>", Text: text}); err != nil {
			t.Fatalf("%v: %s", err, stderr)
		}
	}
	exec("LISTEN 'tcp://127.0.0.1:0' AS feed; PATTERN SEQ(A a, B b) WITHIN 10; PATTERN A a WITHIN 1; STOP QUERY 1;")
	if word, got := repl.Complete(s, "STOP QUERY "); word != "" || !slices.Equal(got, []string{"2 "}) {
		t.Errorf("Complete = %q, %q; want the running query 2", word, got)
	}
	exec("STOP QUERY 2;")
}

// BenchmarkComplete measures a TAB in a query's WHERE clause: every
// keyword is tried on the parser.
func BenchmarkComplete(b *testing.B) {
	_, s, _, _ := newShell(b)
	for b.Loop() {
		repl.Complete(s, "PATTERN SEQ(stock1 a, stock2+ b[], stock3 c) WHERE b[i].price > a.price AND ")
	}
}
