package session_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/session"
)

// mrCase is one case of match_recognize.jsonl (the spec's conformance
// cases for MATCH_RECOGNIZE; their README gives the format).
type mrCase struct {
	Name         string
	TableCSV     string `json:"table_csv"`
	Load         string
	Query        string
	ExpectedRows [][]any `json:"expected_rows"`
	Ordered      bool
}

// mrNotSupported lists the cases that must be refused at compile time
// with "not supported yet" and a caret, by name; none so far.
var mrNotSupported = map[string]bool{}

// TestMatchRecognizeConformance runs every case: load its table, run its
// query in JSON Lines and compare each row's values in key order.
func TestMatchRecognizeConformance(t *testing.T) {
	cases := testkit.ReadJSONL[mrCase](t, "../grammar/testdata/match_recognize.jsonl")
	n := len(cases)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { runMRCase(t, c) })
	}
	if n != 26 {
		t.Fatalf("read %d cases, want 26", n)
	}
}

func runMRCase(t *testing.T, c mrCase) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "table.csv"), []byte(c.TableCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	s, stdout, stderr := newSession(t)
	load := strings.Replace(c.Load, "'table.csv'", "'"+filepath.Join(dir, "table.csv")+"'", 1)
	if err := exec(t, s, load+"; SET format = jsonl; SET limit = 0;"); err != nil {
		t.Fatal(err)
	}
	err := exec(t, s, c.Query+";")
	if mrNotSupported[c.Name] {
		if err == nil || !strings.Contains(stderr.String(), "not supported yet") || !strings.Contains(stderr.String(), "^") {
			t.Fatalf("want a \"not supported yet\" error with a caret, got %v: %s", err, stderr)
		}
		return
	}
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	got := jsonlRows(t, stdout.Bytes())
	want := c.ExpectedRows
	if want == nil {
		want = [][]any{}
	}
	if !c.Ordered {
		sortRows(got)
		sortRows(want)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s\ngot  %v\nwant %v", c.Query, got, want)
	}
}

// jsonlRows reads JSON Lines objects as lists of their values, in key order.
func jsonlRows(t *testing.T, out []byte) [][]any {
	t.Helper()
	rows := [][]any{}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Fatalf("not a JSON object: %s", line)
		}
		var row []any
		for dec.More() {
			if _, err := dec.Token(); err != nil { // the key
				t.Fatal(err)
			}
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return rows
}

func sortRows(rows [][]any) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, _ := json.Marshal(rows[i])
		b, _ := json.Marshal(rows[j])
		return string(a) < string(b)
	})
}

const mrVShape = "SELECT * FROM stocks MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES FIRST(A.price) AS start_price, " +
	"LAST(C.price) AS end_price, count(B.price) AS falls %s PATTERN (A B+ C+) " +
	"DEFINE B AS B.price < PREV(B.price), C AS C.price > PREV(C.price)) AS m;"

// TestMatchRecognizeWorkers runs a MATCH_RECOGNIZE on the stocks stream on
// one worker and on two: the output is byte-identical.
func TestMatchRecognizeWorkers(t *testing.T) {
	for _, rows := range []string{"ONE ROW PER MATCH", "ALL ROWS PER MATCH"} {
		var outs [2]string
		for i, workers := range []string{"1", "2"} {
			s, stdout, _ := newSession(t)
			if err := exec(t, s, "SET format = csv; SET limit = 0; SET workers = "+workers+";"+fmt.Sprintf(mrVShape, rows)); err != nil {
				t.Fatal(err)
			}
			outs[i] = stdout.String()
		}
		if strings.Count(outs[0], "\n") < 100 || outs[0] != outs[1] {
			t.Errorf("%s: 1 worker wrote %d bytes, 2 wrote %d, or they differ", rows, len(outs[0]), len(outs[1]))
		}
	}
}

func TestMatchRecognizeSession(t *testing.T) {
	s, stdout, stderr := newSession(t, session.WithStdin(strings.NewReader("type,ts,x\n")))
	if err := exec(t, s, "SET format = csv; SET limit = 2;"+fmt.Sprintf(mrVShape, "ONE ROW PER MATCH")); err != nil {
		t.Fatal(err)
	}
	if want := "symbol,start_price,end_price,falls\n"; !strings.HasPrefix(stdout.String(), want) || strings.Count(stdout.String(), "\n") != 3 {
		t.Errorf("got %q, want a header and 2 rows", stdout)
	}
	if want := "(stopped at the limit of 2 rows; SET limit = 0 for all)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	stdout.Reset()
	if err := exec(t, s, "EXPLAIN "+fmt.Sprintf(mrVShape, "ONE ROW PER MATCH")); err != nil {
		t.Fatal(err)
	}
	if want := "MATCH_RECOGNIZE on stocks\n  partition by SYMBOL\n  sorted by TS\n"; !strings.HasPrefix(stdout.String(), want) || !strings.Contains(stdout.String(), "pattern (A B+ C+)") {
		t.Errorf("EXPLAIN: got\n%s\nwant it to start with\n%s", stdout, want)
	}
	for _, tt := range []struct{ stmt, err string }{
		{"SELECT * FROM nope MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE A AS true);", "1:15: no stream named nope"},
		{"SELECT * FROM stocks MATCH_RECOGNIZE (ORDER BY nope PATTERN (A) DEFINE A AS true);", "1:48: stream stocks has no column nope"},
		{"LOAD '-' AS live; EXPLAIN ANALYZE SELECT * FROM live MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE A AS true);",
			"1:19: EXPLAIN ANALYZE needs a loaded stream; live is live"},
	} {
		stderr.Reset()
		if err := exec(t, s, tt.stmt); err == nil || !strings.Contains(stderr.String(), tt.err) || !strings.Contains(stderr.String(), "^") {
			t.Errorf("%s: got %v: %s\nwant %q with a caret", tt.stmt, err, stderr, tt.err)
		}
	}
	// EXPLAIN of one on a live stream prints its program, as on a loaded
	// one, and starts nothing.
	stdout.Reset()
	if err := exec(t, s, "EXPLAIN SELECT * FROM live MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B) WITHIN 10 DEFINE B AS B.x > A.x);"); err != nil {
		t.Fatal(err)
	}
	if got := stdout.String(); !strings.HasPrefix(got, "MATCH_RECOGNIZE on live\n") || !strings.Contains(got, "pattern (A B)") {
		t.Errorf("EXPLAIN on a live stream: got\n%s", got)
	}
	if qs := s.Queries(); len(qs) != 0 {
		t.Errorf("EXPLAIN on a live stream started %d queries", len(qs))
	}
}

// TestReadmeMatchRecognize runs the README's MATCH_RECOGNIZE example as
// pasted (its prompts removed) and checks the rows it shows.
func TestReadmeMatchRecognize(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "sase> PATTERN ANY(stock1, ")
	if start < 0 || !strings.Contains(text[start:], "SELECT * FROM orders MATCH_RECOGNIZE(") {
		t.Fatal("README.md has no MATCH_RECOGNIZE example")
	}
	end := start + strings.Index(text[start:], "     );\n") + len("     );\n")
	var stmt strings.Builder
	for _, line := range strings.SplitAfter(text[start:end], "\n") {
		line = strings.TrimPrefix(strings.TrimPrefix(line, "sase> "), "   -> ")
		stmt.WriteString(line)
	}
	shown := text[end : end+strings.Index(text[end:], "...\n")]
	s, stdout, _ := newSession(t)
	if err := exec(t, s, stmt.String()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), shown) {
		t.Errorf("got\n%s\nwant it to start with\n%s", stdout, shown)
	}
}
