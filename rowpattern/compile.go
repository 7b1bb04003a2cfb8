package rowpattern

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
)

// Query is a compiled MATCH_RECOGNIZE.
type Query struct {
	st        *ast.MatchRecognize
	src       *ast.Source // st's text, for errors at run time
	prog      program
	names     []string // the primary variables, by number
	defines   []rowExpr
	tests     []rowTest // the DEFINEs of the row alone, by variable; nil: another form
	measures  []rowExpr
	partition []int // attribute slots
	order     []orderKey
	rows      ast.RowsPerMatch
	skip      ast.SkipKind
	skipVars  varSet
	skipName  string
	within    int64 // -1: none
	cols      []outCol
	stream    string
	types     []string // the stream's type names, for the type column
	// history is set when a DEFINE reads more of the match than the row
	// it tests (another variable's rows, FIRST, LAST, an aggregate): only
	// then do the matcher's threads at one instruction differ.
	history bool
	// startVar is the variable of a match's first row and no other (-1:
	// none, program.soleFirst); fromStart marks, by variable, a DEFINE
	// without history that reads its row (the match's start row), so
	// that its value depends on the start row too (not memoized).
	startVar  int
	fromStart []bool
	cached    []int // the column slots the query reads (partition.cols)
	reach     int   // the farthest PREV reaches back
	liveErr   error // why it cannot run on a live stream
}

// The columns every row has besides its attributes (docs/LANGUAGE.md
// §10), as slots below 0.
const (
	colType = -2 - iota
	colTS
	colSeq
)

var pseudoColumns = map[string]int{"TYPE": colType, "TS": colTS, "SEQ": colSeq}

// col is a row's column in slot.
func (q *Query) col(e *event.Event, slot int) event.Value {
	switch slot {
	case colType:
		return event.StringValue(q.types[e.Type])
	case colTS:
		return event.IntValue(e.TS)
	case colSeq:
		return event.IntValue(e.Seq)
	}
	return e.Attr(slot)
}

type orderKey struct {
	slot int
	desc bool
}

// outCol is an output column: a measure's value (measure >= 0) or a
// column of the row (slot).
type outCol struct {
	name    string
	measure int
	col     int // the column's index in partition.cols
	part    int // else the PARTITION BY column's index in partition.key, -1 none
	// expr is a SELECT expression (measure -1) of the columns refs.
	expr rowExpr
	refs []outCol
}

// Columns are the output columns' names, in SELECT order.
func (q *Query) Columns() []string {
	out := make([]string, len(q.cols))
	for i, c := range q.cols {
		out[i] = c.name
	}
	return out
}

// Stream is the name of the stream the query reads, as written.
func (q *Query) Stream() string { return q.stream }

type compiler struct {
	src    *ast.Source
	schema *event.Schema
	q      *Query
	vars   map[string]int    // primary variables
	subs   map[string]varSet // SUBSETs
	err    error
	define bool      // compiling a DEFINE condition
	defVar int       // the variable it defines
	nextAt ast.Node  // the first NEXT (liveCheck)
	sel    *[]outCol // compiling a SELECT expression: the columns it reads
}

// Compile checks a MATCH_RECOGNIZE against the schema of the stream it
// reads (unit: its timestamps' tick, 0 for unit-less ones) and compiles
// it. Errors point into src with a caret.
func Compile(st *ast.MatchRecognize, src *ast.Source, schema *event.Schema, unit int64) (*Query, error) {
	c := &compiler{src: src, schema: schema, q: &Query{st: st, src: src, rows: st.Rows, within: -1}, vars: map[string]int{}, subs: map[string]varSet{}}
	c.q.stream = c.text(st.From)
	for _, t := range schema.Types {
		c.q.types = append(c.q.types, t.Name)
	}
	c.collectVars(st.Pattern)
	if len(c.vars) > 1<<20 {
		c.fail(st.Pattern, "too many pattern variables")
	}
	c.q.prog = compilePattern(st.Pattern, func(n *ast.MRName) int { return c.vars[n.Name] }, c.fail)
	c.q.startVar = c.q.prog.soleFirst()
	c.q.fromStart = make([]bool, len(c.q.names))
	c.subsets()
	c.keys()
	c.skipTo()
	c.windowOf(unit)
	c.q.defines = make([]rowExpr, len(c.q.names))
	c.q.tests = make([]rowTest, len(c.q.names))
	for _, d := range st.Defines {
		v, ok := c.vars[d.Var.Name]
		if !ok {
			c.fail(d.Var, "DEFINE names %s, which is not a variable of PATTERN", d.Var)
			continue
		}
		if c.q.defines[v] != nil {
			c.fail(d.Var, "%s is defined twice", d.Var)
			continue
		}
		c.define, c.defVar = true, v
		c.q.defines[v] = c.expr(d.Cond, nil)
		c.q.tests[v] = c.rowTest(d.Cond)
		c.define = false
	}
	for v, d := range c.q.defines {
		if d == nil {
			c.q.tests[v] = c.rowTest(nil)
		}
	}
	seen := map[string]bool{}
	for _, m := range st.Measures {
		if seen[m.Name.Name] {
			c.fail(m.Name, "measure %s is named twice", m.Name)
		}
		seen[m.Name.Name] = true
		c.q.measures = append(c.q.measures, c.expr(m.Expr, nil))
	}
	if st.Rows == ast.AllRowsWithUnmatched && hasExclusion(st.Pattern) {
		c.fail(st.Pattern, "a pattern with an exclusion {- -} cannot be used with ALL ROWS PER MATCH WITH UNMATCHED ROWS")
	}
	c.selectList()
	if c.err != nil {
		return nil, c.err
	}
	c.liveCheck()
	return c.q, nil
}

// fail keeps the first error.
func (c *compiler) fail(n ast.Node, format string, args ...any) {
	if c.err == nil {
		c.err = &ast.Error{Src: c.src, Offset: n.NodeSpan().Start, Msg: fmt.Sprintf(format, args...)}
	}
}

// text is a name as the user wrote it.
func (c *compiler) text(n *ast.MRName) string {
	if n.Quoted || c.src == nil {
		return n.Name
	}
	return c.src.Text[n.Span.Start:n.Span.End]
}

func (c *compiler) collectVars(p ast.RowPattern) {
	switch n := p.(type) {
	case *ast.PatVar:
		if _, ok := c.vars[n.Name.Name]; !ok {
			c.vars[n.Name.Name] = len(c.q.names)
			c.q.names = append(c.q.names, n.Name.Name)
		}
	case *ast.PatConcat:
		for _, it := range n.Items {
			c.collectVars(it)
		}
	case *ast.PatAlt:
		for _, it := range n.Alts {
			c.collectVars(it)
		}
	case *ast.PatQuant:
		c.collectVars(n.Item)
	case *ast.PatPermute:
		for _, it := range n.Items {
			c.collectVars(it)
		}
	case *ast.PatExclude:
		c.collectVars(n.Item)
	}
}

func hasExclusion(p ast.RowPattern) bool {
	switch n := p.(type) {
	case *ast.PatExclude:
		return true
	case *ast.PatConcat:
		for _, it := range n.Items {
			if hasExclusion(it) {
				return true
			}
		}
	case *ast.PatAlt:
		for _, it := range n.Alts {
			if hasExclusion(it) {
				return true
			}
		}
	case *ast.PatPermute:
		for _, it := range n.Items {
			if hasExclusion(it) {
				return true
			}
		}
	case *ast.PatQuant:
		return hasExclusion(n.Item)
	}
	return false
}

func (c *compiler) subsets() {
	for _, s := range c.q.st.Subsets {
		if _, ok := c.vars[s.Name.Name]; ok {
			c.fail(s.Name, "SUBSET %s has the name of a pattern variable", s.Name)
			continue
		}
		if _, ok := c.subs[s.Name.Name]; ok {
			c.fail(s.Name, "SUBSET %s is defined twice", s.Name)
			continue
		}
		set := make(varSet, len(c.q.names))
		for _, v := range s.Vars {
			i, ok := c.vars[v.Name]
			if !ok {
				c.fail(v, "SUBSET %s names %s, which is not a variable of PATTERN", s.Name, v)
				continue
			}
			set[i] = true
		}
		c.subs[s.Name.Name] = set
	}
}

// varSetOf is a variable or SUBSET name's set of primary variables.
func (c *compiler) varSetOf(n *ast.MRName) (varSet, bool) {
	if i, ok := c.vars[n.Name]; ok {
		set := make(varSet, len(c.q.names))
		set[i] = true
		return set, true
	}
	set, ok := c.subs[n.Name]
	if !ok {
		c.fail(n, "%s is not a pattern variable or SUBSET", n)
	}
	return set, ok
}

// cache is the index in partition.cols of attribute slot.
func (c *compiler) cache(slot int) int {
	if k := slices.Index(c.q.cached, slot); k >= 0 {
		return k
	}
	c.q.cached = append(c.q.cached, slot)
	return len(c.q.cached) - 1
}

// slot finds a column of the stream: an unquoted name matches any case.
func (c *compiler) slot(n *ast.MRName) int {
	if slot, ok := c.schema.AttrSlot(n.Name); ok {
		return slot
	}
	if !n.Quoted {
		for slot, a := range c.schema.Attrs {
			if strings.EqualFold(a, n.Name) {
				return slot
			}
		}
	}
	if slot, ok := pseudoColumns[strings.ToUpper(n.Name)]; ok && (!n.Quoted || n.Name == strings.ToLower(n.Name)) {
		return slot
	}
	c.fail(n, "stream %s has no column %s", c.q.stream, c.text(n))
	return -1
}

func (c *compiler) keys() {
	for _, p := range c.q.st.PartitionBy {
		c.q.partition = append(c.q.partition, c.slot(p))
	}
	for _, o := range c.q.st.OrderBy {
		c.q.order = append(c.q.order, orderKey{slot: c.slot(o.Col), desc: o.Desc})
	}
}

func (c *compiler) skipTo() {
	s := c.q.st.Skip
	if s == nil {
		c.q.skip = ast.SkipPastLastRow
		return
	}
	c.q.skip = s.Kind
	if s.Var != nil {
		c.q.skipVars, _ = c.varSetOf(s.Var)
		c.q.skipName = s.Var.String()
	}
}

func (c *compiler) windowOf(unit int64) {
	d := c.q.st.Within
	if d == nil {
		return
	}
	num := uint64(1)
	if d.Unit != "" {
		if unit == 0 {
			c.fail(d, "WITHIN %s names a time unit, but stream %s has unit-less timestamps (write WITHIN %s)", d, c.q.stream, d.Raw)
			return
		}
		u, _ := event.LookupTimeUnit(d.Unit)
		if int64(u.Duration)%unit != 0 {
			c.fail(d, "not supported yet: WITHIN in a unit finer than the stream's tick")
			return
		}
		num = uint64(int64(u.Duration) / unit)
	}
	v, err := strconv.ParseUint(d.Raw, 10, 64)
	if err != nil {
		c.fail(d, "not supported yet: WITHIN with a fractional duration")
		return
	}
	hi, lo := bits.Mul64(v, num)
	if hi != 0 || lo > 1<<62 {
		c.fail(d, "WITHIN %s is too large", d)
		return
	}
	c.q.within = int64(lo)
}

// selectList resolves the SELECT list: ONE ROW PER MATCH outputs the
// partition columns and the measures, ALL ROWS PER MATCH those, the
// ORDER BY columns and the other columns of the rows (docs/LANGUAGE.md §10).
func (c *compiler) selectList() {
	st := c.q.st
	if st.Star {
		used := map[int]bool{}
		for i, p := range st.PartitionBy {
			c.q.cols = append(c.q.cols, c.rowColumn(c.text(p), c.q.partition[i]))
			used[c.q.partition[i]] = true
		}
		if st.Rows != ast.OneRowPerMatch {
			for i, o := range st.OrderBy {
				c.q.cols = append(c.q.cols, c.rowColumn(c.text(o.Col), c.q.order[i].slot))
				used[c.q.order[i].slot] = true
			}
		}
		for i, m := range st.Measures {
			c.q.cols = append(c.q.cols, outCol{name: c.text(m.Name), measure: i})
		}
		if st.Rows != ast.OneRowPerMatch {
			for slot, a := range c.schema.Attrs {
				if !used[slot] {
					c.q.cols = append(c.q.cols, c.rowColumn(a, slot))
				}
			}
		}
		return
	}
	for _, it := range st.Items {
		if it.Expr != nil {
			c.selectExpr(it)
			continue
		}
		col, ok := c.outColumn(it.Qual, it.Col)
		if !ok {
			continue
		}
		col.name = c.text(it.Col)
		if it.Alias != nil {
			col.name = c.text(it.Alias)
		}
		c.q.cols = append(c.q.cols, col)
	}
}

// outColumn resolves [qual.]col of the SELECT list: a measure, else a
// column of the rows.
func (c *compiler) outColumn(qual, name *ast.MRName) (outCol, bool) {
	st := c.q.st
	if qual != nil && (st.Alias == nil || qual.Name != st.Alias.Name) && qual.Name != st.From.Name {
		c.fail(qual, "%s is not the MATCH_RECOGNIZE's alias", qual)
		return outCol{}, false
	}
	for i, m := range st.Measures {
		if m.Name.Name == name.Name {
			return outCol{measure: i}, true
		}
	}
	if st.Rows == ast.OneRowPerMatch && !c.isPartition(name) {
		c.fail(name, "%s is neither a measure nor a PARTITION BY column (ONE ROW PER MATCH outputs only those)", c.text(name))
		return outCol{}, false
	}
	return c.rowColumn("", c.slot(name)), true
}

// rowColumn is the output column name of the rows' column slot: a
// PARTITION BY column's is the partition's value (partition.key), which
// is not copied a row at a time; the others are read from partition.cols.
func (c *compiler) rowColumn(name string, slot int) outCol {
	if i := slices.Index(c.q.partition, slot); i >= 0 {
		return outCol{name: name, measure: -1, part: i}
	}
	return outCol{name: name, measure: -1, part: -1, col: c.cache(slot)}
}

// selectExpr compiles an expression of the SELECT list: its names are
// the output's columns (outColumn), read for each output row into
// evalCtx.refs; functions belong in MEASURES.
func (c *compiler) selectExpr(it *ast.SelectItem) {
	if it.Alias == nil {
		c.fail(it.Expr, "an expression in the SELECT list needs a name: add AS name")
		return
	}
	c.sel = &[]outCol{}
	x := c.expr(it.Expr, nil)
	c.q.cols = append(c.q.cols, outCol{name: c.text(it.Alias), measure: -1, expr: x, refs: *c.sel})
	c.sel = nil
}

func (c *compiler) isPartition(n *ast.MRName) bool {
	for _, p := range c.q.st.PartitionBy {
		if p.Name == n.Name || !n.Quoted && !p.Quoted && strings.EqualFold(p.Name, n.Name) {
			return true
		}
	}
	return false
}
