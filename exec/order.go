package exec

import "github.com/sase-cep/sase/ast"

// order is a comparison as the orders of two numbers it accepts: bit 0
// when x < y, bit 1 when x = y, bit 2 when x > y. For numbers neither NaN
// that is compare's answer.
type order uint8

func orderOf(op ast.Op) order {
	switch op {
	case ast.OpLt:
		return 0b001
	case ast.OpLe:
		return 0b011
	case ast.OpGt:
		return 0b100
	case ast.OpGe:
		return 0b110
	case ast.OpEq:
		return 0b010
	}
	return 0b101 // !=
}
