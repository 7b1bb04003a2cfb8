package grammar

import (
	"strings"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/sase-cep/sase/grammar/gen"
)

// SyntaxError implements antlr.ErrorListener for both the lexer and the
// parser. ANTLR's own messages list token sets ("mismatched input ...
// expecting {...}"); these are rewritten in the words of the language.
func (b *builder) SyntaxError(_ antlr.Recognizer, sym any, _, _ int, msg string, e antlr.RecognitionException) {
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
	b.errorf(b.off(t), "%s", syntaxMessage(b.parser, t, msg, e))
}

func syntaxMessage(p *gen.SaseParser, t antlr.Token, msg string, e antlr.RecognitionException) string {
	found := describe(t)
	if _, ok := e.(*antlr.NoViableAltException); ok && t.GetTokenIndex() != p.GetCurrentToken().GetTokenIndex() {
		// The prediction failed some tokens after the decision point: the
		// expected set at the decision would not describe this token.
		return "unexpected " + found
	}

	set := map[int]bool{}
	for _, iv := range p.GetExpectedTokens().GetIntervals() {
		for tt := iv.Start; tt < iv.Stop; tt++ {
			set[tt] = true
		}
	}
	switch {
	case set[gen.SaseParserPATTERN] && set[gen.SaseParserLOAD] && !patternStart[t.GetTokenType()]:
		return "expected a statement (PATTERN, EVENT, EXPLAIN, LOAD, GENERATE, USE, SHOW, DESCRIBE or SET) at " + found
	case set[gen.SaseParserPATTERN]:
		return "expected PATTERN or EVENT at " + found
	case e == nil && strings.HasPrefix(msg, "extraneous input"):
		// ANTLR found that dropping this token would let the parse go on.
		return "unexpected " + found
	case set[gen.SaseParserSEQ]:
		return "expected a pattern at " + found
	case set[gen.SaseParserBANG] && set[gen.SaseParserANY]:
		return "expected a pattern component at " + found
	case set[gen.SaseParserINT] && set[gen.SaseParserSTRING] && set[gen.SaseParserLBRACK]:
		return "expected an expression at " + found
	case set[gen.SaseParserSEMI] || set[antlr.TokenEOF]:
		// The statement could end here, so this token is one too many.
		return "unexpected " + found
	}

	var words []string
	seen := map[string]bool{}
	for tt := antlr.TokenEOF; tt <= gen.SaseParserUNTERMINATED_COMMENT; tt++ {
		if !set[tt] || (set[gen.SaseParserID] && nameToken[tt]) {
			continue
		}
		if w := tokenWord(p, tt); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	if len(words) == 0 || len(words) > 6 {
		return "unexpected " + found
	}
	return "expected " + orList(words) + " at " + found
}

// patternStart holds the tokens that can begin a pattern: at the start of a
// statement they suggest a query without its PATTERN keyword.
var patternStart = map[int]bool{
	gen.SaseParserSEQ: true, gen.SaseParserLPAREN: true, gen.SaseParserBANG: true,
	gen.SaseParserANY: true, gen.SaseParserID: true, gen.SaseParserBQUOTED: true,
	gen.SaseParserDQUOTED: true,
}

// nameToken holds the tokens that are names besides ID; where an ID is
// expected, "a name" says it all.
var nameToken = map[int]bool{
	gen.SaseParserBQUOTED: true, gen.SaseParserDQUOTED: true, gen.SaseParserLEN: true,
	gen.SaseParserEXPLAIN: true, gen.SaseParserANALYZE: true, gen.SaseParserLOAD: true,
	gen.SaseParserFORMAT: true, gen.SaseParserFOLLOW: true, gen.SaseParserGENERATE: true,
	gen.SaseParserSTOCKS: true, gen.SaseParserUSE: true, gen.SaseParserSHOW: true,
	gen.SaseParserSTREAMS: true, gen.SaseParserTYPES: true, gen.SaseParserDESCRIBE: true,
	gen.SaseParserSET: true,
}

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
	if lit := p.GetLiteralNames(); tt < len(lit) && lit[tt] != "" {
		if s := strings.Trim(lit[tt], "'"); s != "" && s[0] >= 'a' && s[0] <= 'z' {
			return strings.ToUpper(s) // a keyword
		}
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
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
