package grammar

import (
	"slices"
	"testing"

	"github.com/sase-cep/sase/source"
)

// LOAD's FORMAT takes, and completes, the input formats that package
// source registers: the parser, below source, keeps their names in
// loadFormats, and this keeps the two alike.
func TestLoadFormatsAreTheInputFormats(t *testing.T) {
	if got := source.InputFormats(); !slices.Equal(loadFormats, got) {
		t.Errorf("LOAD's formats are %v, the input formats %v", loadFormats, got)
	}
}
