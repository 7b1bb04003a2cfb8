package ast

import (
	"strconv"
	"strings"
)

// Item is a node of a v3 pattern (LANGUAGE.md §9): a Group or a
// *Component.
type Item interface {
	Node
	itemNode()
}

// GroupKind says which operator a group applies to its items.
type GroupKind int

const (
	GroupSeq   GroupKind = iota + 1 // SEQ(I1, I2)
	GroupParen                      // (I1; I2), ReCEP's notation of SEQ
	GroupAnd                        // AND(I1, I2): all, in any order
	GroupOr                         // OR(I1, I2): one of them
)

// Group is SEQ, AND or OR over items, optional when written with '?'.
type Group struct {
	Span     Span
	Kind     GroupKind
	Items    []Item
	Optional bool
}

func (n *Group) NodeSpan() Span { return n.Span }
func (*Group) itemNode()        {}
func (*Component) itemNode()    {}

func (n *Group) String() string {
	parts := make([]string, len(n.Items))
	for i, it := range n.Items {
		parts[i] = it.String()
	}
	var s string
	switch n.Kind {
	case GroupParen:
		s = "(" + strings.Join(parts, "; ") + ")"
	case GroupAnd:
		s = "AND(" + strings.Join(parts, ", ") + ")"
	case GroupOr:
		s = "OR(" + strings.Join(parts, ", ") + ")"
	default:
		s = "SEQ(" + strings.Join(parts, ", ") + ")"
	}
	if n.Optional {
		s += "?"
	}
	return s
}

// algebraText prints the v3 closure forms; ok is false for v1's.
func (n *Closure) algebraText() (string, bool) {
	switch n.Kind {
	case ClosureStar:
		return "*", true
	case ClosureRange:
		return "{" + strconv.Itoa(n.K) + "," + strconv.Itoa(n.Max) + "}", true
	case ClosureExact:
		return "{" + strconv.Itoa(n.K) + "}", true
	}
	return "", false
}

// IsAlgebra reports whether a closure uses a v3 form: *, {n,m}, {n}, or
// {0,}.
func (n *Closure) IsAlgebra() bool {
	_, v3 := n.algebraText()
	return v3 || n.K == 0
}

// Leaves lists the components of an item tree in textual order.
func Leaves(it Item) []*Component {
	switch it := it.(type) {
	case *Component:
		return []*Component{it}
	case *Group:
		var out []*Component
		for _, c := range it.Items {
			out = append(out, Leaves(c)...)
		}
		return out
	}
	return nil
}
