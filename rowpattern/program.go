// Package rowpattern runs MATCH_RECOGNIZE (docs/LANGUAGE.md §10,
// docs/MATCH_RECOGNIZE.md): it compiles the row pattern to a program of a
// small virtual machine and runs it over each partition's consecutive rows,
// with threads kept in the standard's preference order (a Pike VM, as
// Trino's matcher is), and evaluates DEFINE and MEASURES with SQL's nulls.
package rowpattern

import (
	"github.com/sase-cep/sase/ast"
)

// opcode is an instruction of the matcher's program.
type opcode uint8

const (
	opVar   opcode = iota // consume one row that satisfies variable v
	opSplit               // go on at x, and (less preferred) at y
	opJump                // go on at x
	opStart               // ^: only at the partition's first row
	opEnd                 // $: only after the partition's last row
	opDone                // a match
)

// inst is one instruction; excl marks an opVar inside {- -}.
type inst struct {
	op   opcode
	x, y int
	v    int
	excl bool
}

// Limits of a program, so that a quantifier's copies or PERMUTE's orders
// cannot make one without bound.
const (
	maxInsts   = 1 << 16
	maxPermute = 6
)

// program is a compiled row pattern.
type program []inst

// patCompiler emits a pattern's instructions; vars numbers its variables.
type patCompiler struct {
	prog  program
	vars  func(*ast.MRName) int
	excl  int
	fail  func(node ast.Node, format string, args ...any)
	large bool
}

// compilePattern compiles pat; vars gives a variable's number.
func compilePattern(pat ast.RowPattern, vars func(*ast.MRName) int, fail func(ast.Node, string, ...any)) program {
	c := &patCompiler{vars: vars, fail: fail}
	c.emit(pat)
	c.add(inst{op: opDone})
	return c.prog
}

func (c *patCompiler) add(in inst) int {
	if len(c.prog) >= maxInsts {
		c.large = true
		return len(c.prog) - 1
	}
	c.prog = append(c.prog, in)
	return len(c.prog) - 1
}

func (c *patCompiler) emit(pat ast.RowPattern) {
	if c.large {
		return
	}
	switch n := pat.(type) {
	case *ast.PatVar:
		c.add(inst{op: opVar, v: c.vars(n.Name), excl: c.excl > 0})
	case *ast.PatConcat:
		for _, it := range n.Items {
			c.emit(it)
		}
	case *ast.PatAlt:
		c.alt(len(n.Alts), func(i int) { c.emit(n.Alts[i]) })
	case *ast.PatQuant:
		c.quant(n)
	case *ast.PatPermute:
		if len(n.Items) > maxPermute {
			c.fail(n, "not supported yet: PERMUTE of more than %d items", maxPermute)
			return
		}
		orders := permutations(len(n.Items))
		c.alt(len(orders), func(i int) {
			for _, k := range orders[i] {
				c.emit(n.Items[k])
			}
		})
	case *ast.PatExclude:
		c.excl++
		c.emit(n.Item)
		c.excl--
	case *ast.PatAnchor:
		if n.End {
			c.add(inst{op: opEnd})
		} else {
			c.add(inst{op: opStart})
		}
	default:
		c.fail(pat, "not supported yet: row pattern %s", pat)
	}
	if c.large {
		c.fail(pat, "not supported yet: a row pattern of more than %d instructions (a quantifier's bounds are large)", maxInsts)
	}
}

// alt emits n alternatives, preferred in order: split L1, next; L1: ...;
// jump end; next: split L2, ...
func (c *patCompiler) alt(n int, body func(i int)) {
	var jumps []int
	for i := 0; i < n; i++ {
		split := -1
		if i < n-1 {
			split = c.add(inst{op: opSplit})
			c.prog[split].x = split + 1
		}
		body(i)
		if i < n-1 {
			jumps = append(jumps, c.add(inst{op: opJump}))
			c.prog[split].y = len(c.prog)
		}
		if c.large {
			return
		}
	}
	for _, j := range jumps {
		c.prog[j].x = len(c.prog)
	}
}

// split emits a split whose preferred branch is the body (greedy) or the
// way past it (reluctant); it returns the split's index, whose target past
// the body is patched by the caller.
func (c *patCompiler) split(reluctant bool) int {
	s := c.add(inst{op: opSplit})
	if reluctant {
		c.prog[s].y = s + 1
	} else {
		c.prog[s].x = s + 1
	}
	return s
}

func (c *patCompiler) patch(s int, reluctant bool, to int) {
	if reluctant {
		c.prog[s].x = to
	} else {
		c.prog[s].y = to
	}
}

// quant emits Min copies of the item, then either a loop (no Max) or
// Max-Min nested optional copies: (x (x ...)?)?, so that skipping one
// skips the rest.
func (c *patCompiler) quant(n *ast.PatQuant) {
	for i := 0; i < n.Min && !c.large; i++ {
		c.emit(n.Item)
	}
	if n.Max < 0 {
		s := c.split(n.Reluctant)
		c.emit(n.Item)
		c.add(inst{op: opJump, x: s})
		if !c.large {
			c.patch(s, n.Reluctant, len(c.prog))
		}
		return
	}
	var splits []int
	for i := n.Min; i < n.Max && !c.large; i++ {
		splits = append(splits, c.split(n.Reluctant))
		c.emit(n.Item)
	}
	if c.large {
		return
	}
	for _, s := range splits {
		c.patch(s, n.Reluctant, len(c.prog))
	}
}

// permutations lists the orders of 0..n-1 lexicographically: PERMUTE
// prefers them in that order (the standard's rule).
func permutations(n int) [][]int {
	var out [][]int
	var rec func(prefix []int, used []bool)
	rec = func(prefix []int, used []bool) {
		if len(prefix) == n {
			out = append(out, append([]int(nil), prefix...))
			return
		}
		for i := 0; i < n; i++ {
			if !used[i] {
				used[i] = true
				rec(append(prefix, i), used)
				used[i] = false
			}
		}
	}
	rec(nil, make([]bool, n))
	return out
}
