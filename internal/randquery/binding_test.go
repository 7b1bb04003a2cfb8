package randquery_test

import (
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/randquery"
)

// TestBindingIsCanonical: Binding writes what Canonical makes of the
// row's map (the form every stored expectation has), for unbound
// variables, empty and long closures, names json escapes, names out of
// order and a name twice.
func TestBindingIsCanonical(t *testing.T) {
	ev := func(seq int64) *event.Event { return &event.Event{Seq: seq} }
	evs := func(seqs ...int64) []*event.Event {
		l := []*event.Event{}
		for _, s := range seqs {
			l = append(l, ev(s))
		}
		return l
	}
	col := func(name string, kind sase.ColumnKind) sase.Column { return sase.Column{Name: name, Kind: kind} }
	tests := []struct {
		cols []sase.Column
		row  []sase.Cell
	}{
		{nil, nil},
		{[]sase.Column{col("b", sase.EventColumn), col("a", sase.EventColumn)}, []sase.Cell{{Event: ev(7)}, {Event: ev(-3)}}},
		{[]sase.Column{col("a", sase.EventColumn), col("c", sase.ListColumn), col("d", sase.ListColumn), col("e", sase.ListColumn)},
			[]sase.Cell{{}, {List: evs()}, {List: nil}, {List: evs(1, 20, 300)}}},
		{[]sase.Column{col("x<y", sase.EventColumn), col(`q"\`, sase.EventColumn), col("é&", sase.ListColumn), col("a.b", sase.EventColumn)},
			[]sase.Cell{{Event: ev(1)}, {Event: ev(2)}, {List: evs(3)}, {Event: ev(4)}}},
		{[]sase.Column{col("a", sase.EventColumn), col("b", sase.EventColumn), col("a", sase.ListColumn), col("a", sase.EventColumn)},
			[]sase.Cell{{Event: ev(1)}, {Event: ev(2)}, {List: evs(5, 6)}, {}}},
	}
	for _, tt := range tests {
		m := map[string]any{}
		for i, c := range tt.cols {
			switch {
			case c.Kind == sase.ListColumn && tt.row[i].List != nil:
				seqs := []int64{}
				for _, e := range tt.row[i].List {
					seqs = append(seqs, e.Seq)
				}
				m[c.Name] = seqs
			case c.Kind == sase.EventColumn && tt.row[i].Event != nil:
				m[c.Name] = tt.row[i].Event.Seq
			}
		}
		if got, want := randquery.Binding(tt.cols, tt.row), randquery.Canonical(m); got != want {
			t.Errorf("Binding(%v) = %s, want %s", tt.cols, got, want)
		}
	}
}
