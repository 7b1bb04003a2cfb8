package grammar

import (
	"errors"
	"unicode/utf8"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/grammar/gen"
)

// mrWords are MATCH_RECOGNIZE's words: the grammar takes every token after
// SELECT (mrParser reads them), so completion probes each with mrParser
// instead of the generated parser.
var mrWords = []string{
	"AFTER", "ALL", "AND", "AS", "ASC", "AVG", "BY", "CLASSIFIER", "COUNT", "DEFINE", "DESC", "EMPTY",
	"FINAL", "FIRST", "FROM", "LAST", "MATCH", "MATCHES", "MATCH_NUMBER", "MATCH_RECOGNIZE", "MAX",
	"MEASURES", "MIN", "NEXT", "NOT", "OMIT", "ONE", "OR", "ORDER", "PARTITION", "PAST", "PATTERN",
	"PER", "PERMUTE", "PREV", "ROW", "ROWS", "RUNNING", "SHOW", "SKIP", "SUBSET", "SUM", "TO",
	"UNMATCHED", "WITH", "WITHIN",
}

// mrStatement is the statement before the cursor when it is a
// MATCH_RECOGNIZE (SELECT ..., or EXPLAIN ... SELECT ...).
func mrStatement(before string) (string, bool) {
	toks := lex(before)
	from := 0
	for i, t := range toks {
		if t.GetTokenType() == gen.SaseLexerSEMI {
			from = i + 1
		}
	}
	for _, t := range toks[from:] {
		if t.GetTokenType() == gen.SaseLexerSELECT {
			return runeSlice(before, toks[from].GetStart(), utf8.RuneCountInString(before)), true
		}
	}
	return "", false
}

// mrKeywords are the words of mrWords that begin with c's word and that
// mrParser accepts after stmt: parsing stmt and the word fails only at
// the end of input, or not at all. Where a name fits, any word would, as
// a name: then only functions (mrFuncs) are offered, each probed with
// its '('.
func mrKeywords(c *Completion, stmt string) []string {
	fits := func(text string) bool {
		_, err := Parse(&ast.Source{Text: stmt + text})
		var list ast.ErrorList
		return err == nil || errors.As(err, &list) && len(list) > 0 && list[0].Offset >= len(stmt)+len(text)
	}
	nameFits := fits("x_")
	var out []string
	for _, w := range mrWords {
		spelled, ok := c.Keyword(w)
		if !ok || nameFits && !mrFuncs[w] {
			continue
		}
		probe := w
		if nameFits {
			probe += "("
		}
		if fits(probe) {
			out = append(out, spelled)
		}
	}
	return out
}
