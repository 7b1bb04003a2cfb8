package source_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sase-cep/sase/source"
)

// TestLoadTable loads a table without type or ts column (docs/LANGUAGE.md
// §10): every row is of the given type, its ts its 0-based row number.
func TestLoadTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "table.csv")
	if err := os.WriteFile(path, []byte("id,type,value\n1,x,90\n2,y,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts, err := source.ParseOptions(map[string]string{"type": "t", "ts_column": ""})
	if err != nil {
		t.Fatal(err)
	}
	s, err := source.Load(path, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Events) != 2 || len(s.Schema.Types) != 1 || s.Schema.Types[0].Name != "t" {
		t.Fatalf("got %d events of types %v", len(s.Events), s.Schema.Types)
	}
	typ, _ := s.Schema.AttrSlot("type")
	value, _ := s.Schema.AttrSlot("value")
	for i, e := range s.Events {
		if e.TS != int64(i) {
			t.Errorf("row %d: ts %d", i, e.TS)
		}
	}
	if got := s.Events[1].Attr(typ).Str(); got != "y" {
		t.Errorf("column type of row 1 = %q, want y (a column like any other)", got)
	}
	if !s.Events[1].Attr(value).IsAbsent() {
		t.Errorf("empty cell is %v, want absent (NULL)", s.Events[1].Attr(value))
	}
	if _, err := source.ParseOptions(map[string]string{"type": "t", "type_column": "k"}); err == nil {
		t.Error("type and type_column together: no error")
	}
}
