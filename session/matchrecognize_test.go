package session_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
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
	f, err := os.Open("../grammar/testdata/match_recognize.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var c mrCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
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
	s, stdout, _ := newSession(t)
	load := strings.Replace(c.Load, "'table.csv'", "'"+filepath.Join(dir, "table.csv")+"'", 1)
	if err := exec(t, s, load+"; SET format = jsonl; SET limit = 0;"); err != nil {
		t.Fatal(err)
	}
	err := exec(t, s, c.Query+";")
	if mrNotSupported[c.Name] {
		if err == nil || !strings.Contains(err.Error(), "not supported yet") || !strings.Contains(err.Error(), "^") {
			t.Fatalf("want a \"not supported yet\" error with a caret, got %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
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
