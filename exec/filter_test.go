package exec

import (
	"math"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
)

// TestConstFilterSets checks that the int sets the transition filters
// test in place (intSetOf, and floatBound for a float constant) hold
// exactly the ints v for which v op k holds as Value.Compare and Equal
// decide it, around k and at the int extremes.
func TestConstFilterSets(t *testing.T) {
	const lo, hi = math.MinInt64, math.MaxInt64
	ops := []ast.Op{ast.OpEq, ast.OpNe, ast.OpLt, ast.OpLe, ast.OpGt, ast.OpGe}
	consts := []event.Value{}
	for _, k := range []int64{0, 3, -3, lo, lo + 1, hi, hi - 1} {
		consts = append(consts, event.IntValue(k))
	}
	for _, f := range []float64{2.5, -2.5, 3, -0.5, 0x1p62, 0x1p63, -0x1p63, 1e300, math.Inf(-1), math.NaN()} {
		consts = append(consts, event.FloatValue(f))
	}
	for _, k := range consts {
		var vs []int64
		if k.Kind() == event.Int {
			vs = []int64{k.Int() - 1, k.Int(), k.Int() + 1} // wrapping at the extremes is wanted: both ends are tested
		} else if f := k.Float(); !math.IsNaN(f) && f > -0x1p63 && f < 0x1p63 {
			vs = []int64{int64(f) - 1, int64(f), int64(f) + 1}
		}
		vs = append(vs, lo, lo+1, hi, hi-1, 0)
		for _, op := range ops {
			var in intSet
			rel := orderOf(op)
			switch k.Kind() {
			case event.Int:
				in = intSetOf(rel, k.Int())
			default:
				r, kk, ok := floatBound(rel, k.Float())
				if f := k.Float(); !ok {
					if !math.IsNaN(f) && f > -0x1p63 && f < 0x1p63 {
						t.Errorf("floatBound(%v, %v) is not ok: the floor fits an int", op, f)
					}
					continue
				}
				in = intSetOf(r, kk)
			}
			for _, v := range vs {
				if got, want := in.has(v) == 1, holdsAsValues(op, event.IntValue(v), k); got != want {
					t.Errorf("%d %v %s: the set says %v, Value %v", v, op, k.AppendText(nil), got, want)
				}
			}
		}
	}
}

// holdsAsValues is v op k as the evaluator's compare decides it.
func holdsAsValues(op ast.Op, v, k event.Value) bool {
	switch op {
	case ast.OpEq:
		return v.Equal(k)
	case ast.OpNe:
		return !v.Equal(k)
	}
	c, ok := v.Compare(k)
	if !ok {
		return false
	}
	switch op {
	case ast.OpLt:
		return c < 0
	case ast.OpLe:
		return c <= 0
	case ast.OpGt:
		return c > 0
	}
	return c >= 0
}
