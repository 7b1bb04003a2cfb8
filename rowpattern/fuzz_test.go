package rowpattern_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/grammar"
)

// The fuzz target compiles a row pattern and checks the matcher against a
// backtracking matcher written from the standard's definition: the first
// match found trying alternatives left to right, greedy quantifiers'
// longer counts first and reluctant ones' shorter, is the preferred one;
// a loop's iteration past its minimum must consume a row.

// fuzzTable's rows, and the DEFINE of the variables the patterns may use
// (each reads only its own row, so that the backtracker needs no history).
var fuzzValues = []int{1, 4, 2, 5, 3, 6, 8}

var fuzzDefines = map[string]func(v int) bool{
	"A": func(v int) bool { return v%2 == 0 },
	"B": func(v int) bool { return v > 2 },
	"C": func(int) bool { return true },
	"D": func(v int) bool { return v < 3 },
}

const fuzzDefine = "DEFINE A AS v % 2 = 0, B AS v > 2, D AS v < 3"

// fuzzHistory is fuzzDefine with a DEFINE that reads the match so far
// (count(*) is never negative), so that the matcher keeps threads apart
// by their labels rather than by their instruction alone.
const fuzzHistory = "DEFINE A AS v % 2 = 0, B AS v > 2, D AS v < 3 AND count(*) >= 0"

func FuzzPattern(f *testing.F) {
	for _, p := range []string{
		"A B+ C", "A | A B", "(A | B)* C", "A+? B", "A{2,3}? B?", "^ A* $", "(A*)* B", "PERMUTE(A, B, C)",
		"A {- B+ -} C", "()", "(A?){2} B", "(A | ())+ D", "B*? D{,2}", "(A B | B A)+", "A {- B -}* C", "C{1,} $",
	} {
		f.Add(p)
	}
	var tbl strings.Builder
	tbl.WriteString("id,v")
	for i, v := range fuzzValues {
		fmt.Fprintf(&tbl, ";%d,%d", i+1, v)
	}
	events, schema := table(tbl.String())
	f.Fuzz(func(t *testing.T, pattern string) {
		if len(pattern) > 60 || strings.ContainsAny(pattern, ";`'\"\n") {
			return
		}
		want := []string(nil)
		for _, define := range []string{fuzzDefine, fuzzHistory} {
			text := "SELECT id, m, c FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES MATCH_NUMBER() AS m, CLASSIFIER() AS c " +
				"ALL ROWS PER MATCH PATTERN (" + pattern + ") " + define + ")"
			src := &ast.Source{Name: "<fuzz>", Text: text}
			stmts, err := grammar.Parse(src)
			if err != nil || len(stmts) != 1 {
				return
			}
			st, ok := stmts[0].(*ast.MatchRecognize)
			if !ok || !small(st.Pattern) {
				return
			}
			q, err := compileMR(st, src, schema)
			if err != nil {
				return // a variable the DEFINE does not know, a clause the pattern hid
			}
			var got []string
			if _, err := q.Run(context.Background(), events, 1, func(row []event.Value, _ *event.Event) bool {
				got = append(got, row[0].String()+":"+row[1].String()+":"+row[2].String())
				return true
			}); err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = backtrack(st.Pattern)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("PATTERN (%s) %s\ngot  %v\nwant %v", pattern, define, got, want)
			}
		}
	})
}

// small reports whether a pattern's quantifier bounds and variables keep
// the backtracker quick.
func small(p ast.RowPattern) bool {
	switch n := p.(type) {
	case *ast.PatVar:
		return fuzzDefines[n.Name.Name] != nil
	case *ast.PatConcat:
		return all(n.Items)
	case *ast.PatAlt:
		return all(n.Alts)
	case *ast.PatPermute:
		return len(n.Items) <= 4 && all(n.Items)
	case *ast.PatExclude:
		return small(n.Item)
	case *ast.PatQuant:
		return n.Min <= 3 && n.Max <= 3 && small(n.Item)
	}
	return true
}

func all(ps []ast.RowPattern) bool {
	for _, p := range ps {
		if !small(p) {
			return false
		}
	}
	return true
}

// step is a matched row: its variable, and whether it is excluded.
type step struct {
	v    string
	excl bool
}

// backtrack runs the pattern over fuzzValues as ALL ROWS PER MATCH, AFTER
// MATCH SKIP PAST LAST ROW does, in the rows "id:match:classifier".
func backtrack(p ast.RowPattern) []string {
	var out []string
	n := len(fuzzValues)
	match := 0
	for start := 0; start < n; {
		var found []step
		ok := bt(p, start, nil, false, func(_ int, s []step) bool { found = s; return true })
		if !ok {
			start++
			continue
		}
		match++
		if len(found) == 0 {
			out = append(out, fmt.Sprintf("%d:%d:", start+1, match))
			start++
			continue
		}
		for i, s := range found {
			if !s.excl {
				out = append(out, fmt.Sprintf("%d:%d:%s", start+i+1, match, s.v))
			}
		}
		start += len(found)
	}
	return out
}

// bt matches p at row pos after the steps so far and calls k with the
// position and steps after it, in preference order, until k is true.
func bt(p ast.RowPattern, pos int, steps []step, excl bool, k func(int, []step) bool) bool {
	switch n := p.(type) {
	case *ast.PatVar:
		if pos < len(fuzzValues) && fuzzDefines[n.Name.Name](fuzzValues[pos]) {
			return k(pos+1, append(slices.Clip(steps), step{n.Name.Name, excl}))
		}
		return false
	case *ast.PatConcat:
		return seq(n.Items, pos, steps, excl, k)
	case *ast.PatAlt:
		for _, a := range n.Alts {
			if bt(a, pos, steps, excl, k) {
				return true
			}
		}
		return false
	case *ast.PatPermute:
		for _, order := range perms(len(n.Items)) {
			items := make([]ast.RowPattern, len(order))
			for i, j := range order {
				items[i] = n.Items[j]
			}
			if seq(items, pos, steps, excl, k) {
				return true
			}
		}
		return false
	case *ast.PatExclude:
		return bt(n.Item, pos, steps, true, k)
	case *ast.PatAnchor:
		if n.End && pos == len(fuzzValues) || !n.End && pos == 0 {
			return k(pos, steps)
		}
		return false
	case *ast.PatQuant:
		return quant(n, 0, pos, steps, excl, k)
	}
	panic(fmt.Sprintf("pattern %T", p))
}

func seq(items []ast.RowPattern, pos int, steps []step, excl bool, k func(int, []step) bool) bool {
	if len(items) == 0 {
		return k(pos, steps)
	}
	return bt(items[0], pos, steps, excl, func(p int, s []step) bool { return seq(items[1:], p, s, excl, k) })
}

// quant matches the count-th and later iterations of n; an iteration of
// an unbounded loop past its minimum that consumes nothing is cut.
func quant(n *ast.PatQuant, count, pos int, steps []step, excl bool, k func(int, []step) bool) bool {
	more := func() bool {
		if n.Max >= 0 && count >= n.Max {
			return false
		}
		return bt(n.Item, pos, steps, excl, func(p int, s []step) bool {
			if p == pos && n.Max < 0 && count >= n.Min {
				return false
			}
			return quant(n, count+1, p, s, excl, k)
		})
	}
	done := func() bool { return count >= n.Min && k(pos, steps) }
	if n.Reluctant {
		return done() || more()
	}
	return more() || done()
}

func perms(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range perms(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	slices.SortFunc(out, slices.Compare)
	return out
}
