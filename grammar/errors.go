package grammar

import (
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/grammar/gen"
)

// SyntaxError implements antlr.ErrorListener for both the lexer and the
// parser. ANTLR's own messages list token sets ("mismatched input ...
// expecting {...}"); these are rewritten in the words of the language.
func (b *builder) SyntaxError(_ antlr.Recognizer, sym any, _, _ int, _ string, _ antlr.RecognitionException) {
	// The recognizer passed in is the embedded antlr.BaseLexer or
	// BaseParser, so the builder keeps its own references.
	if sym == nil {
		b.syntax = true // the parser's errors would only follow from this one
		off := b.offs[b.lexer.TokenStartCharIndex]
		ch, _ := utf8.DecodeRuneInString(b.src.Text[off:])
		b.errorf(off, "unexpected character %q", ch)
		return
	}
	t, ok := sym.(antlr.Token)
	if !ok || b.syntax {
		return
	}
	b.syntax = true
	if _, ok := unterminated[t.GetTokenType()]; ok {
		return // reported by Parse, with a better message
	}
	off, text := b.syntaxMessage(t)
	b.errorf(off, "%s", text)
}

// syntaxMessage words a syntax error at token t and says where to point:
// at the token to fix, which may be t or the one before it.
func (b *builder) syntaxMessage(t antlr.Token) (int, string) {
	v := vocab()
	found := describe(t)
	expected := setOf(b.parser.GetExpectedTokens())
	prev := b.previous(t)
	// When a prediction fails some tokens after its decision point, the
	// expected set is that of the decision, which does not describe t.
	late := t.GetTokenIndex() != b.parser.GetCurrentToken().GetTokenIndex()

	if _, ok := b.parser.GetParserRuleContext().(*gen.ScriptContext); ok && !late && expected.covers(v.statement) {
		return b.off(t), b.statementMessage(t)
	}
	// INTO where a query could end or go on with RETURN, but no RETURN
	// came before it.
	ends := expected[gen.SaseParserSEMI] || expected[antlr.TokenEOF] || expected[gen.SaseParserRETURN]
	if t.GetTokenType() == gen.SaseParserINTO && ends && b.intoWithoutReturn(t) {
		return b.off(t), "INTO needs RETURN: the derived stream's attributes are the RETURN columns"
	}
	// A misspelled keyword: the token itself, or the name before it (SQE
	// is a fine type name until the '(' after it).
	if fix := b.keywordFix(t, t); fix != "" {
		return b.off(t), "unexpected " + found + "; did you mean " + fix + "?"
	}
	if prev != nil && prev.GetTokenType() == gen.SaseParserID {
		if fix := b.keywordFix(prev, t); fix != "" {
			return b.off(prev), "unexpected " + describe(prev) + "; did you mean " + fix + "?"
		}
	}
	if late || expected[gen.SaseParserSEMI] || expected[antlr.TokenEOF] {
		// The statement could end here: this token is one too many.
		return b.off(t), "unexpected " + found
	}
	words := b.expectedWords(expected)
	if len(words) == 0 || len(words) > 6 {
		return b.off(t), "unexpected " + found
	}
	if prev != nil && !closers[t.GetTokenType()] && slices.ContainsFunc(expected.sorted(), func(tt int) bool { return closers[tt] }) {
		// A missing ')' belongs right after what it closes, which may be
		// lines before the token that shows it is missing.
		return b.tokSpan(prev).End, "expected " + orList(words) + " after " + describe(prev)
	}
	return b.off(t), "expected " + orList(words) + " at " + found
}

// statementMessage words an error at the start of a statement.
func (b *builder) statementMessage(t antlr.Token) string {
	v := vocab()
	tt := t.GetTokenType()
	switch {
	case v.pattern[tt] && !v.name[tt]:
		// SEQ(, !, ANY: a pattern without its keyword.
		return "expected " + orList(tokenSet{gen.SaseParserPATTERN: true, gen.SaseParserEVENT: true}.words(b.parser)) + " at " + describe(t)
	case tt == gen.SaseParserID || v.keywords[tt] != "":
		if fix := b.keywordFix(t, t); fix != "" {
			return "unknown statement " + t.GetText() + "; did you mean " + fix + "?"
		}
		return "unknown statement " + t.GetText() + "; statements are " + orList(v.statement.words(b.parser))
	}
	return "expected a statement (" + orList(v.statement.words(b.parser)) + ") at " + describe(t)
}

// keywordFix returns the keywords near the text of token at (as a typo)
// that, written in its place, let the parse get past token err; "" if none.
func (b *builder) keywordFix(at, err antlr.Token) string {
	v := vocab()
	if at.GetTokenType() != gen.SaseParserID && v.keywords[at.GetTokenType()] == "" {
		return ""
	}
	sp := b.tokSpan(at)
	var fixes []string
	near := ast.Closest(at.GetText(), v.words)
	if w, ok := longForms[strings.ToLower(at.GetText())]; ok {
		near = append(near, w)
	}
	for _, w := range near {
		if strings.EqualFold(w, at.GetText()) {
			continue
		}
		text := b.src.Text[:sp.Start] + w + b.src.Text[sp.End:]
		if i := firstErrorIndex(text); i < 0 || i > err.GetTokenIndex() {
			fixes = append(fixes, w)
		}
	}
	return orList(fixes)
}

// longForms are words for the pattern algebra's groups too far from
// their keyword to be a typo: SEQUENCE spelled out, and PERMUTE, which
// MATCH_RECOGNIZE writes for AND.
var longForms = map[string]string{"sequence": "SEQ", "permute": "AND"}

// firstErrorIndex parses text and returns the index of the token of its
// first syntax error, or -1.
func firstErrorIndex(text string) int {
	p := newParser(text)
	l := &firstError{index: -1}
	p.AddErrorListener(l)
	p.Script()
	return l.index
}

// previous returns the token before t on the default channel, or nil.
func (b *builder) previous(t antlr.Token) antlr.Token {
	for i := t.GetTokenIndex() - 1; i >= 0; i-- {
		if p := b.parser.GetTokenStream().Get(i); p.GetChannel() == antlr.TokenDefaultChannel {
			return p
		}
	}
	return nil
}

// intoWithoutReturn reports whether t's statement is a query with no
// RETURN before t.
func (b *builder) intoWithoutReturn(t antlr.Token) bool {
	query := false
	for i := t.GetTokenIndex() - 1; i >= 0; i-- {
		switch b.parser.GetTokenStream().Get(i).GetTokenType() {
		case gen.SaseParserRETURN:
			return false
		case gen.SaseParserPATTERN, gen.SaseParserEVENT:
			query = true
		case gen.SaseParserSEMI:
			return query
		}
	}
	return query
}

var closers = map[int]bool{gen.SaseParserRPAREN: true, gen.SaseParserRBRACK: true, gen.SaseParserRBRACE: true}

// expectedWords names an expected set: whole classes by what they start
// ("an expression", "a name"), then single tokens.
func (b *builder) expectedWords(set tokenSet) []string {
	v := vocab()
	set = maps.Clone(set)
	var words []string
	for _, class := range []struct {
		first tokenSet
		word  string
	}{
		{v.expr, "an expression"},
		{v.pattern, "a pattern"},
		{v.component, "a pattern component"},
		{v.word, "a name"},
		{v.name, "a name"},
	} {
		if set.covers(class.first) {
			for t := range class.first {
				delete(set, t)
			}
			words = append(words, class.word)
		}
	}
	for _, w := range set.words(b.parser) {
		if !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	return words
}

// words names the tokens of a set, each word once, in token order.
func (s tokenSet) words(p *gen.SaseParser) []string {
	var out []string
	for _, t := range s.sorted() {
		if w := tokenWord(p, t); !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// tokenWords names the tokens that are not a single literal.
var tokenWords = map[int]string{
	antlr.TokenEOF:         "end of input",
	gen.SaseParserID:       "a name",
	gen.SaseParserBQUOTED:  "a name",
	gen.SaseParserDQUOTED:  "a name",
	gen.SaseParserSTRING:   "a string",
	gen.SaseParserINT:      "a number",
	gen.SaseParserFLOAT:    "a number",
	gen.SaseParserSTRATEGY: "a selection strategy",
	gen.SaseParserEQ:       "'='",
	gen.SaseParserNE:       "'!='",
	gen.SaseParserLE:       "'<='",
	gen.SaseParserGE:       "'>='",
}

// tokenWord names a token type for a message: keywords in upper case,
// punctuation quoted, classes of tokens in words.
func tokenWord(p *gen.SaseParser, tt int) string {
	if w, ok := tokenWords[tt]; ok {
		return w
	}
	if w := vocab().keywords[tt]; w != "" {
		return w
	}
	if lit := p.GetLiteralNames(); tt >= 0 && tt < len(lit) && lit[tt] != "" {
		return lit[tt]
	}
	return p.GetSymbolicNames()[tt]
}

func describe(t antlr.Token) string {
	if t.GetTokenType() == antlr.TokenEOF {
		return "end of input"
	}
	if t.GetTokenType() == gen.SaseParserSTRING {
		return "string " + quote(strings.Trim(t.GetText(), "'"))
	}
	return quote(t.GetText())
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
