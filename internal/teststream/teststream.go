// Package teststream builds small streams for tests from CSV text.
package teststream

import (
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
