package planner_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/planner"
)

// show prints a resolved expression: components by variable, attributes
// with their slot (#n) or builtin, value kinds after a colon.
func show(p *planner.Plan, e planner.Expr) string {
	kinds := func(s string) string { return s + ":" + e.Kinds().String() }
	field := func(f planner.Field) string {
		if f.Builtin != planner.NotBuiltin {
			return f.Name + "(builtin)"
		}
		return fmt.Sprintf("%s#%d", f.Name, f.Slot)
	}
	switch e := e.(type) {
	case *planner.Const:
		return kinds(e.Value.String())
	case *planner.Attr:
		v := p.Components[e.Comp].Var
		switch e.Index {
		case ast.IndexI:
			v += fmt.Sprintf("[i%+d]", e.Offset)
		case ast.IndexConst:
			v += fmt.Sprintf("[%d]", e.Offset)
		case ast.IndexLen:
			v += fmt.Sprintf("[LEN%+d]", e.Offset)
		}
		return kinds(v + "." + field(e.Field))
	case *planner.Len:
		return kinds(p.Components[e.Comp].Var + ".LEN")
	case *planner.Unary:
		return kinds("(" + e.Op.String() + " " + show(p, e.X) + ")")
	case *planner.Binary:
		return kinds("(" + e.Op.String() + " " + show(p, e.X) + " " + show(p, e.Y) + ")")
	case *planner.Abs:
		return kinds("(abs " + show(p, e.X) + ")")
	case *planner.Aggregate:
		arg := p.Components[e.Comp].Var + "[]"
		if e.Running {
			arg = p.Components[e.Comp].Var + "[..i-1]"
		}
		if e.HasAttr {
			arg += "." + field(e.Field)
		}
		return kinds("(" + e.Func + " " + arg + ")")
	case *planner.EquivTest:
		var qs []string
		for _, q := range e.Equivs {
			qs = append(qs, q.Text)
		}
		return kinds("(equiv " + strings.Join(qs, " ") + ")")
	}
	return fmt.Sprintf("%T", e)
}

// TestResolved checks the resolved form the checking pass gives each
// conjunct and RETURN item: components, slots, builtins, element indices
// and kinds, all bound once.
func TestResolved(t *testing.T) {
	stream := testStream(t)
	p, err := compile(t, stream, "PATTERN SEQ(A a, B+ b[], D d, !C n, E e) "+
		"WHERE a.price > 5 AND b[i].price > b[i-1].price AND b[i].attr4 >= avg(b[..i-1].attr4) AND count(b[]) >= 2 "+
		"AND b[1].ts < b[b.LEN].timestamp AND b[b.LEN-1].sym = 'x' AND n.price > a.price "+
		"AND (abs(a.price - d.price) / 2 > 1.5 OR NOT [sym]) AND -a.attr1 < b.LEN WITHIN 10 "+
		"RETURN a.price * 2 AS p2, sum(b[].price), a.seq")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	preds := append(append(append([]*planner.Pred{}, p.Components[1].ElemPreds...), p.Components[3].NegPreds...), selectionPreds(p)...)
	for _, pr := range preds {
		got = append(got, show(p, pr.Expr))
	}
	for _, col := range p.Columns {
		got = append(got, show(p, col.Expr))
	}
	want := []string{
		"(> b[i+0].price#0:int b[i-1].price#0:int):bool",
		"(>= b[i+0].attr4#5:int (avg b[..i-1].attr4#5):float):bool",
		"(> n.price#0:int a.price#0:int):bool",
		"(> a.price#0:int 5:int):bool",
		"(>= (count b[]):int 2:int):bool",
		"(< b[1].ts(builtin):int b[LEN+0].timestamp(builtin):int):bool",
		"(= b[LEN-1].sym#1:string x:string):bool",
		"(OR (> (/ (abs (- a.price#0:int d.price#0:int):int):int 2:int):float 1.5:float):bool (NOT (equiv [sym]):bool):bool):bool",
		"(< (- a.attr1#2:int):int b.LEN:int):bool",
		"(* a.price#0:int 2:int):int",
		"(sum b[].price#0):int",
		"a.seq(builtin):int",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// selectionPreds returns the basic plan's Selection predicates.
func selectionPreds(p *planner.Plan) []*planner.Pred {
	s, _ := planner.StageOf[*planner.Selection](p)
	return s.Preds
}

// TestNames lists what a live stream must declare for a query, before any
// schema: types once each in pattern order, attributes per read with the
// types they are read on, builtins left out.
func TestNames(t *testing.T) {
	src := &ast.Source{Name: "<input>", Text: "PATTERN SEQ(ANY(A, B) x, !C n, D d, B+ b[], A a) " +
		"WHERE [sym] AND x.price > n.price AND b[i].price > 1 AND avg(b[].vol) > a.ts AND x.price < 9 RETURN a.tag, b"}
	q, err := grammar.ParseQuery(src)
	if err != nil {
		t.Fatal(err)
	}
	n := planner.Names(q)
	if want := []string{"A", "B", "C", "D"}; !slices.Equal(n.Types, want) {
		t.Errorf("types %v, want %v", n.Types, want)
	}
	var got []string
	for _, u := range n.Attrs {
		got = append(got, u.Attr+" on "+strings.Join(u.Types, "|"))
	}
	want := []string{"sym on A|B|C|D", "price on A|B", "price on C", "price on B", "vol on B", "tag on A"}
	if !slices.Equal(got, want) {
		t.Errorf("attributes %v, want %v", got, want)
	}
}

// TestAddedConst checks which checks the typed fast paths read as an
// attribute plus or minus a constant.
func TestAddedConst(t *testing.T) {
	a, b := &planner.Attr{Comp: 0}, &planner.Attr{Comp: 1}
	five := &planner.Const{Value: event.IntValue(5)}
	bin := func(op ast.Op, x, y planner.Expr) planner.Expr { return &planner.Binary{Op: op, X: x, Y: y} }
	tests := []struct {
		name string
		e    planner.Expr
		x    planner.Expr
		sub  bool
		ok   bool
	}{
		{"x + c", bin(ast.OpAdd, a, five), a, false, true},
		{"c + x", bin(ast.OpAdd, five, a), a, false, true},
		{"x - c", bin(ast.OpSub, a, five), a, true, true},
		{"c - x is not x plus a constant", bin(ast.OpSub, five, a), nil, false, false},
		{"x * c", bin(ast.OpMul, a, five), nil, false, false},
		{"x + y", bin(ast.OpAdd, a, b), nil, false, false},
		{"x alone", a, nil, false, false},
	}
	for _, tt := range tests {
		x, c, sub, ok := planner.AddedConst(tt.e)
		if ok != tt.ok || ok && (x != tt.x || sub != tt.sub || !c.IsInt() || c.Int() != 5) || !ok && x != tt.e {
			t.Errorf("%s: AddedConst = %v, %v, %v, %v", tt.name, x, c, sub, ok)
		}
	}
}
