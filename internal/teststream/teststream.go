// Package teststream builds small streams for tests from CSV text.
package teststream

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/source"
)

// CSV loads a stream named name from CSV text (a header with type and ts
// columns, then rows), failing the test on a load error.
func CSV(t testing.TB, name, csv string) *event.Stream {
	t.Helper()
	st, err := source.LoadCSV(strings.NewReader(csv), name+".csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Name = name
	return st
}

// StocksCSVFile is the default stock stream as CSV, and a file in a
// temporary folder holding it.
func StocksCSVFile(t testing.TB) ([]byte, string) {
	t.Helper()
	var csv bytes.Buffer
	if err := source.WriteStocksCSV(&csv, source.DefaultStockConfig()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "stocks.csv")
	if err := os.WriteFile(path, csv.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return csv.Bytes(), path
}
