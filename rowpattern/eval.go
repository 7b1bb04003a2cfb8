package rowpattern

import (
	"math"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// partition is one partition's rows, in ORDER BY order, and the
// columns the query reads (Query.cached) copied out of them, in the
// stream's order when partitioning reads it (the rows of a partition are
// far apart in memory, a cache miss a row): cols[k][i] is row i's column
// cached[k].
type partition struct {
	rows []*event.Event
	cols [][]event.Value
	// key is its PARTITION BY columns' values, its first row's: equal in
	// all its rows (1 and 1.0 are one partition, shown as its first row's).
	key []event.Value
	// memo is DEFINE's value by row and variable, when no DEFINE reads
	// the match's history and one is not a rowTest (matcher.test): 0
	// unknown, 1 false, 2 true.
	memo []uint8
	base int // the rows a live partition has dropped before rows[0]
	// Where matching is: the next start row, the rows before covered
	// that a match output (WITH UNMATCHED ROWS), the matches so far.
	start, covered int
	matchNo        int64
	paused         paused
}

// paused is a live partition's match from start that waits for rows:
// its threads at row pos (which it lacks), their nodes, the match found
// so far (-2: none); positions count from the partition's first row
// ever. Its buffers are the matcher's, traded back and forth.
type paused struct {
	valid      bool
	start, pos int
	cur        []thread
	nodes      []node
	found      int32
}

func (p *partition) len() int               { return len(p.rows) }
func (p *partition) ts(i int) int64         { return p.rows[i].TS }
func (p *partition) row(i int) *event.Event { return p.rows[i] }

// evalCtx is where an expression is evaluated: a match (or a DEFINE's
// candidate match) from row start, labels[i] being row start+i's, and its
// current row labels[cur] (-1 in an empty match); matchNo is
// MATCH_NUMBER() and names the variables' names, for CLASSIFIER().
// origin is the match's start row: start, but in a DEFINE evaluated as a
// match of its row alone that reads the start row (Query.fromStart).
type evalCtx struct {
	rows    *partition
	start   int
	origin  int
	labels  []label
	cur     int
	matchNo int64
	names   []string
	refs    []event.Value // a SELECT expression's columns (runner.value)
}

// rowExpr is a compiled expression (SQL's null is the absent value); pos
// is the match position of the row a function's argument reads (a
// position outside the match reads the partition's row there).
type rowExpr func(c *evalCtx, pos int) event.Value

// varSet is a set of primary variables; nil is the universal variable.
type varSet []bool

func (s varSet) has(l label) bool { return s == nil || s[l.v()] }

// scope is a RUNNING function's rows (to the current row) or a FINAL one's
// (the whole match): the last position it may read.
func (c *evalCtx) limit(final bool) int {
	if final {
		return len(c.labels) - 1
	}
	return c.cur
}

// last is the position of the n-th last row of vars up to limit, or -1.
func (c *evalCtx) last(vars varSet, n, limit int) int {
	for i := limit; i >= 0; i-- {
		if vars.has(c.labels[i]) {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

// first is the position of the n-th first row of vars up to limit, or -1.
func (c *evalCtx) first(vars varSet, n, limit int) int {
	for i := 0; i <= limit; i++ {
		if vars.has(c.labels[i]) {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

// inPartition reports whether match position pos is a row of the partition.
func (c *evalCtx) inPartition(pos int) bool {
	i := c.start + pos
	return i >= 0 && i < c.rows.len()
}

// classifier is the variable's name at match position pos, or null.
func (c *evalCtx) classifier(pos int) event.Value {
	if pos < 0 || pos >= len(c.labels) {
		return event.Value{}
	}
	return event.StringValue(c.names[c.labels[pos].v()])
}

// truth is SQL's three-valued logic: a value is true, false or null.
func truth(v event.Value) (val, known bool) {
	if v.Kind() != event.Bool {
		return false, false
	}
	return v.Bool(), true
}

func boolValue(b bool) event.Value { return event.BoolValue(b) }

// logic is AND or OR with SQL's nulls: the value that decides alone
// (false for AND, true for OR) wins over null.
func logic(op ast.Op, x, y rowExpr) rowExpr {
	decides := op == ast.OpOr
	return func(c *evalCtx, pos int) event.Value {
		a, ak := truth(x(c, pos))
		if ak && a == decides {
			return boolValue(decides)
		}
		b, bk := truth(y(c, pos))
		switch {
		case bk && b == decides:
			return boolValue(decides)
		case ak && bk:
			return boolValue(!decides)
		}
		return event.Value{}
	}
}

// compare is a comparison: null when either side is null; values that do
// not compare (a string and a number) are unequal and otherwise unknown.
func compare(op ast.Op, a, b event.Value) event.Value {
	if a.IsAbsent() || b.IsAbsent() {
		return event.Value{}
	}
	c, ok := a.Compare(b)
	if !ok {
		switch op {
		case ast.OpEq:
			return boolValue(false)
		case ast.OpNe:
			return boolValue(true)
		}
		return event.Value{}
	}
	switch op {
	case ast.OpEq:
		return boolValue(c == 0)
	case ast.OpNe:
		return boolValue(c != 0)
	case ast.OpLt:
		return boolValue(c < 0)
	case ast.OpLe:
		return boolValue(c <= 0)
	case ast.OpGt:
		return boolValue(c > 0)
	}
	return boolValue(c >= 0)
}

// arith is + - * / % with nulls: as a query's (planner.Arith), but an
// int divided by an int is SQL's integer division (it truncates), and a
// zero divisor or an int result beyond int64 gives null.
func arith(op ast.Op, a, b event.Value) event.Value {
	if op == ast.OpDiv && a.IsInt() && b.IsInt() {
		if x, y := a.Int(), b.Int(); y != 0 && (x != math.MinInt64 || y != -1) {
			return event.IntValue(x / y)
		}
		return event.Value{}
	}
	v, _ := planner.Arith(op, a, b) // a fault's value is null
	return v
}
