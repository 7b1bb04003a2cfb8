package output

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/testkit"
)

// randomValue is any kind of value, strings with the bytes CSV and JSON
// must quote or escape.
func randomValue(r *rand.Rand) event.Value {
	switch r.IntN(6) {
	case 0:
		return event.Value{}
	case 1:
		return event.IntValue(r.Int64N(2001) - 1000)
	case 2:
		return event.FloatValue(r.NormFloat64() * 1e3)
	case 3:
		return event.BoolValue(r.IntN(2) == 0)
	}
	const alphabet = "ab ,\"\n\r\t\\é\x01€"
	var s []byte
	for range r.IntN(6) {
		i := r.IntN(len(alphabet))
		s = append(s, alphabet[i])
	}
	return event.StringValue(string(s))
}

// TestFastPathBytes writes random rows (values of every kind, events that
// share cache slots or are recycled, syncs at random) with JSON Lines and
// CSV, and compares the bytes with a row-by-row encoding without caches
// or buffers: 50,000 rows, 200,000 with -long.
func TestFastPathBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	schema := event.NewSchema()
	for _, a := range []string{"x", "seq", "name"} {
		schema.AddAttr(a)
	}
	for _, ty := range []string{"A", "B\"q"} {
		schema.AddType(ty)
	}
	pool := make([]*event.Event, 3*textCacheSize)
	for i := range pool {
		e := &event.Event{Type: r.IntN(2), TS: int64(i), Seq: int64(i), Attrs: make([]event.Value, r.IntN(4))}
		for k := range e.Attrs {
			e.Attrs[k] = randomValue(r)
		}
		pool[i] = e
	}
	cols := []Column{{Name: "a", Kind: Event}, {Name: "v,\"", Kind: Value}, {Name: "b", Kind: List}, {Name: "", Kind: Value}}
	plain := &eventFormat{}
	plain.extend(schema)
	var wantJSON, wantCSV bytes.Buffer
	wantCSV.WriteString(`a,"v,""",b,""` + "\n")
	var gotJSON, gotCSV bytes.Buffer
	jw := New(JSONL, &gotJSON, Schema{Columns: cols, Events: schema})
	cw := New(CSV, &gotCSV, Schema{Columns: cols, Events: schema})
	for range testkit.Size(50_000, 200_000) {
		pick := func() *event.Event {
			e := pool[r.IntN(len(pool))]
			if r.IntN(1000) == 0 { // recycled: same pointer, another event in the same cache slot
				e.Seq += textCacheSize
				e.TS = e.Seq
			}
			return e
		}
		row := []sase.Cell{{Event: pick()}, {Value: randomValue(r)}, {List: make([]*event.Event, r.IntN(3))}, {Value: randomValue(r)}}
		for k := range row[2].List {
			row[2].List[k] = pick()
		}
		jw.Row(row)
		cw.Row(row)

		b := []byte{'{'}
		for i, c := range row {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(event.AppendJSONString(b, cols[i].Name), ':')
			switch cols[i].Kind {
			case Value:
				b = c.Value.AppendJSON(b)
			case Event:
				b = plain.appendJSON(b, c.Event)
			case List:
				b = append(b, '[')
				for k, e := range c.List {
					if k > 0 {
						b = append(b, ',')
					}
					b = plain.appendJSON(b, e)
				}
				b = append(b, ']')
			}
		}
		wantJSON.Write(append(b, '}', '\n'))

		b = b[:0]
		for i, c := range row {
			if i > 0 {
				b = append(b, ',')
			}
			switch cols[i].Kind {
			case Value:
				if c.Value.Kind() == event.String {
					b = appendCSVString(b, c.Value.Str())
				} else {
					b = append(b, c.Value.String()...)
				}
			case Event:
				b = append(b, strconv.FormatInt(c.Event.Seq, 10)...)
			case List:
				b = append(b, '[')
				for k, e := range c.List {
					if k > 0 {
						b = append(b, ';')
					}
					b = append(b, strconv.FormatInt(e.Seq, 10)...)
				}
				b = append(b, ']')
			}
		}
		wantCSV.Write(append(b, '\n'))
		if r.IntN(5000) == 0 {
			jw.Sync()
			cw.Sync()
		}
	}
	jw.Finish()
	cw.Finish()
	if gotJSON.Len() < 4*spillSize {
		t.Fatalf("only %d bytes of JSON: the test should write several spills", gotJSON.Len())
	}
	for _, c := range []struct {
		name      string
		got, want []byte
	}{{"jsonl", gotJSON.Bytes(), wantJSON.Bytes()}, {"csv", gotCSV.Bytes(), wantCSV.Bytes()}} {
		if !bytes.Equal(c.got, c.want) {
			i := 0
			for i < min(len(c.got), len(c.want)) && c.got[i] == c.want[i] {
				i++
			}
			t.Errorf("%s: %d bytes, want %d; first difference at byte %d: got %q, want %q", c.name, len(c.got), len(c.want), i,
				c.got[max(0, i-40):min(len(c.got), i+40)], c.want[max(0, i-40):min(len(c.want), i+40)])
		}
	}
}
