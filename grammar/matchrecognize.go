package grammar

import (
	"strconv"
	"strings"

	"github.com/antlr4-go/antlr/v4"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/grammar/gen"
)

// MATCH_RECOGNIZE's words are not keywords of the language (Sase.g4 takes
// every token after SELECT), so mrParser reads them here by recursive
// descent with the standard's grammar (docs/MATCH_RECOGNIZE.md).

// mrStop ends a MATCH_RECOGNIZE parse at its first error.
type mrStop struct{}

type mrParser struct {
	b    *builder
	toks []antlr.Token
	i    int
	end  int // offset reported for "end of input"
}

func (b *builder) matchRecognize(q gen.IQueryContext) (st *ast.MatchRecognize) {
	n := &ast.MatchRecognize{Span: b.span(q), Explain: q.EXPLAIN() != nil, Analyze: q.ANALYZE() != nil}
	if opts := q.ExplainOptions(); opts != nil {
		b.explainOptions(&n.Analyze, &n.ExplainFormat, opts)
	}
	p := &mrParser{b: b, end: n.Span.End}
	for _, t := range q.MatchRecognize().AllMrToken() {
		p.toks = append(p.toks, t.GetStart())
	}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(mrStop); !ok {
				panic(r)
			}
		}
	}()
	p.selectBody(n)
	return n
}

func (p *mrParser) peek() antlr.Token {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return nil
}

func (p *mrParser) next() antlr.Token {
	t := p.peek()
	if t == nil {
		p.fail("unexpected end of input")
	}
	p.i++
	return t
}

func (p *mrParser) offset() int {
	if t := p.peek(); t != nil {
		return p.b.off(t)
	}
	return p.end
}

func (p *mrParser) prevEnd() int {
	if p.i == 0 {
		return p.end
	}
	return p.b.tokSpan(p.toks[p.i-1]).End
}

func (p *mrParser) fail(format string, args ...any) {
	p.b.errorf(p.offset(), format, args...)
	panic(mrStop{})
}

// found names the next token for a message.
func (p *mrParser) found() string {
	if t := p.peek(); t != nil {
		return quote(p.b.text(t))
	}
	return "end of input"
}

func (p *mrParser) expected(what string) {
	p.fail("expected %s, found %s", what, p.found())
}

// isWord reports whether t is the unquoted word w (a keyword here).
func (p *mrParser) isWord(t antlr.Token, w string) bool {
	if t == nil {
		return false
	}
	switch t.GetTokenType() {
	case gen.SaseParserBQUOTED, gen.SaseParserDQUOTED, gen.SaseParserSTRING:
		return false
	}
	return strings.EqualFold(p.b.text(t), w)
}

func (p *mrParser) at(w string) bool { return p.isWord(p.peek(), w) }

func (p *mrParser) accept(w string) bool {
	if p.at(w) {
		p.i++
		return true
	}
	return false
}

func (p *mrParser) want(words ...string) {
	for _, w := range words {
		if !p.accept(w) {
			p.expected(w)
		}
	}
}

func (p *mrParser) atTok(tt int) bool { t := p.peek(); return t != nil && t.GetTokenType() == tt }

func (p *mrParser) acceptTok(tt int) bool {
	if p.atTok(tt) {
		p.i++
		return true
	}
	return false
}

func (p *mrParser) wantTok(tt int, what string) antlr.Token {
	if !p.atTok(tt) {
		p.expected(what)
	}
	return p.next()
}

// isName reports whether t can be a name: an identifier, a quoted name,
// or a word of the language used as one.
func (p *mrParser) isName(t antlr.Token) bool {
	if t == nil {
		return false
	}
	switch t.GetTokenType() {
	case gen.SaseParserID, gen.SaseParserBQUOTED, gen.SaseParserDQUOTED:
		return true
	}
	return isPlainWord(p.b.text(t))
}

func isPlainWord(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

func (p *mrParser) name(what string) *ast.MRName {
	t := p.peek()
	if !p.isName(t) {
		p.expected(what)
	}
	p.i++
	n := &ast.MRName{Span: p.b.tokSpan(t), Name: strings.ToUpper(p.b.text(t))}
	if tt := t.GetTokenType(); tt == gen.SaseParserBQUOTED || tt == gen.SaseParserDQUOTED {
		n.Name, n.Quoted = unquote(p.b.text(t)), true
		if n.Name == "" {
			p.b.errorf(n.Span.Start, "empty name")
		}
	}
	return n
}

func (p *mrParser) selectBody(n *ast.MatchRecognize) {
	if p.acceptTok(gen.SaseParserSTAR) {
		n.Star = true
	} else {
		for {
			n.Items = append(n.Items, p.selectItem())
			if !p.acceptTok(gen.SaseParserCOMMA) {
				break
			}
		}
	}
	p.want("FROM")
	n.From = p.name("a stream name")
	p.want("MATCH_RECOGNIZE")
	p.wantTok(gen.SaseParserLPAREN, "'('")
	p.clauses(n)
	p.wantTok(gen.SaseParserRPAREN, "')'")
	if p.accept("AS") || p.peek() != nil && !p.at("INTO") {
		n.Alias = p.name("an alias")
	}
	if p.accept("INTO") {
		// A derived stream, as sase's RETURN ... INTO names one: its name
		// as written (a stream's name is case-sensitive).
		t := p.peek()
		into := p.name("a stream name")
		n.Into = &ast.Ident{Span: into.Span, Name: into.Name}
		if !into.Quoted {
			n.Into.Name = p.b.text(t)
		}
	}
	if p.peek() != nil {
		p.fail("expected end of statement, found %s", p.found())
	}
}

func (p *mrParser) selectItem() *ast.SelectItem {
	start := p.offset()
	it := &ast.SelectItem{}
	x := p.expr()
	if col, ok := x.(*ast.MRColumn); ok {
		it.Qual, it.Col = col.Var, col.Col
	} else {
		it.Expr = x
	}
	if p.accept("AS") {
		it.Alias = p.name("a column name")
	}
	it.Span = ast.Span{Start: start, End: p.prevEnd()}
	return it
}

func (p *mrParser) clauses(n *ast.MatchRecognize) {
	if p.accept("PARTITION") {
		p.want("BY")
		n.PartitionBy = append(n.PartitionBy, p.name("a column"))
		for p.acceptTok(gen.SaseParserCOMMA) {
			n.PartitionBy = append(n.PartitionBy, p.name("a column"))
		}
	}
	if p.accept("ORDER") {
		p.want("BY")
		for {
			start := p.offset()
			o := &ast.OrderItem{Col: p.name("a column")}
			if p.accept("DESC") {
				o.Desc = true
			} else {
				p.accept("ASC")
			}
			o.Span = ast.Span{Start: start, End: p.prevEnd()}
			n.OrderBy = append(n.OrderBy, o)
			if !p.acceptTok(gen.SaseParserCOMMA) {
				break
			}
		}
	}
	if p.accept("MEASURES") {
		for {
			start := p.offset()
			m := &ast.Measure{Expr: p.expr()}
			p.want("AS")
			m.Name = p.name("a measure name")
			m.Span = ast.Span{Start: start, End: p.prevEnd()}
			n.Measures = append(n.Measures, m)
			if !p.acceptTok(gen.SaseParserCOMMA) {
				break
			}
		}
	}
	switch {
	case p.accept("ONE"):
		p.want("ROW", "PER", "MATCH")
	case p.accept("ALL"):
		p.want("ROWS", "PER", "MATCH")
		n.Rows = ast.AllRowsShowEmpty
		switch {
		case p.accept("SHOW"):
			p.want("EMPTY", "MATCHES")
		case p.accept("OMIT"):
			p.want("EMPTY", "MATCHES")
			n.Rows = ast.AllRowsOmitEmpty
		case p.accept("WITH"):
			p.want("UNMATCHED", "ROWS")
			n.Rows = ast.AllRowsWithUnmatched
		}
	}
	if p.at("AFTER") {
		start := p.offset()
		p.want("AFTER", "MATCH", "SKIP")
		s := &ast.AfterMatchSkip{}
		switch {
		case p.accept("PAST"):
			p.want("LAST", "ROW")
		case p.accept("TO"):
			switch {
			case p.accept("NEXT"):
				p.want("ROW")
				s.Kind = ast.SkipToNextRow
			case p.accept("FIRST"):
				s.Kind, s.Var = ast.SkipToFirst, p.name("a pattern variable")
			default:
				p.accept("LAST")
				s.Kind, s.Var = ast.SkipToLast, p.name("a pattern variable")
			}
		default:
			p.expected("PAST LAST ROW or TO")
		}
		s.Span = ast.Span{Start: start, End: p.prevEnd()}
		n.Skip = s
	}
	p.want("PATTERN")
	p.wantTok(gen.SaseParserLPAREN, "'('")
	if p.atTok(gen.SaseParserRPAREN) {
		n.Pattern = &ast.PatConcat{Span: ast.Span{Start: p.offset(), End: p.offset()}}
	} else {
		n.Pattern = p.alt()
	}
	p.wantTok(gen.SaseParserRPAREN, "')' or more of the pattern")
	if p.accept("WITHIN") {
		n.Within = p.duration()
	}
	if p.accept("SUBSET") {
		for {
			start := p.offset()
			s := &ast.Subset{Name: p.name("a subset name")}
			p.wantTok(gen.SaseParserEQ, "'='")
			p.wantTok(gen.SaseParserLPAREN, "'('")
			for {
				s.Vars = append(s.Vars, p.name("a pattern variable"))
				if !p.acceptTok(gen.SaseParserCOMMA) {
					break
				}
			}
			p.wantTok(gen.SaseParserRPAREN, "')'")
			s.Span = ast.Span{Start: start, End: p.prevEnd()}
			n.Subsets = append(n.Subsets, s)
			if !p.acceptTok(gen.SaseParserCOMMA) {
				break
			}
		}
	}
	p.want("DEFINE")
	for {
		start := p.offset()
		d := &ast.Define{Var: p.name("a pattern variable")}
		p.want("AS")
		d.Cond = p.expr()
		d.Span = ast.Span{Start: start, End: p.prevEnd()}
		n.Defines = append(n.Defines, d)
		if !p.acceptTok(gen.SaseParserCOMMA) {
			break
		}
	}
}

func (p *mrParser) duration() *ast.Duration {
	t := p.peek()
	if !p.atTok(gen.SaseParserINT) && !p.atTok(gen.SaseParserFLOAT) {
		p.expected("a duration")
	}
	p.i++
	d := &ast.Duration{Raw: t.GetText()}
	if lit := p.b.number(t, false, p.b.tokSpan(t)); lit.Kind == ast.LitInt {
		d.Value = float64(lit.Int)
	} else {
		d.Value = lit.Float
	}
	start := p.b.off(t)
	if u := p.peek(); u != nil && u.GetTokenType() == gen.SaseParserID && !p.at("SUBSET") && !p.at("DEFINE") {
		unit, ok := event.LookupTimeUnit(u.GetText())
		if !ok {
			p.fail("unknown time unit %s; %s", quote(u.GetText()), unitHint(u.GetText()))
		}
		p.i++
		d.Unit = unit.Name
	}
	d.Span = ast.Span{Start: start, End: p.prevEnd()}
	return d
}

// ---- row pattern ----

func (p *mrParser) alt() ast.RowPattern {
	start := p.offset()
	first := p.concat()
	if !p.atTok(gen.SaseParserPIPE) {
		return first
	}
	a := &ast.PatAlt{Alts: []ast.RowPattern{first}}
	for p.acceptTok(gen.SaseParserPIPE) {
		a.Alts = append(a.Alts, p.concat())
	}
	a.Span = ast.Span{Start: start, End: p.prevEnd()}
	return a
}

// concat reads terms up to '|', ')', ',' or '-}'; none is the empty pattern.
func (p *mrParser) concat() ast.RowPattern {
	start := p.offset()
	var items []ast.RowPattern
	for p.startsTerm() {
		items = append(items, p.quantified())
	}
	if len(items) == 1 {
		return items[0]
	}
	if len(items) == 0 && !p.atTok(gen.SaseParserRPAREN) && !p.atTok(gen.SaseParserPIPE) {
		p.expected("a pattern variable, '(', PERMUTE, '^', '$' or '{-'")
	}
	return &ast.PatConcat{Span: ast.Span{Start: start, End: p.prevEnd()}, Items: items}
}

func (p *mrParser) startsTerm() bool {
	t := p.peek()
	switch {
	case t == nil:
		return false
	case p.isName(t), p.atTok(gen.SaseParserLPAREN), p.atTok(gen.SaseParserCARET), p.atTok(gen.SaseParserDOLLAR):
		return true
	case p.atTok(gen.SaseParserLBRACE):
		return p.i+1 < len(p.toks) && p.toks[p.i+1].GetTokenType() == gen.SaseParserMINUS
	}
	return false
}

func (p *mrParser) quantified() ast.RowPattern {
	start := p.offset()
	item := p.term()
	q := &ast.PatQuant{Item: item}
	switch {
	case p.acceptTok(gen.SaseParserSTAR):
		q.Min, q.Max = 0, -1
	case p.acceptTok(gen.SaseParserPLUS):
		q.Min, q.Max = 1, -1
	case p.acceptTok(gen.SaseParserQUESTION):
		q.Min, q.Max = 0, 1
	case p.atTok(gen.SaseParserLBRACE) && !p.startsTerm():
		p.i++
		q.Min, q.Max = p.bounds()
	default:
		return item
	}
	q.Reluctant = p.acceptTok(gen.SaseParserQUESTION)
	q.Span = ast.Span{Start: start, End: p.prevEnd()}
	if p.atTok(gen.SaseParserSTAR) || p.atTok(gen.SaseParserPLUS) || p.atTok(gen.SaseParserQUESTION) ||
		p.atTok(gen.SaseParserLBRACE) && !p.startsTerm() {
		p.fail("a quantifier cannot follow a quantifier; group the item: (A*)+")
	}
	return q
}

// maxRepeat bounds a quantifier's counts: the program repeats the item.
const maxRepeat = 1000

// bounds reads {n} {n,} {,m} {n,m} after the '{'.
func (p *mrParser) bounds() (int, int) {
	num := func() int {
		t := p.next()
		v, err := strconv.Atoi(t.GetText())
		if err != nil || v > maxRepeat {
			p.i--
			p.fail("a quantifier's bound must be a whole number up to %d", maxRepeat)
		}
		return v
	}
	lo, hi := 0, -1
	if p.atTok(gen.SaseParserINT) {
		lo = num()
		if p.acceptTok(gen.SaseParserRBRACE) {
			return lo, lo
		}
	}
	p.wantTok(gen.SaseParserCOMMA, "',' or '}'")
	if p.atTok(gen.SaseParserINT) {
		at := p.offset()
		hi = num()
		if hi < lo {
			p.b.errorf(at, "a quantifier's upper bound %d is below its lower bound %d", hi, lo)
			panic(mrStop{})
		}
		if hi == 0 {
			p.b.errorf(at, "a quantifier's upper bound must be at least 1")
			panic(mrStop{})
		}
	}
	p.wantTok(gen.SaseParserRBRACE, "'}'")
	return lo, hi
}

func (p *mrParser) term() ast.RowPattern {
	start := p.offset()
	switch {
	case p.acceptTok(gen.SaseParserCARET):
		return &ast.PatAnchor{Span: ast.Span{Start: start, End: p.prevEnd()}}
	case p.acceptTok(gen.SaseParserDOLLAR):
		return &ast.PatAnchor{Span: ast.Span{Start: start, End: p.prevEnd()}, End: true}
	case p.acceptTok(gen.SaseParserLPAREN):
		var inner ast.RowPattern
		if p.atTok(gen.SaseParserRPAREN) {
			inner = &ast.PatConcat{Span: ast.Span{Start: start, End: start}}
		} else {
			inner = p.alt()
		}
		p.wantTok(gen.SaseParserRPAREN, "')'")
		if c, ok := inner.(*ast.PatConcat); ok && len(c.Items) == 0 {
			c.Span = ast.Span{Start: start, End: p.prevEnd()}
		}
		return inner
	case p.atTok(gen.SaseParserLBRACE):
		p.i += 2 // '{' '-'
		inner := p.alt()
		p.wantTok(gen.SaseParserMINUS, "'-}'")
		p.wantTok(gen.SaseParserRBRACE, "'-}'")
		return &ast.PatExclude{Span: ast.Span{Start: start, End: p.prevEnd()}, Item: inner}
	}
	if p.at("PERMUTE") && p.i+1 < len(p.toks) && p.toks[p.i+1].GetTokenType() == gen.SaseParserLPAREN {
		p.i += 2
		n := &ast.PatPermute{}
		for {
			n.Items = append(n.Items, p.alt())
			if !p.acceptTok(gen.SaseParserCOMMA) {
				break
			}
		}
		p.wantTok(gen.SaseParserRPAREN, "')'")
		n.Span = ast.Span{Start: start, End: p.prevEnd()}
		return n
	}
	name := p.name("a pattern variable")
	return &ast.PatVar{Span: name.Span, Name: name}
}

// ---- expressions ----

func (p *mrParser) binary(x ast.Expr, op ast.Op, opPos int, y ast.Expr) ast.Expr {
	return &ast.BinaryExpr{Span: ast.Span{Start: x.NodeSpan().Start, End: y.NodeSpan().End}, Op: op, OpPos: opPos, X: x, Y: y}
}

// The binary levels, loosest first: each is left-associative over the
// next one's operands (NOT and the comparisons sit between AND and +).
var (
	mrOrOps  = map[int]ast.Op{gen.SaseParserOR: ast.OpOr}
	mrAndOps = map[int]ast.Op{gen.SaseParserAND: ast.OpAnd}
	mrAddOps = map[int]ast.Op{gen.SaseParserPLUS: ast.OpAdd, gen.SaseParserMINUS: ast.OpSub}
	mrMulOps = map[int]ast.Op{gen.SaseParserSTAR: ast.OpMul, gen.SaseParserSLASH: ast.OpDiv, gen.SaseParserPERCENT: ast.OpMod}
)

// leftAssoc parses operand (op operand)* for the operators of ops.
func (p *mrParser) leftAssoc(ops map[int]ast.Op, operand func() ast.Expr) ast.Expr {
	x := operand()
	for t := p.peek(); t != nil; t = p.peek() {
		op, ok := ops[t.GetTokenType()]
		if !ok {
			break
		}
		at := p.offset()
		p.i++
		x = p.binary(x, op, at, operand())
	}
	return x
}

func (p *mrParser) expr() ast.Expr { return p.leftAssoc(mrOrOps, p.andExpr) }

func (p *mrParser) andExpr() ast.Expr { return p.leftAssoc(mrAndOps, p.notExpr) }

func (p *mrParser) notExpr() ast.Expr {
	if p.atTok(gen.SaseParserNOT) {
		start := p.offset()
		p.i++
		x := p.notExpr()
		return &ast.UnaryExpr{Span: ast.Span{Start: start, End: x.NodeSpan().End}, Op: ast.OpNot, X: x}
	}
	return p.cmpExpr()
}

var mrCmpOps = map[int]ast.Op{
	gen.SaseParserEQ: ast.OpEq, gen.SaseParserNE: ast.OpNe, gen.SaseParserLT: ast.OpLt,
	gen.SaseParserLE: ast.OpLe, gen.SaseParserGT: ast.OpGt, gen.SaseParserGE: ast.OpGe,
}

func (p *mrParser) cmpExpr() ast.Expr {
	x := p.addExpr()
	if t := p.peek(); t != nil {
		if op, ok := mrCmpOps[t.GetTokenType()]; ok {
			at := p.offset()
			p.i++
			x = p.binary(x, op, at, p.addExpr())
		}
	}
	// x IS [NOT] NULL binds below the comparisons (SQL's precedence).
	for p.accept("IS") {
		op := ast.OpIsNull
		if p.acceptTok(gen.SaseParserNOT) {
			op = ast.OpIsNotNull
		}
		p.want("NULL")
		x = &ast.UnaryExpr{Span: ast.Span{Start: x.NodeSpan().Start, End: p.prevEnd()}, Op: op, X: x}
	}
	return x
}

func (p *mrParser) addExpr() ast.Expr { return p.leftAssoc(mrAddOps, p.mulExpr) }

func (p *mrParser) mulExpr() ast.Expr { return p.leftAssoc(mrMulOps, p.unary) }

func (p *mrParser) unary() ast.Expr {
	if p.atTok(gen.SaseParserMINUS) {
		start := p.offset()
		p.i++
		if t := p.peek(); t != nil && (t.GetTokenType() == gen.SaseParserINT || t.GetTokenType() == gen.SaseParserFLOAT) {
			p.i++
			return p.b.number(t, true, ast.Span{Start: start, End: p.prevEnd()})
		}
		x := p.unary()
		return &ast.UnaryExpr{Span: ast.Span{Start: start, End: x.NodeSpan().End}, Op: ast.OpNeg, X: x}
	}
	return p.primary()
}

// mrFuncs are the functions DEFINE and MEASURES know.
var mrFuncs = map[string]bool{
	"PREV": true, "NEXT": true, "FIRST": true, "LAST": true, "CLASSIFIER": true, "MATCH_NUMBER": true,
	"COUNT": true, "SUM": true, "AVG": true, "MIN": true, "MAX": true,
}

func (p *mrParser) primary() ast.Expr {
	t := p.peek()
	start := p.offset()
	switch {
	case t == nil:
		p.expected("an expression")
	case p.acceptTok(gen.SaseParserLPAREN):
		x := p.expr()
		p.wantTok(gen.SaseParserRPAREN, "')'")
		return x
	}
	switch t.GetTokenType() {
	case gen.SaseParserINT, gen.SaseParserFLOAT, gen.SaseParserSTRING, gen.SaseParserTRUE, gen.SaseParserFALSE:
		p.i++
		return p.b.literal(t)
	}
	if !p.isName(t) {
		p.expected("an expression")
	}
	mode := ""
	if (p.at("RUNNING") || p.at("FINAL")) && p.i+1 < len(p.toks) && p.isName(p.toks[p.i+1]) {
		mode = strings.ToUpper(p.next().GetText())
	}
	name := p.name("an expression")
	if p.acceptTok(gen.SaseParserLPAREN) {
		fn := strings.ToUpper(name.Name)
		if name.Quoted || !mrFuncs[fn] {
			p.b.errorf(name.Span.Start, "unknown function %s in MATCH_RECOGNIZE (functions: PREV, NEXT, FIRST, LAST, CLASSIFIER, MATCH_NUMBER, count, sum, avg, min, max)", quote(p.b.text(t)))
			panic(mrStop{})
		}
		c := &ast.MRCall{Func: fn, Mode: mode}
		switch {
		case p.atTok(gen.SaseParserRPAREN):
		case fn == "COUNT" && p.acceptTok(gen.SaseParserSTAR):
			c.Star = true
		case fn == "COUNT" && p.i+2 < len(p.toks) && p.isName(p.toks[p.i]) &&
			p.toks[p.i+1].GetTokenType() == gen.SaseParserDOT && p.toks[p.i+2].GetTokenType() == gen.SaseParserSTAR:
			// count(var.*): the rows of var
			c.Star, c.StarVar = true, p.name("a variable")
			p.i += 2
		default:
			for {
				c.Args = append(c.Args, p.expr())
				if !p.acceptTok(gen.SaseParserCOMMA) {
					break
				}
			}
		}
		p.wantTok(gen.SaseParserRPAREN, "')'")
		c.Span = ast.Span{Start: start, End: p.prevEnd()}
		return c
	}
	if mode != "" {
		p.expected("'(' after " + mode + " " + name.Name)
	}
	col := &ast.MRColumn{Col: name}
	if p.acceptTok(gen.SaseParserDOT) {
		col.Var, col.Col = name, p.name("a column")
	}
	col.Span = ast.Span{Start: start, End: p.prevEnd()}
	return col
}
