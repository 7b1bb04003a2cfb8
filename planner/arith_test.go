package planner_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// edges are the ints next to where int64 arithmetic overflows.
var edges = []int64{math.MinInt64, math.MinInt64 + 1, -1 << 32, -2, -1, 0, 1, 2, 1 << 32, 3037000499, 3037000500, math.MaxInt64 - 1, math.MaxInt64}

// exact is a op b computed in big.Int, and whether int64 holds it.
func exact(op ast.Op, a, b int64) (int64, bool) {
	x, y := big.NewInt(a), big.NewInt(b)
	switch op {
	case ast.OpAdd:
		x.Add(x, y)
	case ast.OpSub:
		x.Sub(x, y)
	case ast.OpMul:
		x.Mul(x, y)
	}
	return x.Int64(), x.IsInt64()
}

// TestIntArith checks + - * of ints against big.Int's: every pair of
// edges and random pairs (of all sizes) give the exact result or say
// that int64 does not hold it.
func TestIntArith(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 1))
	random := func() int64 { return r.Int64() >> r.IntN(64) * int64(1-2*r.IntN(2)) }
	var pairs [][2]int64
	for _, a := range edges {
		for _, b := range edges {
			pairs = append(pairs, [2]int64{a, b})
		}
	}
	for range 20000 {
		pairs = append(pairs, [2]int64{random(), random()})
	}
	for _, op := range []ast.Op{ast.OpAdd, ast.OpSub, ast.OpMul} {
		for _, p := range pairs {
			want, fits := exact(op, p[0], p[1])
			got, ok := planner.IntArith(op, p[0], p[1])
			if ok != fits || ok && got != want {
				t.Errorf("IntArith(%d %s %d) = %d, %v; want %d, %v", p[0], op, p[1], got, ok, want, fits)
			}
		}
	}
}

// TestArithFaults checks Arith's values and faults at the edges: an int
// result beyond int64 is Overflow, never a wrapped int; a zero divisor is
// DivZero; floats and / (a float) never overflow.
func TestArithFaults(t *testing.T) {
	i, f := event.IntValue, event.FloatValue
	const maxI, minI = math.MaxInt64, math.MinInt64
	tests := []struct {
		x    event.Value
		op   ast.Op
		y    event.Value
		want event.Value
		ok   planner.Fault
	}{
		{i(maxI), ast.OpAdd, i(1), event.Value{}, planner.Overflow},
		{i(maxI), ast.OpAdd, i(0), i(maxI), planner.NoFault},
		{i(maxI), ast.OpAdd, i(-1), i(maxI - 1), planner.NoFault},
		{i(minI), ast.OpAdd, i(-1), event.Value{}, planner.Overflow},
		{i(minI), ast.OpAdd, i(maxI), i(-1), planner.NoFault},
		{i(minI), ast.OpSub, i(1), event.Value{}, planner.Overflow},
		{i(0), ast.OpSub, i(minI), event.Value{}, planner.Overflow},
		{i(-1), ast.OpSub, i(minI), i(maxI), planner.NoFault},
		{i(maxI), ast.OpSub, i(-1), event.Value{}, planner.Overflow},
		{i(minI), ast.OpMul, i(-1), event.Value{}, planner.Overflow},
		{i(-1), ast.OpMul, i(minI), event.Value{}, planner.Overflow},
		{i(minI), ast.OpMul, i(1), i(minI), planner.NoFault},
		{i(minI), ast.OpMul, i(0), i(0), planner.NoFault},
		{i(maxI), ast.OpMul, i(2), event.Value{}, planner.Overflow},
		{i(maxI), ast.OpMul, i(-1), i(-maxI), planner.NoFault},
		{i(minI), ast.OpMod, i(-1), i(0), planner.NoFault},
		{i(maxI), ast.OpMod, i(0), event.Value{}, planner.DivZero},
		{i(minI), ast.OpDiv, i(-1), f(-float64(minI)), planner.NoFault},
		{i(1), ast.OpDiv, i(0), event.Value{}, planner.DivZero},
		{i(maxI), ast.OpAdd, f(1), f(float64(maxI) + 1), planner.NoFault},
		{f(math.MaxFloat64), ast.OpMul, f(2), f(math.Inf(1)), planner.NoFault},
	}
	for _, tt := range tests {
		got, fault := planner.Arith(tt.op, tt.x, tt.y)
		if fault != tt.ok || !got.Equal(tt.want) && !(got.IsAbsent() && tt.want.IsAbsent()) {
			t.Errorf("%s %s %s = %s, fault %d; want %s, fault %d", tt.x, tt.op, tt.y, got, fault, tt.want, tt.ok)
		}
	}
}

// TestIntSum checks that a sum of ints is exact when int64 holds it,
// whatever its partial sums, and fails when it does not.
func TestIntSum(t *testing.T) {
	const maxI, minI = math.MaxInt64, math.MinInt64
	tests := []struct {
		values []int64
		want   int64
		ok     bool
	}{
		{[]int64{maxI, 1}, 0, false},
		{[]int64{minI, -1}, 0, false},
		{[]int64{maxI, 1, -1}, maxI, true},
		{[]int64{maxI, maxI, minI, minI, 1}, -1, true},
		{[]int64{minI, -1, 1}, minI, true},
		{[]int64{maxI, maxI, maxI, minI, minI}, maxI - 2, true},
		{[]int64{maxI, maxI, maxI, minI}, 0, false},
		{[]int64{-1, 0, 1}, 0, true},
	}
	for _, tt := range tests {
		var s planner.IntSum
		for _, v := range tt.values {
			s.Add(v)
		}
		if got, ok := s.Sum(); ok != tt.ok || ok && got != tt.want {
			t.Errorf("sum of %v = %d, %v; want %d, %v", tt.values, got, ok, tt.want, tt.ok)
		}
	}
}
