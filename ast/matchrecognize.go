package ast

import (
	"strconv"
	"strings"
)

// MATCH_RECOGNIZE: the SQL standard's row pattern recognition
// (docs/MATCH_RECOGNIZE.md, docs/LANGUAGE.md §10). Names inside it follow
// SQL: an unquoted name is case-insensitive (kept upper-cased, as the
// standard folds it), a quoted one is kept as written.

// MatchRecognize is SELECT items FROM stream MATCH_RECOGNIZE (...) [AS] alias,
// optionally preceded by EXPLAIN [ANALYZE] [(options)].
type MatchRecognize struct {
	Span          Span
	Explain       bool
	Analyze       bool
	ExplainFormat string
	Star          bool // SELECT *
	Items         []*SelectItem
	From          *MRName
	PartitionBy   []*MRName
	OrderBy       []*OrderItem
	Measures      []*Measure
	Rows          RowsPerMatch
	Skip          *AfterMatchSkip // nil: the default, PAST LAST ROW
	Pattern       RowPattern
	Within        *Duration // nil when absent
	Subsets       []*Subset
	Defines       []*Define
	Alias         *MRName // nil when absent
	// Into names the derived stream the output rows become events of
	// (docs/MATCH_RECOGNIZE.md, INTO); nil when absent.
	Into *Ident
}

// MRName is a name in MATCH_RECOGNIZE: Name is upper-cased unless Quoted.
type MRName struct {
	Span   Span
	Name   string
	Quoted bool
}

// SelectItem is [var.]col [AS name] in the SELECT list, or an
// expression of the output's columns (Expr; Qual and Col nil) AS name.
type SelectItem struct {
	Span  Span
	Qual  *MRName // the alias before the '.'; nil when absent
	Col   *MRName
	Expr  Expr
	Alias *MRName // nil when absent
}

// OrderItem is col [ASC | DESC].
type OrderItem struct {
	Span Span
	Col  *MRName
	Desc bool
}

// Measure is expr AS name.
type Measure struct {
	Span Span
	Expr Expr
	Name *MRName
}

// RowsPerMatch is the output mode.
type RowsPerMatch int

const (
	OneRowPerMatch       RowsPerMatch = iota // the default
	AllRowsShowEmpty                         // ALL ROWS PER MATCH [SHOW EMPTY MATCHES]
	AllRowsOmitEmpty                         // ALL ROWS PER MATCH OMIT EMPTY MATCHES
	AllRowsWithUnmatched                     // ALL ROWS PER MATCH WITH UNMATCHED ROWS
)

var rowsText = [...]string{
	OneRowPerMatch:       "ONE ROW PER MATCH",
	AllRowsShowEmpty:     "ALL ROWS PER MATCH",
	AllRowsOmitEmpty:     "ALL ROWS PER MATCH OMIT EMPTY MATCHES",
	AllRowsWithUnmatched: "ALL ROWS PER MATCH WITH UNMATCHED ROWS",
}

func (r RowsPerMatch) String() string { return rowsText[r] }

// SkipKind is where AFTER MATCH SKIP resumes.
type SkipKind int

const (
	SkipPastLastRow SkipKind = iota
	SkipToNextRow
	SkipToFirst // TO FIRST var
	SkipToLast  // TO LAST var, and TO var
)

// AfterMatchSkip is AFTER MATCH SKIP ...; Var is set for TO FIRST/LAST.
type AfterMatchSkip struct {
	Span Span
	Kind SkipKind
	Var  *MRName
}

// Subset is SUBSET name = (var, ...).
type Subset struct {
	Span Span
	Name *MRName
	Vars []*MRName
}

// Define is DEFINE var AS condition.
type Define struct {
	Span Span
	Var  *MRName
	Cond Expr
}

// RowPattern is a node of a row pattern (a regular expression over rows).
type RowPattern interface {
	Node
	rowPatternNode()
}

// PatVar is one pattern variable (label).
type PatVar struct {
	Span Span
	Name *MRName
}

// PatConcat is items in a row; no items is the empty pattern ().
type PatConcat struct {
	Span  Span
	Items []RowPattern
}

// PatAlt is alternatives, preferred from left to right.
type PatAlt struct {
	Span Span
	Alts []RowPattern
}

// PatQuant is a quantified item: Max < 0 is unbounded.
type PatQuant struct {
	Span      Span
	Item      RowPattern
	Min, Max  int
	Reluctant bool
}

// PatPermute is PERMUTE(a, b, ...).
type PatPermute struct {
	Span  Span
	Items []RowPattern
}

// PatExclude is {- item -}: rows matched but not output.
type PatExclude struct {
	Span Span
	Item RowPattern
}

// PatAnchor is ^ (partition start) or $ (partition end).
type PatAnchor struct {
	Span Span
	End  bool
}

// MRColumn is [var.]col: a column of a row (Var nil: the universal
// variable).
type MRColumn struct {
	Span Span
	Var  *MRName
	Col  *MRName
}

// MRCall is a function in DEFINE or MEASURES: PREV NEXT FIRST LAST,
// CLASSIFIER, MATCH_NUMBER and the aggregates, with RUNNING or FINAL.
type MRCall struct {
	Span Span
	Func string // upper-case
	Mode string // "", "RUNNING" or "FINAL"
	Args []Expr
	Star bool // count(*), or count(StarVar.*)
	// StarVar is the variable (or SUBSET) of count(var.*), whose rows
	// it counts; nil for count(*).
	StarVar *MRName
}

func (*MatchRecognize) stmtNode()   {}
func (*PatVar) rowPatternNode()     {}
func (*PatConcat) rowPatternNode()  {}
func (*PatAlt) rowPatternNode()     {}
func (*PatQuant) rowPatternNode()   {}
func (*PatPermute) rowPatternNode() {}
func (*PatExclude) rowPatternNode() {}
func (*PatAnchor) rowPatternNode()  {}
func (*MRColumn) exprNode()         {}
func (*MRCall) exprNode()           {}

func (n *MatchRecognize) NodeSpan() Span { return n.Span }
func (n *MRName) NodeSpan() Span         { return n.Span }
func (n *SelectItem) NodeSpan() Span     { return n.Span }
func (n *OrderItem) NodeSpan() Span      { return n.Span }
func (n *Measure) NodeSpan() Span        { return n.Span }
func (n *AfterMatchSkip) NodeSpan() Span { return n.Span }
func (n *Subset) NodeSpan() Span         { return n.Span }
func (n *Define) NodeSpan() Span         { return n.Span }
func (n *PatVar) NodeSpan() Span         { return n.Span }
func (n *PatConcat) NodeSpan() Span      { return n.Span }
func (n *PatAlt) NodeSpan() Span         { return n.Span }
func (n *PatQuant) NodeSpan() Span       { return n.Span }
func (n *PatPermute) NodeSpan() Span     { return n.Span }
func (n *PatExclude) NodeSpan() Span     { return n.Span }
func (n *PatAnchor) NodeSpan() Span      { return n.Span }
func (n *MRColumn) NodeSpan() Span       { return n.Span }
func (n *MRCall) NodeSpan() Span         { return n.Span }

// ---- printing ----

func (n *MRName) String() string {
	if n.Quoted {
		return "`" + strings.ReplaceAll(n.Name, "`", "``") + "`"
	}
	return n.Name
}

func joinNodes[N Node](list []N) string {
	parts := make([]string, len(list))
	for i, x := range list {
		parts[i] = x.String()
	}
	return strings.Join(parts, ", ")
}

func (n *MatchRecognize) String() string {
	var b strings.Builder
	if n.Explain {
		b.WriteString(explainPrefix(n.Analyze, n.ExplainFormat))
	}
	b.WriteString("SELECT ")
	if n.Star {
		b.WriteString("*")
	} else {
		b.WriteString(joinNodes(n.Items))
	}
	b.WriteString(" FROM " + n.From.String() + " MATCH_RECOGNIZE (")
	var parts []string
	if len(n.PartitionBy) > 0 {
		parts = append(parts, "PARTITION BY "+joinNodes(n.PartitionBy))
	}
	if len(n.OrderBy) > 0 {
		parts = append(parts, "ORDER BY "+joinNodes(n.OrderBy))
	}
	if len(n.Measures) > 0 {
		parts = append(parts, "MEASURES "+joinNodes(n.Measures))
	}
	parts = append(parts, n.Rows.String())
	if n.Skip != nil {
		parts = append(parts, n.Skip.String())
	}
	p := "PATTERN (" + n.Pattern.String() + ")"
	if n.Within != nil {
		p += " WITHIN " + n.Within.String()
	}
	parts = append(parts, p)
	if len(n.Subsets) > 0 {
		parts = append(parts, "SUBSET "+joinNodes(n.Subsets))
	}
	if len(n.Defines) > 0 {
		parts = append(parts, "DEFINE "+joinNodes(n.Defines))
	}
	b.WriteString(strings.Join(parts, " ") + ")")
	if n.Alias != nil {
		b.WriteString(" AS " + n.Alias.String())
	}
	if n.Into != nil {
		b.WriteString(" INTO " + n.Into.Name)
	}
	return b.String()
}

// explainPrefix is EXPLAIN [ANALYZE] [(FORMAT f)] and a space.
func explainPrefix(analyze bool, format string) string {
	s := "EXPLAIN "
	if analyze {
		s += "ANALYZE "
	}
	if format != "" {
		s += "(FORMAT " + format + ") "
	}
	return s
}

func (n *SelectItem) String() string {
	if n.Expr != nil {
		s := n.Expr.String()
		if n.Alias != nil {
			s += " AS " + n.Alias.String()
		}
		return s
	}
	s := n.Col.String()
	if n.Qual != nil {
		s = n.Qual.String() + "." + s
	}
	if n.Alias != nil {
		s += " AS " + n.Alias.String()
	}
	return s
}

func (n *OrderItem) String() string {
	if n.Desc {
		return n.Col.String() + " DESC"
	}
	return n.Col.String()
}

func (n *Measure) String() string { return n.Expr.String() + " AS " + n.Name.String() }

func (n *AfterMatchSkip) String() string {
	switch n.Kind {
	case SkipToNextRow:
		return "AFTER MATCH SKIP TO NEXT ROW"
	case SkipToFirst:
		return "AFTER MATCH SKIP TO FIRST " + n.Var.String()
	case SkipToLast:
		return "AFTER MATCH SKIP TO LAST " + n.Var.String()
	}
	return "AFTER MATCH SKIP PAST LAST ROW"
}

func (n *Subset) String() string { return n.Name.String() + " = (" + joinNodes(n.Vars) + ")" }
func (n *Define) String() string { return n.Var.String() + " AS " + n.Cond.String() }

func (n *PatVar) String() string { return n.Name.String() }

func (n *PatConcat) String() string {
	if len(n.Items) == 0 {
		return "()"
	}
	parts := make([]string, len(n.Items))
	for i, x := range n.Items {
		parts[i] = x.String()
		if _, alt := x.(*PatAlt); alt {
			parts[i] = "(" + parts[i] + ")"
		}
	}
	return strings.Join(parts, " ")
}

func (n *PatAlt) String() string {
	parts := make([]string, len(n.Alts))
	for i, x := range n.Alts {
		parts[i] = x.String()
	}
	return strings.Join(parts, " | ")
}

func (n *PatQuant) String() string {
	s := n.Item.String()
	switch n.Item.(type) {
	case *PatVar, *PatPermute, *PatExclude:
	default:
		if c, ok := n.Item.(*PatConcat); !ok || len(c.Items) > 0 {
			s = "(" + s + ")"
		}
	}
	switch {
	case n.Min == 0 && n.Max < 0:
		s += "*"
	case n.Min == 1 && n.Max < 0:
		s += "+"
	case n.Min == 0 && n.Max == 1:
		s += "?"
	case n.Min == n.Max:
		s += "{" + strconv.Itoa(n.Min) + "}"
	case n.Max < 0:
		s += "{" + strconv.Itoa(n.Min) + ",}"
	default:
		s += "{" + strconv.Itoa(n.Min) + "," + strconv.Itoa(n.Max) + "}"
	}
	if n.Reluctant {
		s += "?"
	}
	return s
}

func (n *PatPermute) String() string { return "PERMUTE(" + joinNodes(n.Items) + ")" }
func (n *PatExclude) String() string { return "{- " + n.Item.String() + " -}" }

func (n *PatAnchor) String() string {
	if n.End {
		return "$"
	}
	return "^"
}

func (n *MRColumn) String() string {
	if n.Var != nil {
		return n.Var.String() + "." + n.Col.String()
	}
	return n.Col.String()
}

func (n *MRCall) String() string {
	s := n.Func + "("
	if n.Star {
		if n.StarVar != nil {
			s += n.StarVar.String() + "."
		}
		s += "*"
	} else {
		s += joinNodes(n.Args)
	}
	s += ")"
	if n.Mode != "" {
		s = n.Mode + " " + s
	}
	return s
}
