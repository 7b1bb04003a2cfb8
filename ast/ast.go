// Package ast holds the syntax tree of sase statements and queries.
//
// Every node records the span of source text it came from. String() prints a
// node in a canonical form that parses back to an equal tree (spans aside).
package ast

// Span is a half-open byte range [Start, End) of the statement source.
type Span struct{ Start, End int }

// Node is implemented by every syntax tree node.
type Node interface {
	NodeSpan() Span
	String() string
}

// Stmt is a top-level statement.
type Stmt interface {
	Node
	stmtNode()
}

// Expr is an expression or condition.
type Expr interface {
	Node
	exprNode()
}

// ---- statements ----

// Query is PATTERN/EVENT pattern [FROM s] [WHERE c] [WITHIN d] [RETURN r]
// [INTO name], optionally preceded by EXPLAIN [ANALYZE] [(options)].
type Query struct {
	Span    Span
	Explain bool
	Analyze bool
	// ExplainFormat is EXPLAIN's (FORMAT name), lower case: "" for the
	// text tree, "dot" or "json".
	ExplainFormat string
	Event         bool // written with the EVENT keyword instead of PATTERN
	Pattern       *Pattern
	From          *Ident    // nil when absent
	Where         Expr      // nil when absent
	Within        *Duration // nil when absent
	Return        *Return   // nil when absent
	// Into names the derived stream the matches become events of
	// (docs/LANGUAGE.md, Derived streams); nil when absent.
	Into *Ident
	// Rule names the query as a rule of a rulebook (RULE name: query);
	// nil when absent.
	Rule *Ident
}

// Load is LOAD 'path' [FOLLOW] [AS name] [FORMAT f] [WITH (k = v, ...)].
type Load struct {
	Span    Span
	Path    string
	Follow  bool
	Name    *Ident // nil when absent
	Format  string // "" when absent, else lower-case "csv" or "jsonl"
	Options []*Option
}

// Listen is LISTEN 'tcp://host:port' [AS name] [FORMAT f] [WITH (k = v, ...)]:
// a live stream fed by the producers that connect to the address.
type Listen struct {
	Span    Span
	Addr    string
	Name    *Ident // nil when absent
	Format  string // "" when absent, else lower-case "csv" or "jsonl"
	Options []*Option
}

// Generate is GENERATE STOCKS [AS name] [WITH (k = v, ...)].
type Generate struct {
	Span    Span
	Name    *Ident
	Options []*Option
}

// Option is one key = value pair of a WITH list.
type Option struct {
	Span  Span
	Key   string // lower-case
	Value *Literal
}

// Use is USE name.
type Use struct {
	Span Span
	Name *Ident
}

// ShowStreams is SHOW STREAMS.
type ShowStreams struct{ Span Span }

// ShowQueries is SHOW QUERIES: the queries started on live streams.
type ShowQueries struct{ Span Span }

// ShowSettings is SHOW SETTINGS: the settings as \set lists them.
type ShowSettings struct{ Span Span }

// StopQuery is STOP QUERY n.
type StopQuery struct {
	Span Span
	ID   int
}

// ShowTypes is SHOW TYPES [FROM name].
type ShowTypes struct {
	Span Span
	From *Ident
}

// Describe is DESCRIBE name (a stream or an event type).
type Describe struct {
	Span Span
	Name *Ident
}

// Set is SET key = value.
type Set struct {
	Span    Span
	Key     string // lower-case
	KeySpan Span   // where Key is written, for "unknown setting" errors
	Value   *Literal
}

func (*Query) stmtNode()        {}
func (*Load) stmtNode()         {}
func (*Listen) stmtNode()       {}
func (*Generate) stmtNode()     {}
func (*Use) stmtNode()          {}
func (*ShowStreams) stmtNode()  {}
func (*ShowQueries) stmtNode()  {}
func (*ShowSettings) stmtNode() {}
func (*StopQuery) stmtNode()    {}
func (*ShowTypes) stmtNode()    {}
func (*Describe) stmtNode()     {}
func (*Set) stmtNode()          {}

func (n *Query) NodeSpan() Span        { return n.Span }
func (n *Load) NodeSpan() Span         { return n.Span }
func (n *Listen) NodeSpan() Span       { return n.Span }
func (n *Generate) NodeSpan() Span     { return n.Span }
func (n *Option) NodeSpan() Span       { return n.Span }
func (n *Use) NodeSpan() Span          { return n.Span }
func (n *ShowStreams) NodeSpan() Span  { return n.Span }
func (n *ShowQueries) NodeSpan() Span  { return n.Span }
func (n *ShowSettings) NodeSpan() Span { return n.Span }
func (n *StopQuery) NodeSpan() Span    { return n.Span }
func (n *ShowTypes) NodeSpan() Span    { return n.Span }
func (n *Describe) NodeSpan() Span     { return n.Span }
func (n *Set) NodeSpan() Span          { return n.Span }

// ---- query parts ----

// Ident is a name (type, variable, attribute, stream) with its span. Names
// are case-sensitive and kept as written (without backquotes or double quotes).
type Ident struct {
	Span Span
	Name string
}

func (n *Ident) NodeSpan() Span { return n.Span }

// PatternForm records how the pattern was written, so String() keeps it.
type PatternForm int

const (
	FormSeq    PatternForm = iota // SEQ(A a, B b)
	FormParen                     // (A a; B b), ReCEP notation
	FormSingle                    // A a
)

// Pattern is the component list of a query. A pattern that uses the
// algebra of LANGUAGE.md §9 (nested groups, AND, OR, '?', *, {n,m}, {n})
// has its tree in Root, and its leaves, in textual order, in Components;
// Root is nil for a flat pattern.
type Pattern struct {
	Span       Span
	Form       PatternForm
	Components []*Component
	Root       Item
}

func (n *Pattern) NodeSpan() Span { return n.Span }

// ClosureKind says how a closure was written.
type ClosureKind int

const (
	ClosurePlus    ClosureKind = iota + 1 // A+    (K = 1)
	ClosurePower                          // A^k
	ClosureAtLeast                        // A{k,}
	ClosureStar                           // A*    (K = 0), LANGUAGE.md §9
	ClosureRange                          // A{k,max}
	ClosureExact                          // A{k}  (Max = K)
)

// Closure is the repetition of a closure component: at least K events,
// and at most Max (0: no maximum).
type Closure struct {
	Span Span
	Kind ClosureKind
	K    int
	Max  int
}

func (n *Closure) NodeSpan() Span { return n.Span }

// Component is one element of a pattern.
type Component struct {
	Span    Span
	Negated bool
	Parens  bool     // negation written as !(T v)
	Any     bool     // ANY(T1, T2, ...)
	Types   []*Ident // one type, or the ANY list
	Closure *Closure // nil for a single event
	Var     *Ident   // nil when the variable is left out
	List    bool     // closure variable written with [] (b[])
	// Optional is a single written T? v (LANGUAGE.md §9).
	Optional bool
}

func (n *Component) NodeSpan() Span { return n.Span }

// VarName is the component's variable: as written, or its type's name when
// left out.
func (n *Component) VarName() string {
	if n.Var != nil {
		return n.Var.Name
	}
	if len(n.Types) > 0 {
		return n.Types[0].Name
	}
	return ""
}

// Duration is the WITHIN clause: a number with an optional unit.
type Duration struct {
	Span  Span
	Value float64
	Raw   string // the number as written
	Unit  string // canonical: "" (ticks), "ms", "s", "m", "h", "d"
}

func (n *Duration) NodeSpan() Span { return n.Span }

// Return is the RETURN clause: * or a list of items.
type Return struct {
	Span  Span
	Star  bool
	Items []*ReturnItem
}

func (n *Return) NodeSpan() Span { return n.Span }

// ReturnItem is expr [AS name].
type ReturnItem struct {
	Span  Span
	Expr  Expr
	Alias *Ident // nil when absent
}

func (n *ReturnItem) NodeSpan() Span { return n.Span }

// ---- expressions ----

// Op is an operator of a unary or binary expression.
type Op int

const (
	OpInvalid Op = iota
	OpOr
	OpAnd
	OpNot
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpMod
	OpNeg
	// x IS NULL, x IS NOT NULL: MATCH_RECOGNIZE's (SQL's) null tests.
	OpIsNull
	OpIsNotNull
)

var opText = [...]string{
	OpInvalid: "?", OpOr: "OR", OpAnd: "AND", OpNot: "NOT",
	OpEq: "=", OpNe: "!=", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=",
	OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpMod: "%", OpNeg: "-",
	OpIsNull: "IS NULL", OpIsNotNull: "IS NOT NULL",
}

func (o Op) String() string {
	if int(o) < len(opText) {
		return opText[o]
	}
	return "?"
}

// IsComparison reports whether o compares two values.
func (o Op) IsComparison() bool { return o >= OpEq && o <= OpGe }

// IsArith reports whether o is a binary arithmetic operator.
func (o Op) IsArith() bool { return o >= OpAdd && o <= OpMod }

// BinaryExpr is X Op Y: logical (AND, OR), comparison or arithmetic.
type BinaryExpr struct {
	Span  Span
	Op    Op
	OpPos int // offset of the operator
	X, Y  Expr
}

// UnaryExpr is NOT X or -X.
type UnaryExpr struct {
	Span Span
	Op   Op
	X    Expr
}

// LiteralKind is the kind of a literal.
type LiteralKind int

const (
	LitInt LiteralKind = iota + 1
	LitFloat
	LitString
	LitBool
)

// Literal is a number, a single-quoted string or true/false.
type Literal struct {
	Span  Span
	Kind  LiteralKind
	Int   int64
	Float float64
	Str   string // the string's value (quotes removed, '' unescaped)
	Bool  bool
}

// IndexKind is the form of a closure index.
type IndexKind int

const (
	IndexI     IndexKind = iota + 1 // i, i-1, i-2 ... (Offset <= 0)
	IndexConst                      // 1, 2, ...     (Offset is the index)
	IndexLen                        // b.LEN, b.LEN-1 (Offset <= 0)
)

// Index is the subscript of a closure reference b[...].
type Index struct {
	Span   Span
	Kind   IndexKind
	Offset int
}

// AttrRef reads an attribute: v.attr, or b[index].attr for a closure.
type AttrRef struct {
	Span  Span
	Var   *Ident
	Index *Index // nil for v.attr
	Attr  *Ident
}

// VarRef names a variable's whole event (or closure list) in RETURN.
type VarRef struct {
	Span Span
	Var  *Ident
}

// LenRef is b.LEN, the length of a closure's list.
type LenRef struct {
	Span Span
	Var  *Ident
}

// ListRef is the argument of an aggregate over a closure: b[] or b[].attr
// (the whole list), b[..i-1] or b[..i-1].attr (the elements before i).
type ListRef struct {
	Span    Span
	Var     *Ident
	Running bool   // b[..i-1]
	Attr    *Ident // nil for count(b[])
}

// Call is a function call: abs(x), or an aggregate count/sum/avg/min/max
// over a ListRef.
type Call struct {
	Span Span
	Func string // lower-case
	Args []Expr
}

// EquivAttr is one attribute of an equivalence test, with an optional
// required value.
type EquivAttr struct {
	Span  Span
	Attr  *Ident
	Value *Literal // nil for [attr]
}

// Equivalence is [attr, ...]: every component has the same value of each attr.
type Equivalence struct {
	Span  Span
	Attrs []*EquivAttr
}

// Strategy is an event selection strategy named as a conjunct, either as a
// word (skip-till-any-match) or in the SASE+ form name(vars) { body }.
type Strategy struct {
	Span Span
	Name string // as written
	Vars []*Ident
	Body Expr // nil for the plain word
}

func (*BinaryExpr) exprNode()  {}
func (*UnaryExpr) exprNode()   {}
func (*Literal) exprNode()     {}
func (*AttrRef) exprNode()     {}
func (*VarRef) exprNode()      {}
func (*LenRef) exprNode()      {}
func (*ListRef) exprNode()     {}
func (*Call) exprNode()        {}
func (*Equivalence) exprNode() {}
func (*Strategy) exprNode()    {}

func (n *BinaryExpr) NodeSpan() Span  { return n.Span }
func (n *UnaryExpr) NodeSpan() Span   { return n.Span }
func (n *Literal) NodeSpan() Span     { return n.Span }
func (n *Index) NodeSpan() Span       { return n.Span }
func (n *AttrRef) NodeSpan() Span     { return n.Span }
func (n *VarRef) NodeSpan() Span      { return n.Span }
func (n *LenRef) NodeSpan() Span      { return n.Span }
func (n *ListRef) NodeSpan() Span     { return n.Span }
func (n *Call) NodeSpan() Span        { return n.Span }
func (n *EquivAttr) NodeSpan() Span   { return n.Span }
func (n *Equivalence) NodeSpan() Span { return n.Span }
func (n *Strategy) NodeSpan() Span    { return n.Span }
