package grammar

import (
	"slices"
	"strings"
	"sync"

	"github.com/antlr4-go/antlr/v4"

	"github.com/sase-cep/sase/grammar/gen"
)

// The keyword and statement sets that messages use are read from the
// generated lexer and parser, so that they cannot drift from Sase.g4.

// tokenSet is a set of token types.
type tokenSet map[int]bool

func setOf(iv *antlr.IntervalSet) tokenSet {
	s := tokenSet{}
	if iv == nil {
		return s
	}
	for _, r := range iv.GetIntervals() {
		for t := r.Start; t < r.Stop; t++ {
			s[t] = true
		}
	}
	return s
}

// covers reports whether s holds every token of sub.
func (s tokenSet) covers(sub tokenSet) bool {
	for t := range sub {
		if !s[t] {
			return false
		}
	}
	return len(sub) > 0
}

// sorted lists the set in token-type order, which is the lexer's order.
func (s tokenSet) sorted() []int {
	out := make([]int, 0, len(s))
	for t := range s {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

type vocabulary struct {
	keywords map[int]string // keyword tokens, spelled in upper case: PATTERN, AND
	words    []string       // the keywords, in token order
	// first holds the tokens that can start a statement, a pattern, ...: the
	// FIRST sets of the rules that messages name as a whole.
	statement, pattern, component, expr, name, word tokenSet
}

var vocab = sync.OnceValue(func() *vocabulary {
	v := &vocabulary{keywords: map[int]string{}}
	sym := gen.NewSaseLexer(antlr.NewInputStream("")).SymbolicNames
	for t, name := range sym {
		// A keyword is a token that its own name, as a word, lexes to; ID
		// is the one token that also does and is not a keyword.
		if t == gen.SaseLexerID || name == "" || lexOne(strings.ToLower(name)) != t {
			continue
		}
		v.keywords[t] = name
		v.words = append(v.words, name)
	}
	v.statement = first(func(p *gen.SaseParser) { p.Statement() })
	v.pattern = first(func(p *gen.SaseParser) { p.Pattern() })
	v.component = first(func(p *gen.SaseParser) { p.Component() })
	v.expr = first(func(p *gen.SaseParser) { p.Expr() })
	v.name = first(func(p *gen.SaseParser) { p.Name() })
	v.word = first(func(p *gen.SaseParser) { p.Word() })
	return v
})

// lexOne returns the type of the single token text lexes to, or
// antlr.TokenInvalidType.
func lexOne(text string) int {
	lex := gen.NewSaseLexer(antlr.NewInputStream(text))
	lex.RemoveErrorListeners()
	toks := lex.GetAllTokens()
	if len(toks) != 1 {
		return antlr.TokenInvalidType
	}
	return toks[0].GetTokenType()
}

// first returns the FIRST set of a rule: what the parser expects when the
// rule meets the end of the input right away.
func first(rule func(*gen.SaseParser)) tokenSet {
	p := newParser("")
	l := &firstError{}
	p.AddErrorListener(l)
	rule(p)
	return l.expected
}

// newParser returns a parser over text with no error listeners.
func newParser(text string) *gen.SaseParser {
	lex := gen.NewSaseLexer(antlr.NewInputStream(text))
	lex.RemoveErrorListeners()
	p := gen.NewSaseParser(antlr.NewCommonTokenStream(lex, antlr.TokenDefaultChannel))
	p.RemoveErrorListeners()
	return p
}

// firstError records the first syntax error of a parse: the offending
// token's index and what the parser expected there.
type firstError struct {
	antlr.DefaultErrorListener
	seen     bool
	index    int
	expected tokenSet
}

func (l *firstError) SyntaxError(r antlr.Recognizer, sym any, _, _ int, _ string, _ antlr.RecognitionException) {
	if l.seen {
		return
	}
	l.seen = true
	if t, ok := sym.(antlr.Token); ok {
		l.index = t.GetTokenIndex()
	}
	if p, ok := r.(*antlr.BaseParser); ok {
		l.expected = setOf(p.GetExpectedTokens())
	}
}

// Keywords lists the keywords of the language in upper case (PATTERN, SEQ,
// AND, ...), as the generated lexer knows them: for completion and help.
// Keywords are case-insensitive.
func Keywords() []string { return slices.Clone(vocab().words) }
