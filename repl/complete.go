package repl

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/grammar/gen"
	"github.com/sase-cep/sase/session"
)

// Tab completion. What may come next is asked of the generated parser, so
// that completion follows the grammar without a list of its own: each
// keyword, and a plain name, is appended to the statement typed so far
// and parsed; those the parser accepts are candidates. Where a name fits,
// the rules the parser put it in say which names: a stream after FROM or
// USE, an event type in a pattern, an attribute after "a.", a setting
// after SET. File names complete inside LOAD '...' and after \i and \o.
//
// The shell reads keywords from grammar/gen directly until package grammar
// offers its keyword tables.

// Complete returns the completions of the word that ends text, the shell's
// pending input and the line being edited up to the cursor: the word and
// the candidates, each of which begins with it.
func Complete(s *session.Session, text string) (word string, candidates []string) {
	pieces := grammar.Split(text)
	stmt := ""
	if n := len(pieces); n > 0 && pieces[n-1].End == len(text) {
		last := pieces[n-1]
		switch last.Kind {
		case grammar.Command:
			return completeCommand(s, text[last.Start:])
		case grammar.OpenComment:
			return "", nil
		}
		stmt = text[last.Start:]
	}
	if t := lastToken(stmt); t != nil && t.GetTokenType() == gen.SaseLexerUNTERMINATED_STRING {
		before := stmt[:len(stmt)-len(t.GetText())]
		if previousIs(before, gen.SaseLexerLOAD) {
			return completePath(strings.ReplaceAll(t.GetText()[1:], "''", "'"), "'")
		}
		return "", nil
	}
	start := len(stmt)
	for start > 0 && isWordByte(stmt[start-1]) {
		start--
	}
	word, before := stmt[start:], stmt[:start]
	if start > 0 && stmt[start-1] >= utf8.RuneSelf {
		return word, nil // inside a word of letters the lexer does not take
	}
	c := completer{s: s, before: before, word: word}
	return word, c.candidates()
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// completer finds the candidates for word after the text before it.
type completer struct {
	s      *session.Session
	before string
	word   string
	names  []string // candidates that are names
	words  []string // candidates that are keywords
}

func (c *completer) candidates() []string {
	for _, kw := range keywords() {
		if !c.matchesKeyword(kw.word) {
			continue
		}
		if ok, chain := probe(c.before, kw.word); ok && !isName(chain) && !hasOwnList(chain) {
			c.words = append(c.words, c.keywordCase(kw.word)+" ")
		}
	}
	if ok, chain := probe(c.before, "x"); ok {
		c.namesFor(chain)
	}
	if ok, chain := probe(c.before, "1"); ok {
		if _, stop := innermost[*gen.StopStmtContext](chain); stop {
			for _, q := range c.s.Queries() {
				if q.State == session.Running {
					c.name(strconv.Itoa(q.ID), " ")
				}
			}
		}
	}
	slices.Sort(c.names)
	slices.Sort(c.words)
	return slices.Compact(append(c.names, c.words...))
}

func (c *completer) matchesKeyword(kw string) bool {
	return len(c.word) <= len(kw) && strings.EqualFold(c.word, kw[:len(c.word)])
}

// keywordCase writes keyword kw in the case of the word typed: lower case
// after "sho", upper case after "SHO"; with nothing typed yet, in the case
// of the last keyword before it, upper case (as the docs write them) at
// the start.
func (c *completer) keywordCase(kw string) string {
	rest := kw[len(c.word):]
	typed := c.word
	if typed == "" {
		// Nothing typed yet: the case of the last keyword.
		for _, t := range slices.Backward(lex(c.before)) {
			if _, ok := keywordTypes()[t.GetTokenType()]; ok {
				typed = t.GetText()
				break
			}
		}
	}
	if typed != "" && strings.ToLower(typed) == typed {
		return c.word + strings.ToLower(rest)
	}
	return c.word + rest
}

// name adds a name candidate if it begins with the word (names are case
// sensitive), followed by suffix.
func (c *completer) name(n, suffix string) {
	if strings.HasPrefix(n, c.word) {
		c.names = append(c.names, n+suffix)
	}
}

// namesFor adds the names that fit where the parser put a name: chain is
// the rule contexts around it, innermost first.
func (c *completer) namesFor(chain []antlr.Tree) {
	// Skip the rules that only say "a name" (ident, name, attrName, word)
	// to the rule that says which.
	i := 0
	for i < len(chain) && isNameRule(chain[i]) {
		i++
	}
	if i == 0 || i == len(chain) {
		return
	}
	_, afterDot := chain[i-1].(*gen.AttrNameContext)
	switch ctx := chain[i].(type) {
	case *gen.OneTypeContext, *gen.AnyTypeContext:
		c.types(c.patternStream())
	case *gen.AttrRefContext, *gen.IndexedRefContext, *gen.ListRefContext, *gen.RunningRefContext:
		if !afterDot {
			c.variables()
		} else if prim, ok := ctx.(antlr.ParserRuleContext); ok {
			c.attributes(prim.GetChild(0).(antlr.ParseTree).GetText())
		}
	case *gen.VarRefContext:
		c.variables()
	case *gen.EquivAttrContext:
		if sc := c.s.Schema(c.patternStream()); sc != nil {
			for _, a := range sc.Attrs {
				c.name(a, "")
			}
		}
	case *gen.UseStmtContext, *gen.ShowStmtContext, *gen.QueryContext:
		c.streams()
	case *gen.DescribeStmtContext:
		c.streams()
		c.types("")
	case *gen.SetStmtContext:
		for _, k := range session.SettingKeys() {
			c.name(k, " ")
		}
	case *gen.ValueContext:
		if set, ok := chain[i+1].(*gen.SetStmtContext); ok {
			for _, v := range session.SettingValues(set.Word().GetText()) {
				c.name(v, "")
			}
		}
	}
}

func (c *completer) streams() {
	for _, st := range c.s.Streams() {
		c.name(st.Name, " ")
	}
}

// types adds the event types of a stream ("" the current one).
func (c *completer) types(stream string) {
	if sc := c.s.Schema(stream); sc != nil {
		for _, t := range sc.Types {
			c.name(t.Name, " ")
		}
	}
}

// variables adds the variables of the query's pattern.
func (c *completer) variables() {
	q := c.pattern()
	if q == nil {
		return
	}
	for _, comp := range q.Pattern.Components {
		if v := comp.VarName(); v != "" {
			c.name(v, "")
		}
	}
}

// attributes adds the attributes of variable v's types, and LEN for a
// closure's variable.
func (c *completer) attributes(v string) {
	q := c.pattern()
	if q == nil {
		return
	}
	sc := c.s.Schema(c.patternStream())
	for _, comp := range q.Pattern.Components {
		if comp.VarName() != v {
			continue
		}
		if sc != nil {
			for _, t := range comp.Types {
				for _, a := range session.Attributes(sc, t.Name) {
					c.name(a, " ")
				}
			}
		}
		if comp.Closure != nil && c.matchesKeyword("LEN") {
			c.names = append(c.names, c.keywordCase("LEN")+" ")
		}
	}
}

// pattern parses the pattern of the query being typed, leniently: the
// text from PATTERN up to the first clause after it, as a query of its
// own. It is nil while the pattern is not complete.
func (c *completer) pattern() *ast.Query {
	text, _ := c.clauses()
	if text == "" {
		return nil
	}
	q, err := grammar.ParseQuery(&ast.Source{Name: "<completion>", Text: text})
	if err != nil {
		return nil
	}
	return q
}

// patternStream is the stream the query being typed reads: its FROM
// clause's, if typed already, else the current one ("").
func (c *completer) patternStream() string {
	_, from := c.clauses()
	return from
}

// clauses cuts the query typed so far: its text up to the end of the
// pattern, and the stream its FROM names.
func (c *completer) clauses() (pattern, from string) {
	toks := lex(c.before)
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
				pattern = runeSlice(c.before, start, t.GetStart())
			}
			if tt == gen.SaseLexerFROM && i+1 < len(toks) {
				from = toks[i+1].GetText()
			}
		}
	}
	if pattern == "" && start >= 0 {
		pattern = runeSlice(c.before, start, len([]rune(c.before)))
	}
	return pattern, from
}

// runeSlice is text's runes [from, to): the lexer counts in runes.
func runeSlice(text string, from, to int) string {
	r := []rune(text)
	return string(r[from:min(to, len(r))])
}

// ---- the parser's view ----

type keyword struct {
	tt   int
	word string // in upper case
}

// keywords are the lexer's keyword tokens: the tokens that their own
// name, as a word, lexes to (ID is the one other token that does).
var keywords = sync.OnceValue(func() []keyword {
	var kws []keyword
	for tt, name := range gen.NewSaseLexer(antlr.NewInputStream("")).SymbolicNames {
		if tt == gen.SaseLexerID || name == "" {
			continue
		}
		if toks := lex(strings.ToLower(name)); len(toks) == 1 && toks[0].GetTokenType() == tt {
			kws = append(kws, keyword{tt, name})
		}
	}
	return kws
})

// keywordTypes holds the keywords' token types.
var keywordTypes = sync.OnceValue(func() map[int]bool {
	m := map[int]bool{}
	for _, kw := range keywords() {
		m[kw.tt] = true
	}
	return m
})

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

// previousIs reports whether the last token of text has type tt.
func previousIs(text string, tt int) bool {
	t := lastToken(text)
	return t != nil && t.GetTokenType() == tt
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

// firstError records the token of the parse's first syntax error.
type firstError struct {
	antlr.DefaultErrorListener
	index int
}

func (l *firstError) SyntaxError(_ antlr.Recognizer, sym any, _, _ int, _ string, _ antlr.RecognitionException) {
	if l.index >= 0 {
		return
	}
	l.index = 1 << 30
	if t, ok := sym.(antlr.Token); ok {
		l.index = t.GetTokenIndex()
	}
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

// isName reports whether the parser took a token as a name (a keyword
// can be an attribute's or a setting's name), not as a keyword.
func isName(chain []antlr.Tree) bool { return isNameRule(chain[0]) }

// hasOwnList reports whether a keyword is one that namesFor offers in its
// place: LEN after a variable's '.' (a closure's, among its attributes),
// TRUE and FALSE as a SET value (the setting's own values).
func hasOwnList(chain []antlr.Tree) bool {
	switch chain[0].(type) {
	case *gen.LenRefContext, *gen.ValueContext:
		return true
	}
	return false
}

// isNameRule reports whether t is one of the rules that take any name.
func isNameRule(t antlr.Tree) bool {
	switch t.(type) {
	case *gen.IdentContext, *gen.NameContext, *gen.AttrNameContext, *gen.WordContext:
		return true
	}
	return false
}

// innermost finds the innermost context of type T in chain.
func innermost[T antlr.Tree](chain []antlr.Tree) (T, bool) {
	for _, t := range chain {
		if x, ok := t.(T); ok {
			return x, true
		}
	}
	var zero T
	return zero, false
}

// ---- backslash commands and files ----

// completeCommand completes a backslash command line: the command's name,
// then its argument.
func completeCommand(s *session.Session, line string) (string, []string) {
	name, arg, spaced := strings.Cut(line, " ")
	if !spaced {
		var cands []string
		for _, c := range session.Commands() {
			if strings.HasPrefix(c, name) {
				cands = append(cands, c+" ")
			}
		}
		slices.Sort(cands)
		return name, cands
	}
	arg = strings.TrimLeft(arg, " ")
	switch name {
	case `\i`, `\include`, `\o`, `\out`:
		if strings.HasPrefix(arg, "'") || strings.HasPrefix(arg, `"`) {
			return completePath(arg[1:], arg[:1])
		}
		return completePath(arg, "")
	case `\x`, `\timing`:
		return completeWords(arg, []string{"on", "off"})
	case `\set`:
		key, value, spaced := strings.Cut(arg, " ")
		if !spaced {
			return completeWords(key, session.SettingKeys())
		}
		return completeWords(strings.TrimLeft(value, " "), session.SettingValues(key))
	}
	return arg, nil
}

func completeWords(word string, words []string) (string, []string) {
	var cands []string
	for _, w := range words {
		if strings.HasPrefix(w, word) {
			cands = append(cands, w)
		}
	}
	slices.Sort(cands)
	return word, cands
}

// completePath completes a file name: the entries of its folder that
// begin with its last element, a folder followed by "/", a file by
// closing (the quote that ends a LOAD path). Hidden files are offered
// once a "." is typed.
func completePath(partial, closing string) (string, []string) {
	dir, base := filepath.Split(partial)
	entries, err := os.ReadDir(cmpDir(dir))
	if err != nil {
		return partial, nil
	}
	var cands []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if isDir(filepath.Join(cmpDir(dir), name), e) {
			cands = append(cands, dir+name+"/")
		} else {
			cands = append(cands, dir+name+closing)
		}
	}
	return partial, cands
}

func cmpDir(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// isDir reports whether an entry is a folder, following a symbolic link.
func isDir(path string, e os.DirEntry) bool {
	if e.Type()&os.ModeSymlink == 0 {
		return e.IsDir()
	}
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// ---- readline ----

// autoComplete adapts Complete to readline, which wants the candidates'
// remainders after the word, and the word's length in runes.
type autoComplete struct{ sh *Shell }

func (a autoComplete) Do(line []rune, pos int) ([][]rune, int) {
	text := a.sh.pending.String() + string(line[:pos])
	word, cands := Complete(a.sh.s, text)
	out := make([][]rune, len(cands))
	for i, c := range cands {
		out[i] = []rune(c[len(word):])
	}
	return out, utf8.RuneCountInString(word)
}
