// Package grammar parses sase statements and queries into package ast.
//
// The ANTLR grammar is Sase.g4; the generated parser lives in grammar/gen and
// is used only here. The builder turns the parse tree into ast nodes and is
// also the ANTLR error listener, so syntax errors and the builder's own
// checks end up in one ast.ErrorList.
package grammar

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/grammar/gen"
)

// Parse parses a script: statements separated or terminated by ';'. The
// error, if any, is an ast.ErrorList sorted by position.
func Parse(src *ast.Source) (stmts []ast.Stmt, err error) {
	defer func() {
		// The parser must never take the caller down; a panic here is a bug,
		// reported as an error at the start of the input.
		if r := recover(); r != nil {
			stmts = nil
			err = ast.ErrorList{{Src: src, Msg: fmt.Sprintf("internal parser error: %v", r)}}
		}
	}()

	if off, msg, ok := checkLimits(src.Text); !ok {
		return nil, ast.ErrorList{{Src: src, Offset: off, Msg: msg}}
	}
	// After the limits: a text they refuse may be megabytes, and the
	// builder maps each of its bytes.
	b := newBuilder(src)
	b.lexer = gen.NewSaseLexer(antlr.NewInputStream(src.Text))
	b.lexer.RemoveErrorListeners()
	b.lexer.AddErrorListener(b)
	tokens := antlr.NewCommonTokenStream(b.lexer, antlr.TokenDefaultChannel)
	tokens.Fill()
	for _, t := range tokens.GetAllTokens() {
		if msg, ok := unterminated[t.GetTokenType()]; ok {
			b.errorf(b.offs[t.GetStart()], "%s", msg)
			b.syntax = true
		}
	}

	b.parser = gen.NewSaseParser(tokens)
	b.parser.RemoveErrorListeners()
	b.parser.AddErrorListener(b)
	tree := b.parser.Script()
	if len(b.errs) > 0 {
		// The tree of an input with syntax errors has holes; building it
		// would only add confusing follow-up errors.
		return nil, b.errs.Err()
	}
	stmts = b.script(tree.(*gen.ScriptContext))
	if err := b.errs.Err(); err != nil {
		return nil, err
	}
	return stmts, nil
}

// ParseQuery parses a source that holds exactly one statement, a query.
func ParseQuery(src *ast.Source) (*ast.Query, error) {
	stmts, err := Parse(src)
	if err != nil {
		return nil, err
	}
	var errs ast.ErrorList
	switch {
	case len(stmts) == 0:
		errs.Add(src, len(src.Text), "expected a query (PATTERN or EVENT) at end of input")
	case len(stmts) > 1:
		errs.Add(src, stmts[1].NodeSpan().Start, "expected a single query, found a second statement")
	default:
		if q, ok := stmts[0].(*ast.Query); ok {
			return q, nil
		}
		errs.Add(src, stmts[0].NodeSpan().Start, "expected a query (PATTERN or EVENT)")
	}
	return nil, errs.Err()
}

var unterminated = map[int]string{
	gen.SaseLexerUNTERMINATED_STRING:  "unterminated string",
	gen.SaseLexerUNTERMINATED_BQUOTED: "unterminated quoted name",
	gen.SaseLexerUNTERMINATED_DQUOTED: "unterminated quoted name",
	gen.SaseLexerUNTERMINATED_COMMENT: "unterminated comment",
}

// strategyWord matches the all-underscore spelling of a selection strategy,
// which lexes as an identifier (the spellings with '-' are STRATEGY tokens).
var strategyWord = regexp.MustCompile(`(?i)^(skip_till_[a-z0-9]+_match|[a-z0-9]+_contiguity)$`)

type builder struct {
	antlr.DefaultErrorListener
	lexer  *gen.SaseLexer
	parser *gen.SaseParser
	src    *ast.Source
	offs   []int // byte offset of each rune index of src.Text, and of its end
	errs   ast.ErrorList
	// syntax is set by the first lexer or parser error: ANTLR's recovery
	// then tends to report parser errors that only follow from the first.
	syntax bool
}

func newBuilder(src *ast.Source) *builder {
	// ANTLR positions are indexes into the text's runes; the same decoding
	// as the []rune conversion in antlr.NewInputStream maps them to bytes.
	offs := make([]int, 0, len(src.Text)+1)
	for i := range src.Text {
		offs = append(offs, i)
	}
	offs = append(offs, len(src.Text))
	return &builder{src: src, offs: offs}
}

// maxErrors bounds the report on garbage input, one error per bad character.
const maxErrors = 10

func (b *builder) errorf(offset int, format string, args ...any) {
	if len(b.errs) < maxErrors {
		b.errs.Add(b.src, offset, format, args...)
	}
}

func (b *builder) off(t antlr.Token) int { return b.offs[t.GetStart()] }

func (b *builder) tokSpan(t antlr.Token) ast.Span {
	return ast.Span{Start: b.offs[t.GetStart()], End: b.offs[t.GetStop()+1]}
}

// text is a token's source text. Strings and quoted names take their value
// from it rather than from ANTLR's runes, which replace invalid UTF-8.
func (b *builder) text(t antlr.Token) string {
	sp := b.tokSpan(t)
	return b.src.Text[sp.Start:sp.End]
}

func (b *builder) span(ctx antlr.ParserRuleContext) ast.Span {
	return ast.Span{Start: b.offs[ctx.GetStart().GetStart()], End: b.offs[ctx.GetStop().GetStop()+1]}
}

// quote shows a piece of source in a message, shortened when long.
func quote(s string) string {
	const max = 30
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + "..."
	}
	return "'" + s + "'"
}

// ---- statements ----

func (b *builder) script(ctx *gen.ScriptContext) []ast.Stmt {
	var out []ast.Stmt
	for _, s := range ctx.AllStatement() {
		out = append(out, b.statement(s))
	}
	return out
}

func (b *builder) statement(ctx gen.IStatementContext) ast.Stmt {
	sp := b.span(ctx)
	switch c := ctx.(type) {
	case *gen.QueryStmtContext:
		if c.Query().MatchRecognize() != nil {
			return b.matchRecognize(c.Query())
		}
		return b.query(c.Query())
	case *gen.RuleStmtContext:
		return b.rule(c.Rule_())
	case *gen.LoadStmtContext:
		return b.load(c)
	case *gen.ListenStmtContext:
		return b.listen(c)
	case *gen.GenerateStmtContext:
		return b.generate(c)
	case *gen.UseStmtContext:
		return &ast.Use{Span: sp, Name: b.name(c.Name())}
	case *gen.ShowStmtContext:
		if c.STREAMS() != nil {
			return &ast.ShowStreams{Span: sp}
		}
		if c.QUERIES() != nil {
			return &ast.ShowQueries{Span: sp}
		}
		if c.SETTINGS() != nil {
			return &ast.ShowSettings{Span: sp}
		}
		s := &ast.ShowTypes{Span: sp}
		if c.Name() != nil {
			s.From = b.name(c.Name())
		}
		return s
	case *gen.StopStmtContext:
		t := c.INT().GetSymbol()
		id, err := strconv.Atoi(t.GetText())
		if err != nil {
			b.errorf(b.off(t), "query number %s is too large", quote(t.GetText()))
		}
		return &ast.StopQuery{Span: sp, ID: id}
	case *gen.DescribeStmtContext:
		return &ast.Describe{Span: sp, Name: b.name(c.Name())}
	case *gen.SetStmtContext:
		key := b.word(c.Word())
		return &ast.Set{Span: sp, Key: strings.ToLower(key.Name), KeySpan: key.Span, Value: b.value(c.Value())}
	}
	panic(fmt.Sprintf("unexpected statement %T", ctx))
}

// clauseOnce reports a clause of LOAD or GENERATE given a second time.
func (b *builder) clauseOnce(seen map[string]bool, clause string, ctx antlr.ParserRuleContext) {
	if seen[clause] {
		b.errorf(b.span(ctx).Start, "%s is given twice", clause)
	}
	seen[clause] = true
}

func (b *builder) load(ctx *gen.LoadStmtContext) *ast.Load {
	n := &ast.Load{Span: b.span(ctx), Path: unquote(b.text(ctx.STRING().GetSymbol()))}
	b.loadClauses(n, ctx.AllLoadClause())
	return n
}

// listen shares LOAD's clauses; a listener is live anyway, so FOLLOW is an
// error.
func (b *builder) listen(ctx *gen.ListenStmtContext) *ast.Listen {
	var n ast.Load
	b.loadClauses(&n, ctx.AllLoadClause())
	for _, cl := range ctx.AllLoadClause() {
		if c, ok := cl.(*gen.FollowClauseContext); ok {
			b.errorf(b.span(c).Start, "FOLLOW is for files; a LISTEN stream is always live")
		}
	}
	return &ast.Listen{Span: b.span(ctx), Addr: unquote(b.text(ctx.STRING().GetSymbol())),
		Name: n.Name, Format: n.Format, Options: n.Options}
}

func (b *builder) loadClauses(n *ast.Load, clauses []gen.ILoadClauseContext) {
	seen := map[string]bool{}
	for _, cl := range clauses {
		switch c := cl.(type) {
		case *gen.FollowClauseContext:
			b.clauseOnce(seen, "FOLLOW", c)
			n.Follow = true
		case *gen.AsClauseContext:
			b.clauseOnce(seen, "AS", c)
			n.Name = b.name(c.Name())
		case *gen.FormatClauseContext:
			b.clauseOnce(seen, "FORMAT", c)
			f := c.ID().GetSymbol()
			n.Format = strings.ToLower(f.GetText())
			if !slices.Contains(loadFormats, n.Format) {
				b.errorf(b.off(f), "unknown format %s (expected %s)%s", quote(f.GetText()), orList(loadFormats), ast.DidYouMean(n.Format, loadFormats))
			}
		case *gen.WithClauseContext:
			b.clauseOnce(seen, "WITH", c)
			n.Options = b.options(c.OptionList())
		}
	}
}

func (b *builder) generate(ctx *gen.GenerateStmtContext) *ast.Generate {
	n := &ast.Generate{Span: b.span(ctx)}
	seen := map[string]bool{}
	for _, cl := range ctx.AllGenerateClause() {
		switch c := cl.(type) {
		case *gen.GenAsClauseContext:
			b.clauseOnce(seen, "AS", c)
			n.Name = b.name(c.Name())
		case *gen.GenWithClauseContext:
			b.clauseOnce(seen, "WITH", c)
			n.Options = b.options(c.OptionList())
		}
	}
	return n
}

func (b *builder) options(ctx gen.IOptionListContext) []*ast.Option {
	var out []*ast.Option
	for _, o := range ctx.AllOption() {
		out = append(out, &ast.Option{
			Span:  b.span(o),
			Key:   strings.ToLower(b.word(o.Word()).Name),
			Value: b.value(o.Value()),
		})
	}
	return out
}

// value is the value of SET or of an option; a bare word is a string.
func (b *builder) value(ctx gen.IValueContext) *ast.Literal {
	switch {
	case ctx.SignedNumber() != nil:
		return b.signedNumber(ctx.SignedNumber())
	case ctx.Word() != nil:
		w := b.word(ctx.Word())
		return &ast.Literal{Span: w.Span, Kind: ast.LitString, Str: w.Name}
	}
	return b.literal(ctx.GetStart())
}

// ---- queries ----

// rule is RULE name: query, a named rule of a rulebook; a rule is a
// PATTERN query.
func (b *builder) rule(ctx gen.IRuleContext) ast.Stmt {
	if ctx.Query().MatchRecognize() != nil {
		b.errorf(b.off(ctx.Query().GetStart()), "a rule is a PATTERN query, not MATCH_RECOGNIZE")
		return b.matchRecognize(ctx.Query())
	}
	q := b.query(ctx.Query())
	q.Rule = b.name(ctx.Name())
	q.Span.Start = b.span(ctx).Start
	return q
}

func (b *builder) query(ctx gen.IQueryContext) *ast.Query {
	q := &ast.Query{
		Span:    b.span(ctx),
		Explain: ctx.EXPLAIN() != nil,
		Analyze: ctx.ANALYZE() != nil,
		Event:   ctx.EVENT() != nil,
		Pattern: b.pattern(ctx.Pattern()),
	}
	if opts := ctx.ExplainOptions(); opts != nil {
		b.explainOptions(&q.Analyze, &q.ExplainFormat, opts)
	}
	names := ctx.AllName() // FROM's, then INTO's
	if ctx.FROM() != nil {
		q.From = b.name(names[0])
	}
	if ctx.WHERE() != nil {
		q.Where = b.cond(ctx.Expr())
	}
	if ctx.WITHIN() != nil {
		q.Within = b.duration(ctx.Duration())
	}
	if ctx.RETURN() != nil {
		q.Return = b.returns(ctx.ReturnList())
	}
	if ctx.INTO() != nil {
		q.Into = b.name(names[len(names)-1])
	}
	return q
}

// loadFormats are LOAD's FORMAT names.
var loadFormats = []string{"csv", "jsonl"}

// explainFormats are EXPLAIN's (FORMAT name)s.
var explainFormats = []string{"text", "dot", "json"}

// explainOptions reads EXPLAIN (ANALYZE, FORMAT name), each at most once.
// explainOptions sets a query's (or a MATCH_RECOGNIZE's) analyze and
// format from EXPLAIN's options.
func (b *builder) explainOptions(analyze *bool, format *string, ctx gen.IExplainOptionsContext) {
	seen := map[string]bool{}
	for _, o := range ctx.AllExplainOption() {
		o := o.(*gen.ExplainOptionContext)
		if o.ANALYZE() != nil {
			b.clauseOnce(seen, "ANALYZE", o)
			*analyze = true
			continue
		}
		b.clauseOnce(seen, "FORMAT", o)
		f := o.ID().GetSymbol()
		name := strings.ToLower(f.GetText())
		if !slices.Contains(explainFormats, name) {
			b.errorf(b.off(f), "unknown EXPLAIN format %s (formats: %s)%s", quote(f.GetText()), strings.Join(explainFormats, ", "), ast.DidYouMean(name, explainFormats))
			continue
		}
		if name != "text" {
			*format = name
		}
	}
}

func (b *builder) pattern(ctx gen.IPatternContext) *ast.Pattern {
	p := &ast.Pattern{Span: b.span(ctx)}
	root := b.item(ctx.Item())
	p.Components = ast.Leaves(root)
	switch g, _ := root.(*ast.Group); {
	case g == nil && !isAlgebra(root):
		p.Form = ast.FormSingle
	case g != nil && !isAlgebra(g) && (g.Kind == ast.GroupSeq || g.Kind == ast.GroupParen):
		p.Form = ast.FormSeq
		if g.Kind == ast.GroupParen {
			p.Form = ast.FormParen
		}
	default:
		p.Root = root // a v3 pattern (LANGUAGE.md §9)
	}
	return p
}

// isAlgebra reports whether an item needs the algebra of LANGUAGE.md §9:
// anything but one component, or a SEQ of components, of v1.
func isAlgebra(it ast.Item) bool {
	switch it := it.(type) {
	case *ast.Component:
		return it.Optional || it.Closure != nil && it.Closure.IsAlgebra()
	case *ast.Group:
		if it.Optional || it.Kind == ast.GroupAnd || it.Kind == ast.GroupOr {
			return true
		}
		for _, c := range it.Items {
			if _, nested := c.(*ast.Group); nested || isAlgebra(c) {
				return true
			}
		}
	}
	return false
}

// item builds one node of the pattern tree.
func (b *builder) item(ctx gen.IItemContext) ast.Item {
	g := &ast.Group{Span: b.span(ctx)}
	var items []gen.IItemContext
	var q antlr.TerminalNode
	switch c := ctx.(type) {
	case *gen.ComponentItemContext:
		return b.component(c.Component())
	case *gen.SeqItemContext:
		g.Kind, items, q = ast.GroupSeq, c.AllItem(), c.QUESTION()
	case *gen.ParenItemContext:
		g.Kind, items, q = ast.GroupParen, c.AllItem(), c.QUESTION()
	case *gen.AndItemContext:
		g.Kind, items, q = ast.GroupAnd, c.AllItem(), c.QUESTION()
	case *gen.OrItemContext:
		g.Kind, items, q = ast.GroupOr, c.AllItem(), c.QUESTION()
	}
	g.Optional = q != nil
	for _, it := range items {
		g.Items = append(g.Items, b.item(it))
	}
	return g
}

func (b *builder) component(ctx gen.IComponentContext) *ast.Component {
	n := &ast.Component{Span: b.span(ctx)}
	var el gen.IElementContext
	switch c := ctx.(type) {
	case *gen.NegParenComponentContext:
		n.Negated, n.Parens, el = true, true, c.Element()
	case *gen.NegComponentContext:
		n.Negated, el = true, c.Element()
	case *gen.PosComponentContext:
		el = c.Element()
	}

	switch t := el.TypeExpr().(type) {
	case *gen.AnyTypeContext:
		n.Any = true
		for _, name := range t.AllName() {
			n.Types = append(n.Types, b.name(name))
		}
	case *gen.OneTypeContext:
		n.Types = []*ast.Ident{b.name(t.Name())}
	}
	if el.Closure() != nil {
		n.Closure = b.closure(el.Closure())
	}
	if q := el.QUESTION(); q != nil {
		n.Optional = true
		if n.Negated {
			b.errorf(b.off(q.GetSymbol()), "a negated component cannot be optional")
		}
	}
	if el.Name() != nil {
		n.Var = b.name(el.Name())
	}
	n.List = el.LBRACK() != nil

	switch {
	case n.Any && n.Var == nil:
		b.errorf(b.off(el.TypeExpr().GetStart()), "ANY(...) needs a variable")
	case n.List && n.Closure == nil:
		b.errorf(b.off(el.LBRACK().GetSymbol()), "only a closure variable takes '[]'")
	}
	return n
}

func (b *builder) closure(ctx gen.IClosureContext) *ast.Closure {
	n := &ast.Closure{Span: b.span(ctx), Kind: ast.ClosurePlus, K: 1}
	switch c := ctx.(type) {
	case *gen.PowerClosureContext:
		n.Kind, n.K = ast.ClosurePower, b.smallInt(c.INT().GetSymbol())
		if n.K < 1 {
			b.errorf(n.Span.Start, "closure length must be >= 1 (write {0,} or * for 'zero or more')")
		}
	case *gen.AtLeastClosureContext:
		n.Kind, n.K = ast.ClosureAtLeast, b.smallInt(c.INT().GetSymbol())
	case *gen.StarClosureContext:
		n.Kind, n.K = ast.ClosureStar, 0
	case *gen.RangeClosureContext:
		n.Kind, n.K, n.Max = ast.ClosureRange, b.smallInt(c.INT(0).GetSymbol()), b.smallInt(c.INT(1).GetSymbol())
	case *gen.ExactClosureContext:
		n.Kind, n.K = ast.ClosureExact, b.smallInt(c.INT().GetSymbol())
		n.Max = n.K
	}
	switch {
	case (n.Kind == ast.ClosureRange || n.Kind == ast.ClosureExact) && n.Max < 1:
		b.errorf(n.Span.Start, "a closure's maximum must be >= 1 (write B+ for 'one or more')")
	case n.Kind == ast.ClosureRange && n.K > n.Max:
		b.errorf(n.Span.Start, "closure bounds {%d,%d}: the minimum exceeds the maximum", n.K, n.Max)
	}
	return n
}

func (b *builder) duration(ctx gen.IDurationContext) *ast.Duration {
	num := ctx.GetStart()
	n := &ast.Duration{Span: b.span(ctx), Raw: num.GetText()}
	if lit := b.number(num, false, n.Span); lit.Kind == ast.LitInt {
		n.Value = float64(lit.Int)
	} else {
		n.Value = lit.Float
	}
	if id := ctx.ID(); id != nil {
		unit, ok := event.LookupTimeUnit(id.GetText())
		if !ok {
			b.errorf(b.off(id.GetSymbol()), "unknown time unit %s; %s", quote(id.GetText()), unitHint(id.GetText()))
		}
		n.Unit = unit.Name
	}
	return n
}

// unitHint suggests the unit a word may be a typo of, or lists the units.
func unitHint(word string) string {
	var names, spellings []string
	for _, u := range event.TimeUnits() {
		names = append(names, u.Name)
		spellings = append(append(spellings, u.Name), u.Aliases...)
	}
	if near := ast.Closest(word, spellings); len(near) > 0 {
		return "did you mean " + near[0] + "?"
	}
	return "units are " + orList(names)
}

func (b *builder) returns(ctx gen.IReturnListContext) *ast.Return {
	r := &ast.Return{Span: b.span(ctx), Star: ctx.STAR() != nil}
	for _, it := range ctx.AllReturnItem() {
		item := &ast.ReturnItem{Span: b.span(it), Expr: b.expr(it.Expr(), false)}
		if it.AS() != nil {
			item.Alias = b.name(it.Name())
		}
		r.Items = append(r.Items, item)
	}
	return r
}

// ---- expressions ----

// cond builds an expression that must be a condition: a WHERE clause, an
// operand of AND, OR or NOT, a strategy body.
func (b *builder) cond(ctx gen.IExprContext) ast.Expr {
	e := b.expr(ctx, true)
	if !isCondition(e) {
		sp := b.span(ctx)
		b.errorf(sp.Start, "expected a condition (comparison or equivalence test) at %s",
			quote(b.src.Text[sp.Start:sp.End]))
	}
	return e
}

func isCondition(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BinaryExpr:
		return e.Op.IsComparison() || e.Op == ast.OpAnd || e.Op == ast.OpOr
	case *ast.UnaryExpr:
		return e.Op == ast.OpNot
	case *ast.Equivalence, *ast.Strategy:
		return true
	case *ast.Literal:
		return e.Kind == ast.LitBool
	case *ast.Call:
		return e.Func == "has" // the planner checks its argument
	}
	return false
}

// expr builds an expression. inCond says a condition is expected here, where
// a bare skip_till_any_match style word is a strategy, not a variable.
func (b *builder) expr(ctx gen.IExprContext, inCond bool) ast.Expr {
	sp := b.span(ctx)
	switch c := ctx.(type) {
	case *gen.PrimaryExprContext:
		return b.primary(c.Primary(), inCond)
	case *gen.NegExprContext:
		// -7 is the literal -7, so that String() and constant checks see
		// one number; parsing the sign with the digits also admits MinInt64.
		if num := numberToken(c.Expr()); num != nil {
			return b.number(num, true, sp)
		}
		return &ast.UnaryExpr{Span: sp, Op: ast.OpNeg, X: b.expr(c.Expr(), false)}
	case *gen.NotExprContext:
		return &ast.UnaryExpr{Span: sp, Op: ast.OpNot, X: b.cond(c.Expr())}
	case *gen.MulExprContext:
		return b.binary(sp, c.GetOp(), c.Expr(0), c.Expr(1))
	case *gen.AddExprContext:
		return b.binary(sp, c.GetOp(), c.Expr(0), c.Expr(1))
	case *gen.CmpExprContext:
		op := c.CmpOp().GetStart()
		if _, chained := c.Expr(0).(*gen.CmpExprContext); chained {
			b.errorf(b.off(op), "comparisons cannot be chained; join them with AND")
		}
		return b.binary(sp, op, c.Expr(0), c.Expr(1))
	case *gen.AndExprContext, *gen.OrExprContext:
		return b.logical(ctx)
	}
	panic(fmt.Sprintf("unexpected expression %T", ctx))
}

var binaryOps = map[int]ast.Op{
	gen.SaseParserSTAR: ast.OpMul, gen.SaseParserSLASH: ast.OpDiv, gen.SaseParserPERCENT: ast.OpMod,
	gen.SaseParserPLUS: ast.OpAdd, gen.SaseParserMINUS: ast.OpSub,
	gen.SaseParserEQ: ast.OpEq, gen.SaseParserNE: ast.OpNe,
	gen.SaseParserLT: ast.OpLt, gen.SaseParserLE: ast.OpLe,
	gen.SaseParserGT: ast.OpGt, gen.SaseParserGE: ast.OpGe,
	gen.SaseParserAND: ast.OpAnd, gen.SaseParserOR: ast.OpOr,
}

func (b *builder) binary(sp ast.Span, op antlr.Token, x, y gen.IExprContext) *ast.BinaryExpr {
	n := &ast.BinaryExpr{Span: sp, Op: binaryOps[op.GetTokenType()], OpPos: b.off(op)}
	n.X, n.Y = b.expr(x, false), b.expr(y, false)
	return n
}

// logical builds a chain of ANDs and ORs with a loop: the parser nests a
// chain to the left, one level per operator, and a recursion per level
// would overflow the stack on a long WHERE.
func (b *builder) logical(ctx gen.IExprContext) ast.Expr {
	type link struct {
		ctx antlr.ParserRuleContext
		op  antlr.Token
		y   gen.IExprContext
	}
	var chain []link // from the outermost operator in
	for {
		if c, ok := ctx.(*gen.AndExprContext); ok {
			chain, ctx = append(chain, link{c, c.AND().GetSymbol(), c.Expr(1)}), c.Expr(0)
		} else if c, ok := ctx.(*gen.OrExprContext); ok {
			chain, ctx = append(chain, link{c, c.OR().GetSymbol(), c.Expr(1)}), c.Expr(0)
		} else {
			break
		}
	}
	x := b.cond(ctx)
	for _, l := range slices.Backward(chain) {
		x = &ast.BinaryExpr{Span: b.span(l.ctx), Op: binaryOps[l.op.GetTokenType()], OpPos: b.off(l.op), X: x, Y: b.cond(l.y)}
	}
	return x
}

// numberToken returns the number token of an expression that is a number
// literal, possibly in parentheses, else nil.
func numberToken(ctx gen.IExprContext) antlr.Token {
	for {
		p, ok := ctx.(*gen.PrimaryExprContext)
		if !ok {
			return nil
		}
		switch c := p.Primary().(type) {
		case *gen.ParenExprContext:
			ctx = c.Expr()
		case *gen.LiteralExprContext:
			if t := c.GetStart(); t.GetTokenType() == gen.SaseParserINT || t.GetTokenType() == gen.SaseParserFLOAT {
				return t
			}
			return nil
		default:
			return nil
		}
	}
}

// number makes the literal of an INT or FLOAT token, negated if neg.
func (b *builder) number(t antlr.Token, neg bool, sp ast.Span) *ast.Literal {
	text := t.GetText()
	if neg {
		text = "-" + text
	}
	if t.GetTokenType() == gen.SaseParserINT {
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			b.errorf(b.off(t), "integer %s is out of range", quote(text))
		}
		return &ast.Literal{Span: sp, Kind: ast.LitInt, Int: v}
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(v, 0) {
		b.errorf(b.off(t), "number %s is out of range", quote(text))
		v = 0
	}
	return &ast.Literal{Span: sp, Kind: ast.LitFloat, Float: v}
}

func (b *builder) signedNumber(ctx gen.ISignedNumberContext) *ast.Literal {
	t := ctx.INT()
	if t == nil {
		t = ctx.FLOAT()
	}
	return b.number(t.GetSymbol(), ctx.MINUS() != nil, b.span(ctx))
}

// literal makes the literal of a number, string, TRUE or FALSE token.
func (b *builder) literal(t antlr.Token) *ast.Literal {
	sp := b.tokSpan(t)
	switch t.GetTokenType() {
	case gen.SaseParserSTRING:
		return &ast.Literal{Span: sp, Kind: ast.LitString, Str: unquote(b.text(t))}
	case gen.SaseParserTRUE:
		return &ast.Literal{Span: sp, Kind: ast.LitBool, Bool: true}
	case gen.SaseParserFALSE:
		return &ast.Literal{Span: sp, Kind: ast.LitBool}
	}
	return b.number(t, false, sp)
}

func (b *builder) primary(ctx gen.IPrimaryContext, inCond bool) ast.Expr {
	sp := b.span(ctx)
	switch c := ctx.(type) {
	case *gen.ParenExprContext:
		return b.expr(c.Expr(), inCond)
	case *gen.LiteralExprContext:
		return b.literal(c.GetStart())
	case *gen.EquivExprContext:
		n := &ast.Equivalence{Span: sp}
		for _, a := range c.AllEquivAttr() {
			n.Attrs = append(n.Attrs, b.equivAttr(a))
		}
		return n
	case *gen.StrategyWordContext:
		return &ast.Strategy{Span: sp, Name: c.GetText()}
	case *gen.StrategyFormContext:
		name := c.GetStart()
		if name.GetTokenType() == gen.SaseParserID && !strategyWord.MatchString(name.GetText()) {
			b.errorf(b.off(name), "%s is not an event selection strategy", quote(name.GetText()))
		}
		n := &ast.Strategy{Span: sp, Name: name.GetText()}
		for _, v := range c.AllName() {
			n.Vars = append(n.Vars, b.name(v))
		}
		n.Body = b.cond(c.Expr())
		return n
	case *gen.CallExprContext:
		n := &ast.Call{Span: sp, Func: strings.ToLower(c.ID().GetText())}
		for _, a := range c.AllExpr() {
			n.Args = append(n.Args, b.expr(a, false))
		}
		return n
	case *gen.ListRefContext:
		n := &ast.ListRef{Span: sp, Var: b.name(c.Name())}
		if c.AttrPath() != nil {
			n.Attr = b.path(c.AttrPath())
		}
		return n
	case *gen.RunningRefContext:
		if !strings.EqualFold(c.ID().GetText(), "i") || c.INT().GetText() != "1" {
			b.errorf(b.off(c.DOTDOT().GetSymbol()), "a running aggregate reads the elements before i: write [..i-1]")
		}
		n := &ast.ListRef{Span: sp, Var: b.name(c.Name()), Running: true}
		if c.AttrPath() != nil {
			n.Attr = b.path(c.AttrPath())
		}
		return n
	case *gen.IndexedRefContext:
		v := b.name(c.Name())
		return &ast.AttrRef{Span: sp, Var: v, Index: b.index(c.ClosureIndex(), v), Attr: b.path(c.AttrPath())}
	case *gen.LenRefContext:
		return &ast.LenRef{Span: sp, Var: b.name(c.Name())}
	case *gen.AttrRefContext:
		return &ast.AttrRef{Span: sp, Var: b.name(c.Name()), Attr: b.path(c.AttrPath())}
	case *gen.VarRefContext:
		t := c.GetStart()
		if inCond && t.GetTokenType() == gen.SaseParserID && strategyWord.MatchString(t.GetText()) {
			return &ast.Strategy{Span: sp, Name: t.GetText()}
		}
		return &ast.VarRef{Span: sp, Var: b.name(c.Name())}
	}
	panic(fmt.Sprintf("unexpected primary %T", ctx))
}

// index builds the subscript of v[...].
func (b *builder) index(ctx gen.IClosureIndexContext, v *ast.Ident) *ast.Index {
	n := &ast.Index{Span: b.span(ctx)}
	var sign, k antlr.TerminalNode
	switch c := ctx.(type) {
	case *gen.ConstIndexContext:
		n.Kind = ast.IndexConst
		n.Offset = b.smallInt(c.INT().GetSymbol())
		return n
	case *gen.IIndexContext:
		n.Kind = ast.IndexI
		if !strings.EqualFold(c.ID().GetText(), "i") {
			b.errorf(n.Span.Start, "a closure index is i, i-k, a number, %s.LEN or %s.LEN-k", v, v)
		}
		sign, k = c.PLUS(), c.INT()
		if sign == nil {
			sign = c.MINUS()
		}
	case *gen.LenIndexContext:
		n.Kind = ast.IndexLen
		// The printer writes the variable of v[v.LEN] once, from v.
		if w := b.name(c.Name()); w.Name != v.Name {
			b.errorf(w.Span.Start, "the index of %s can use %s.LEN, not %s.LEN", v, v, w)
		}
		sign, k = c.PLUS(), c.INT()
		if sign == nil {
			sign = c.MINUS()
		}
	}
	if k != nil {
		n.Offset = b.smallInt(k.GetSymbol())
		if sign.GetSymbol().GetTokenType() == gen.SaseParserMINUS {
			n.Offset = -n.Offset
		}
	}
	return n
}

// smallInt converts an INT token to an int, reporting overflow.
func (b *builder) smallInt(t antlr.Token) int {
	v, err := strconv.ParseInt(t.GetText(), 10, 32)
	if err != nil {
		b.errorf(b.off(t), "integer %s is out of range", quote(t.GetText()))
	}
	return int(v)
}

func (b *builder) equivAttr(ctx gen.IEquivAttrContext) *ast.EquivAttr {
	n := &ast.EquivAttr{Span: b.span(ctx), Attr: b.path(ctx.EquivPath())}
	switch {
	case ctx.SignedNumber() != nil:
		n.Value = b.signedNumber(ctx.SignedNumber())
	case ctx.EQ() != nil:
		n.Value = b.literal(ctx.GetStop())
	}
	return n
}

// ---- names ----

// nameToken makes an identifier of a name token: a word, or a backquoted or
// double-quoted name.
func (b *builder) nameToken(t antlr.Token) *ast.Ident {
	n := &ast.Ident{Span: b.tokSpan(t), Name: b.text(t)}
	if tt := t.GetTokenType(); tt == gen.SaseParserBQUOTED || tt == gen.SaseParserDQUOTED {
		n.Name = unquote(n.Name)
		if n.Name == "" {
			b.errorf(n.Span.Start, "empty name")
		}
	}
	return n
}

func (b *builder) name(ctx gen.INameContext) *ast.Ident { return b.nameToken(ctx.GetStart()) }
func (b *builder) word(ctx gen.IWordContext) *ast.Ident { return b.nameToken(ctx.GetStart()) }

// path joins the parts of a dotted attribute name (attrPath, equivPath),
// each a name token, into one name: b.geo.`zip-code` is geo.zip-code.
func (b *builder) path(ctx antlr.ParserRuleContext) *ast.Ident {
	n := &ast.Ident{Span: b.span(ctx)}
	for _, t := range ctx.GetChildren() {
		switch t := t.(type) {
		case antlr.ParserRuleContext: // attrName or word
			n.Name += b.nameToken(t.GetStart()).Name
		case antlr.TerminalNode:
			n.Name += t.GetText() // a DOT
		}
	}
	return n
}

// unquote strips the quotes of a string or quoted name and undoes the
// doubling of its quote character.
func unquote(s string) string {
	q := s[:1]
	return strings.ReplaceAll(s[1:len(s)-1], q+q, q)
}
