package ast

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// keywords are printed in backquotes when they are used as names, so that
// String() always parses back. The grammar's keywords are case-insensitive.
var keywords = map[string]bool{
	"pattern": true, "event": true, "seq": true, "any": true, "where": true,
	"within": true, "return": true, "into": true, "as": true, "and": true, "or": true,
	"not": true, "from": true, "explain": true, "analyze": true, "load": true,
	"format": true, "with": true, "generate": true, "stocks": true, "use": true,
	"show": true, "streams": true, "types": true, "describe": true, "set": true,
	"follow": true, "true": true, "false": true, "len": true, "listen": true,
	"queries": true, "query": true, "stop": true, "settings": true, "select": true,
	"rule": true,
}

// IsKeyword reports whether name is a keyword of the language, in any case.
func IsKeyword(name string) bool { return keywords[strings.ToLower(name)] }

// QuoteName prints a name so that it lexes back as the same identifier.
func QuoteName(name string) string {
	if IsPlainIdent(name) && !IsKeyword(name) {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// IsPlainIdent reports whether s lexes as one identifier without
// backquotes (a keyword does too; where the grammar takes it as a name
// depends on the place).
func IsPlainIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

// QuoteAttr prints an attribute name part by part, so that the dotted
// name of a nested JSON key prints as written (geo.country) and parses
// back as the same name.
func QuoteAttr(name string) string {
	parts := strings.Split(name, ".")
	if slices.Contains(parts, "") {
		return QuoteName(name) // a.`x..y`: no part may be empty
	}
	for i, p := range parts {
		parts[i] = QuoteName(p)
	}
	return strings.Join(parts, ".")
}

// QuoteString prints s as a single-quoted literal.
func QuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func (n *Ident) String() string {
	if n == nil {
		return ""
	}
	return QuoteName(n.Name)
}

func (n *Query) String() string {
	var b strings.Builder
	if n.Rule != nil {
		b.WriteString("RULE " + n.Rule.String() + ": ")
	}
	if n.Explain {
		b.WriteString("EXPLAIN ")
		if n.Analyze {
			b.WriteString("ANALYZE ")
		}
		if n.ExplainFormat != "" {
			b.WriteString("(FORMAT " + n.ExplainFormat + ") ")
		}
	}
	if n.Event {
		b.WriteString("EVENT ")
	} else {
		b.WriteString("PATTERN ")
	}
	b.WriteString(n.Pattern.String())
	if n.From != nil {
		b.WriteString(" FROM ")
		b.WriteString(n.From.String())
	}
	if n.Where != nil {
		b.WriteString(" WHERE ")
		b.WriteString(n.Where.String())
	}
	if n.Within != nil {
		b.WriteString(" WITHIN ")
		b.WriteString(n.Within.String())
	}
	if n.Return != nil {
		b.WriteString(" RETURN ")
		b.WriteString(n.Return.String())
	}
	if n.Into != nil {
		b.WriteString(" INTO ")
		b.WriteString(n.Into.String())
	}
	return b.String()
}

func (n *Pattern) String() string {
	if n.Root != nil {
		return n.Root.String()
	}
	parts := make([]string, len(n.Components))
	for i, c := range n.Components {
		parts[i] = c.String()
	}
	switch n.Form {
	case FormParen:
		return "(" + strings.Join(parts, "; ") + ")"
	case FormSingle:
		if len(parts) == 1 {
			return parts[0]
		}
	}
	return "SEQ(" + strings.Join(parts, ", ") + ")"
}

func (n *Component) String() string {
	var b strings.Builder
	if n.Any {
		b.WriteString("ANY(")
		for i, t := range n.Types {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(t.String())
		}
		b.WriteString(")")
	} else if len(n.Types) > 0 {
		b.WriteString(n.Types[0].String())
	}
	if n.Closure != nil {
		b.WriteString(n.Closure.String())
	}
	if n.Optional {
		b.WriteString("?")
	}
	if n.Var != nil {
		b.WriteString(" ")
		b.WriteString(n.Var.String())
		if n.List {
			b.WriteString("[]")
		}
	}
	if !n.Negated {
		return b.String()
	}
	if n.Parens {
		return "!(" + b.String() + ")"
	}
	return "!" + b.String()
}

func (n *Closure) String() string {
	if s, ok := n.algebraText(); ok {
		return s
	}
	switch n.Kind {
	case ClosurePower:
		return "^" + strconv.Itoa(n.K)
	case ClosureAtLeast:
		return "{" + strconv.Itoa(n.K) + ",}"
	}
	return "+"
}

func (n *Duration) String() string {
	if n.Unit == "" {
		return n.Raw
	}
	return n.Raw + " " + n.Unit
}

func (n *Return) String() string {
	if n.Star {
		return "*"
	}
	parts := make([]string, len(n.Items))
	for i, it := range n.Items {
		parts[i] = it.String()
	}
	return strings.Join(parts, ", ")
}

func (n *ReturnItem) String() string {
	if n.Alias == nil {
		return n.Expr.String()
	}
	return n.Expr.String() + " AS " + n.Alias.String()
}

func (n *Load) String() string {
	var b strings.Builder
	b.WriteString("LOAD ")
	b.WriteString(QuoteString(n.Path))
	if n.Follow {
		b.WriteString(" FOLLOW")
	}
	if n.Name != nil {
		b.WriteString(" AS ")
		b.WriteString(n.Name.String())
	}
	if n.Format != "" {
		b.WriteString(" FORMAT ")
		b.WriteString(n.Format)
	}
	b.WriteString(optionsString(n.Options))
	return b.String()
}

func (n *Listen) String() string {
	s := "LISTEN " + QuoteString(n.Addr)
	if n.Name != nil {
		s += " AS " + n.Name.String()
	}
	if n.Format != "" {
		s += " FORMAT " + n.Format
	}
	return s + optionsString(n.Options)
}

func (n *Generate) String() string {
	s := "GENERATE STOCKS"
	if n.Name != nil {
		s += " AS " + n.Name.String()
	}
	return s + optionsString(n.Options)
}

func optionsString(opts []*Option) string {
	if len(opts) == 0 {
		return ""
	}
	parts := make([]string, len(opts))
	for i, o := range opts {
		parts[i] = o.String()
	}
	return " WITH (" + strings.Join(parts, ", ") + ")"
}

func (n *Option) String() string { return QuoteName(n.Key) + " = " + n.Value.String() }
func (n *Use) String() string    { return "USE " + n.Name.String() }
func (*ShowStreams) String() string {
	return "SHOW STREAMS"
}

func (*ShowQueries) String() string  { return "SHOW QUERIES" }
func (*ShowSettings) String() string { return "SHOW SETTINGS" }
func (n *StopQuery) String() string  { return "STOP QUERY " + strconv.Itoa(n.ID) }

func (n *ShowTypes) String() string {
	if n.From == nil {
		return "SHOW TYPES"
	}
	return "SHOW TYPES FROM " + n.From.String()
}

func (n *Describe) String() string { return "DESCRIBE " + n.Name.String() }
func (n *Set) String() string      { return "SET " + QuoteName(n.Key) + " = " + n.Value.String() }

// ---- expressions ----

// precedence of an expression for printing: higher binds tighter.
func precedence(e Expr) int {
	switch e := e.(type) {
	case *BinaryExpr:
		switch {
		case e.Op == OpOr:
			return 1
		case e.Op == OpAnd:
			return 2
		case e.Op.IsComparison():
			return 4
		case e.Op == OpAdd || e.Op == OpSub:
			return 5
		default:
			return 6
		}
	case *UnaryExpr:
		switch e.Op {
		case OpNot:
			return 3
		case OpIsNull, OpIsNotNull:
			return 4 // SQL's: below the comparisons, printed as one
		}
		return 7
	case *Literal:
		if (e.Kind == LitInt && e.Int < 0) || (e.Kind == LitFloat && math.Signbit(e.Float)) {
			return 7 // prints with a leading minus
		}
	case *Strategy:
		if e.Body != nil {
			return 2 // name(vars) { body } stands for name AND body
		}
	}
	return 8
}

func wrap(e Expr, parens bool) string {
	if parens {
		return "(" + e.String() + ")"
	}
	return e.String()
}

func (n *BinaryExpr) String() string {
	p := precedence(n)
	left, right := precedence(n.X) < p, precedence(n.Y) <= p
	if n.Op.IsComparison() {
		left = precedence(n.X) <= p
	}
	return wrap(n.X, left) + " " + n.Op.String() + " " + wrap(n.Y, right)
}

func (n *UnaryExpr) String() string {
	// A chain of NOTs or minuses prints without parentheses, which could
	// nest past the parser's depth limit; "- -" keeps "--" from starting
	// a comment.
	switch n.Op {
	case OpNot:
		return "NOT " + wrap(n.X, precedence(n.X) < 3)
	case OpIsNull, OpIsNotNull:
		return wrap(n.X, precedence(n.X) < 4) + " " + n.Op.String()
	}
	if precedence(n.X) == 7 {
		return "- " + n.X.String()
	}
	return "-" + wrap(n.X, precedence(n.X) < 8)
}

func (n *Literal) String() string {
	switch n.Kind {
	case LitInt:
		return strconv.FormatInt(n.Int, 10)
	case LitFloat:
		s := strconv.FormatFloat(n.Float, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEnI") {
			s += ".0"
		}
		return s
	case LitString:
		return QuoteString(n.Str)
	case LitBool:
		if n.Bool {
			return "true"
		}
		return "false"
	}
	return "?"
}

func (n *Index) String() string {
	var base string
	switch n.Kind {
	case IndexConst:
		return strconv.Itoa(n.Offset)
	case IndexI:
		base = "i"
	case IndexLen:
		base = "" // completed by AttrRef, which knows the variable
	}
	if n.Offset < 0 {
		return base + "-" + strconv.Itoa(-n.Offset)
	}
	if n.Offset > 0 {
		return base + "+" + strconv.Itoa(n.Offset)
	}
	return base
}

func (n *AttrRef) String() string {
	s := n.Var.String()
	if n.Index != nil {
		idx := n.Index.String()
		if n.Index.Kind == IndexLen {
			idx = n.Var.String() + ".LEN" + idx
		}
		s += "[" + idx + "]"
	}
	return s + "." + QuoteAttr(n.Attr.Name)
}

func (n *VarRef) String() string { return n.Var.String() }
func (n *LenRef) String() string { return n.Var.String() + ".LEN" }

func (n *ListRef) String() string {
	s := n.Var.String()
	if n.Running {
		s += "[..i-1]"
	} else {
		s += "[]"
	}
	if n.Attr != nil {
		s += "." + QuoteAttr(n.Attr.Name)
	}
	return s
}

func (n *Call) String() string {
	parts := make([]string, len(n.Args))
	for i, a := range n.Args {
		parts[i] = a.String()
	}
	return n.Func + "(" + strings.Join(parts, ", ") + ")"
}

func (n *EquivAttr) String() string {
	if n.Value == nil {
		return QuoteAttr(n.Attr.Name)
	}
	return QuoteAttr(n.Attr.Name) + " = " + n.Value.String()
}

func (n *Equivalence) String() string {
	parts := make([]string, len(n.Attrs))
	for i, a := range n.Attrs {
		parts[i] = a.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (n *Strategy) String() string {
	if n.Body == nil && n.Vars == nil {
		return n.Name
	}
	vars := make([]string, len(n.Vars))
	for i, v := range n.Vars {
		vars[i] = v.String()
	}
	body := ""
	if n.Body != nil {
		body = n.Body.String()
	}
	return n.Name + "(" + strings.Join(vars, ", ") + ") { " + body + " }"
}
