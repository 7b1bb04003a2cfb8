package ast_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/grammar"
)

// The printer quotes names that are keywords; its list must be the
// grammar's, or a printed name would not parse back (or be quoted for
// nothing).
func TestKeywordsAgreeWithGrammar(t *testing.T) {
	var words []string
	for _, w := range grammar.Keywords() {
		words = append(words, strings.ToLower(w))
	}
	slices.Sort(words)
	if got := slices.Sorted(maps.Keys(ast.Keywords)); !slices.Equal(got, words) {
		t.Errorf("ast keywords\n%q\ngrammar keywords\n%q", got, words)
	}
}
