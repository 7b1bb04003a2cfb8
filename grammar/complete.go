package grammar

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/grammar/gen"
	"github.com/sase-cep/sase/query"
)

// Completion asks the generated parser what may come next, so that the
// shell's tab completion follows the grammar without a list of its own:
// each keyword, and a plain name, is appended to the statement typed so
// far and parsed; those the parser accepts are candidates. Where a name
// fits, the rules the parser put it in say which kind of name: a stream
// after FROM or USE, an event type in a pattern, an attribute after "a.",
// a setting after SET. The names themselves are the shell's to find.

// Completion says what fits at the end of a statement being typed
// (query.Completion); Expect is the set of kinds of name that fit there,
// and PatternVar a variable of the pattern typed so far.
type (
	Completion = query.Completion
	Expect     = query.Expect
	PatternVar = query.PatternVar
)

// The kinds of name a Completion may expect.
const (
	ExpectStream          = query.ExpectStream
	ExpectType            = query.ExpectType
	ExpectVariable        = query.ExpectVariable
	ExpectAttribute       = query.ExpectAttribute
	ExpectStreamAttribute = query.ExpectStreamAttribute
	ExpectSetting         = query.ExpectSetting
	ExpectSettingValue    = query.ExpectSettingValue
	ExpectQueryID         = query.ExpectQueryID
	ExpectPath            = query.ExpectPath
)

// CompletionContext says what fits at the end of text, a statement typed
// up to the cursor.
func CompletionContext(text string) Completion {
	if _, _, ok := checkLimits(text); !ok {
		return Completion{} // the parser would not survive the probes
	}
	if t := lastToken(text); t != nil && t.GetTokenType() == gen.SaseLexerUNTERMINATED_STRING {
		before := text[:len(text)-len(t.GetText())]
		if prev := lastToken(before); prev != nil && prev.GetTokenType() == gen.SaseLexerLOAD {
			return Completion{Word: strings.ReplaceAll(t.GetText()[1:], "''", "'"), Expect: ExpectPath}
		}
		return Completion{}
	}
	start := len(text)
	if t := lastToken(text); t != nil && t.GetTokenType() == gen.SaseLexerUNTERMINATED_BQUOTED {
		start -= len(t.GetText()) // a name opened with a backquote: the word is all of it
	} else {
		for start > 0 && isWordByte(text[start-1]) {
			start--
		}
	}
	c := Completion{Word: text[start:]}
	if start > 0 && text[start-1] >= utf8.RuneSelf {
		return c // inside a word of letters the lexer does not take
	}
	before := text[:start]
	c.Lower = lowerCase(c.Word, before)
	if stmt, ok := mrStatement(before); ok {
		c.Keywords = mrKeywords(&c, stmt)
		return c
	}
	for _, kw := range vocab().words {
		spelled, ok := c.Keyword(kw)
		if !ok {
			continue
		}
		if ok, chain := probe(before, kw); ok && !isNameRule(chain[0]) && !hasOwnList(chain) {
			c.Keywords = append(c.Keywords, spelled)
			if opensGroup(chain[0]) {
				c.Opens = append(c.Opens, spelled)
			}
		}
	}
	if ok, chain := probe(before, "x"); ok {
		// In a dotted attribute name the word is the whole name typed so
		// far, so that b.geo.co completes to the attribute geo.country.
		if path := nameFor(&c, chain); path != "" && strings.HasSuffix(before, path) {
			c.Word = path + c.Word
		}
		valuesFor(&c, chain)
	}
	if ok, chain := probe(before, "1"); ok {
		if inside[*gen.StopStmtContext](chain) {
			c.Expect |= ExpectQueryID
		}
	}
	pattern, from := clauses(before)
	c.Stream = from
	if c.Expect&(ExpectVariable|ExpectAttribute) != 0 && pattern != "" {
		c.Vars = patternVars(pattern)
	}
	return c
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// lowerCase says whether keywords are written in lower case: after "sho",
// not after "SHO"; with nothing typed yet, in the case of the last keyword
// before it, upper case (as the docs write them) at the start.
func lowerCase(word, before string) bool {
	typed := word
	if typed == "" {
		for _, t := range slices.Backward(lex(before)) {
			if vocab().keywords[t.GetTokenType()] != "" {
				typed = t.GetText()
				break
			}
		}
	}
	return typed != "" && strings.ToLower(typed) == typed
}

// nameFor notes the kind of name that fits where the parser put one:
// chain is the rule contexts around it, innermost first. It returns the
// dotted attribute name typed before the word, if the word is in one.
func nameFor(c *Completion, chain []antlr.Tree) (path string) {
	// Skip the rules that only say "a name" (ident, name, attrName, word,
	// a dotted path of them) to the rule that says which.
	i := 0
	afterDot := false
	for i < len(chain) && isNameRule(chain[i]) {
		switch p := chain[i].(type) {
		case *gen.AttrPathContext:
			afterDot = true
			path = pathTyped(p)
		case *gen.EquivPathContext:
			path = pathTyped(p)
		}
		i++
	}
	if i == 0 || i == len(chain) {
		return path
	}
	switch ctx := chain[i].(type) {
	case *gen.OneTypeContext, *gen.AnyTypeContext:
		c.Expect |= ExpectType
	case *gen.AttrRefContext, *gen.IndexedRefContext, *gen.ListRefContext, *gen.RunningRefContext:
		if !afterDot {
			c.Expect |= ExpectVariable
		} else if prim, ok := ctx.(antlr.ParserRuleContext); ok {
			c.Expect |= ExpectAttribute
			c.Var = prim.GetChild(0).(antlr.ParseTree).GetText()
		}
	case *gen.VarRefContext:
		c.Expect |= ExpectVariable
	case *gen.EquivAttrContext:
		c.Expect |= ExpectStreamAttribute
	case *gen.UseStmtContext, *gen.ShowStmtContext, *gen.QueryContext:
		c.Expect |= ExpectStream
	case *gen.DescribeStmtContext:
		c.Expect |= ExpectStream | ExpectType
	case *gen.SetStmtContext:
		c.Expect |= ExpectSetting
	case *gen.ValueContext:
		if i+1 < len(chain) {
			if set, ok := chain[i+1].(*gen.SetStmtContext); ok {
				c.Expect |= ExpectSettingValue
				c.Key = set.Word().GetText()
			}
		}
	}
	return path
}

// pathTyped is the part of a dotted attribute name before its last part,
// the one being typed: "geo." in b.geo.co.
func pathTyped(path antlr.ParserRuleContext) string {
	var typed strings.Builder
	parts := path.GetChildren()
	for _, part := range parts[:len(parts)-1] {
		typed.WriteString(part.(antlr.ParseTree).GetText())
	}
	return typed.String()
}

// valuesFor notes the fixed words that fit where the parser took a word
// that is no name.
func valuesFor(c *Completion, chain []antlr.Tree) {
	var words []string
	switch chain[0].(type) {
	case *gen.FormatClauseContext:
		words = loadFormats
	case *gen.ExplainOptionContext:
		words = explainFormats
	}
	for _, w := range words {
		if strings.HasPrefix(w, strings.ToLower(c.Word)) {
			c.Values = append(c.Values, w)
		}
	}
}

// patternVars parses the pattern of the query being typed, leniently: the
// text from PATTERN up to the first clause after it, as a query of its
// own. It is nil while the pattern is not complete.
func patternVars(text string) []PatternVar {
	q, err := ParseQuery(&ast.Source{Name: "<completion>", Text: text})
	if err != nil {
		return nil
	}
	var vars []PatternVar
	for _, comp := range q.Pattern.Components {
		v := PatternVar{Name: comp.VarName(), Closure: comp.Closure != nil}
		if v.Name == "" {
			continue
		}
		for _, t := range comp.Types {
			v.Types = append(v.Types, t.Name)
		}
		vars = append(vars, v)
	}
	return vars
}

// clauses cuts the query typed so far: its text up to the end of the
// pattern, and the stream its FROM names.
func clauses(before string) (pattern, from string) {
	toks := lex(before)
	start, depth := -1, 0
	for i, t := range toks {
		switch tt := t.GetTokenType(); {
		case tt == gen.SaseLexerPATTERN || tt == gen.SaseLexerEVENT:
			if start < 0 {
				start = t.GetStart()
			}
		case tt == gen.SaseLexerLPAREN || tt == gen.SaseLexerLBRACK:
			depth++
		case tt == gen.SaseLexerRPAREN || tt == gen.SaseLexerRBRACK:
			depth--
		case start >= 0 && depth == 0 && (tt == gen.SaseLexerFROM || tt == gen.SaseLexerWHERE || tt == gen.SaseLexerWITHIN || tt == gen.SaseLexerRETURN):
			if pattern == "" {
				pattern = runeSlice(before, start, t.GetStart())
			}
			if tt == gen.SaseLexerFROM && i+1 < len(toks) {
				from = toks[i+1].GetText()
			}
		}
	}
	if pattern == "" && start >= 0 {
		pattern = runeSlice(before, start, len([]rune(before)))
	}
	return pattern, from
}

// runeSlice is text's runes [from, to): the lexer counts in runes.
func runeSlice(text string, from, to int) string {
	r := []rune(text)
	return string(r[from:min(to, len(r))])
}

// lex returns the tokens of text, without EOF.
func lex(text string) []antlr.Token {
	lx := gen.NewSaseLexer(antlr.NewInputStream(text))
	lx.RemoveErrorListeners()
	return lx.GetAllTokens()
}

func lastToken(text string) antlr.Token {
	if toks := lex(text); len(toks) > 0 {
		return toks[len(toks)-1]
	}
	return nil
}

// probe parses before, then word, then a token no rule accepts, and
// reports whether the parser took word; if so, chain holds the rule
// contexts around it, innermost first.
func probe(before, word string) (ok bool, chain []antlr.Tree) {
	// An unterminated comment is a token that no rule takes: the first
	// syntax error is at it exactly when everything before it parsed.
	lx := gen.NewSaseLexer(antlr.NewInputStream(before + " " + word + " /*"))
	lx.RemoveErrorListeners()
	toks := antlr.NewCommonTokenStream(lx, antlr.TokenDefaultChannel)
	toks.Fill()
	all := toks.GetAllTokens()
	if len(all) < 3 || all[len(all)-2].GetTokenType() != gen.SaseLexerUNTERMINATED_COMMENT {
		return false, nil
	}
	sentinel := all[len(all)-2].GetTokenIndex()
	if !strings.EqualFold(all[sentinel-1].GetText(), word) {
		return false, nil // before ends inside a comment
	}
	p := gen.NewSaseParser(toks)
	p.RemoveErrorListeners()
	errs := &firstError{index: -1}
	p.AddErrorListener(errs)
	seen := &terminalListener{p: p, index: sentinel - 1}
	p.AddParseListener(seen)
	p.Script()
	if errs.index < sentinel || seen.chain == nil {
		return false, nil
	}
	return true, seen.chain
}

// terminalListener records the rule contexts around the token at index
// when the parser matches it.
type terminalListener struct {
	antlr.BaseParseTreeListener
	p     *gen.SaseParser
	index int
	chain []antlr.Tree
}

func (l *terminalListener) VisitTerminal(node antlr.TerminalNode) {
	if node.GetSymbol().GetTokenIndex() != l.index {
		return
	}
	// The parser's current context, not the node's parent: that is the
	// context's embedded base, which has lost its rule's type.
	for t := antlr.Tree(l.p.GetParserRuleContext()); t != nil; t = t.GetParent() {
		l.chain = append(l.chain, t)
	}
}

// hasOwnList reports whether a keyword is one the shell offers among the
// names in its place: LEN after a variable's '.' (a closure's, among its
// attributes), TRUE and FALSE as a SET value (the setting's own values).
func hasOwnList(chain []antlr.Tree) bool {
	switch chain[0].(type) {
	case *gen.LenRefContext, *gen.ValueContext:
		return true
	}
	return false
}

// opensGroup reports whether t is a rule whose keyword a '(' follows: a
// group of the pattern algebra, or ANY's list of types.
func opensGroup(t antlr.Tree) bool {
	switch t.(type) {
	case *gen.SeqItemContext, *gen.AndItemContext, *gen.OrItemContext, *gen.AnyTypeContext:
		return true
	}
	return false
}

// isNameRule reports whether t is one of the rules that take any name: a
// keyword there is taken as a name (an attribute's, a setting's).
func isNameRule(t antlr.Tree) bool {
	switch t.(type) {
	case *gen.IdentContext, *gen.NameContext, *gen.AttrNameContext, *gen.WordContext,
		*gen.AttrPathContext, *gen.EquivPathContext:
		return true
	}
	return false
}

// inside reports whether chain holds a context of type T.
func inside[T antlr.Tree](chain []antlr.Tree) bool {
	return slices.ContainsFunc(chain, func(t antlr.Tree) bool { _, ok := t.(T); return ok })
}
