package output

import (
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
)

// table writes rows of values (strings, or ints when a cell parses as
// one) as a table with opts.
func table(names []string, rows [][]event.Value, opts ...Option) string {
	cols := make([]Column, len(names))
	for i, n := range names {
		cols[i] = Column{Name: n, Kind: Value}
	}
	var out strings.Builder
	w := New(Table, &out, Schema{Columns: cols}, opts...)
	cells := make([]sase.Cell, len(names))
	for _, r := range rows {
		for i, v := range r {
			cells[i] = sase.Cell{Value: v}
		}
		w.Row(cells)
	}
	w.Finish()
	return out.String()
}

func strs(ss ...string) []event.Value {
	vs := make([]event.Value, len(ss))
	for i, s := range ss {
		vs[i] = event.StringValue(s)
	}
	return vs
}

func TestTable(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		rows  [][]event.Value
		opts  []Option
		want  string
	}{
		{name: "control characters are escaped", names: []string{"line", "n"},
			rows: [][]event.Value{
				{event.StringValue("a\nb\tc\r"), event.IntValue(1)},
				{event.StringValue("\x1b[31mred\x1b[0m"), event.IntValue(22)},
				{event.StringValue("nul\x00 del\x7f c1\u009b bad\xff"), event.IntValue(3)},
			},
			want: "" +
				" line                           | n\n" +
				"--------------------------------+----\n" +
				` a\nb\tc\r                      |  1` + "\n" +
				` \x1b[31mred\x1b[0m             | 22` + "\n" +
				` nul\x00 del\x7f c1\x9b bad\xff |  3` + "\n"},
		{name: "a name with a line break", names: []string{"a\nb"}, rows: [][]event.Value{strs("x")},
			want: ` a\nb` + "\n------\n x\n"},
		{name: "wide runes take two columns", names: []string{"city", "note"},
			rows: [][]event.Value{strs("東京", "x"), strs("Zürich", "é"), strs("서울", "e\u0301")},
			want: "" +
				" city   | note\n" +
				"--------+------\n" +
				" 東京   | x\n" +
				" Zürich | é\n" +
				" 서울   | e\u0301\n"},
		// The rule under the header, the widest line, is as wide as the
		// terminal.
		{name: "fit to the terminal", names: []string{"id", "message", "user"},
			rows: [][]event.Value{
				{event.IntValue(1), event.StringValue("a rather long message that does not fit"), event.StringValue("ann")},
				{event.IntValue(2), event.StringValue("短い"), event.StringValue("bob")},
			},
			opts: []Option{WithWidth(30)},
			want: "" +
				" id | message          | user\n" +
				"----+------------------+------\n" +
				"  1 | a rather long m… | ann\n" +
				"  2 | 短い             | bob\n"},
		{name: "wide runes cut at a column boundary", names: []string{"k", "v"},
			rows: [][]event.Value{strs("a", "東京東京東京東京")},
			opts: []Option{WithWidth(13)},
			want: " k | v\n---+---------\n a | 東京東…\n"},
		{name: "expanded", names: []string{"a", "price", "note"},
			rows: [][]event.Value{{event.StringValue("stock1@17"), event.IntValue(5), event.StringValue("x\ny")}, {event.StringValue("stock1@33"), event.IntValue(12), event.Value{}}},
			opts: []Option{WithExpanded()},
			want: "" +
				"-[ RECORD 1 ]----\n" +
				"a     | stock1@17\n" +
				"price | 5\n" +
				`note  | x\ny` + "\n" +
				"-[ RECORD 2 ]----\n" +
				"a     | stock1@33\n" +
				"price | 12\n" +
				"note  | \n"},
		{name: "expanded with long names", names: []string{"a_rather_long_name", "b"},
			rows: [][]event.Value{strs("1", "2")},
			opts: []Option{WithExpanded()},
			want: "" +
				"-[ RECORD 1 ]------+--\n" +
				"a_rather_long_name | 1\n" +
				"b                  | 2\n"},
		{name: "expanded fits values to the terminal", names: []string{"k"},
			rows: [][]event.Value{strs("0123456789abcdef")},
			opts: []Option{WithExpanded(), WithWidth(12)},
			want: "-[ RECORD 1 ]-\nk | 01234567\n    89abcdef\n"},
		{name: "expanded, no rows", names: []string{"k"}, opts: []Option{WithExpanded()}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := table(tt.names, tt.rows, tt.opts...); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestTableWidthsStay checks that the columns keep the first page's
// widths on a terminal: a wider string on a later page is cut there, and
// only there; a number or a string off a terminal is never cut (issue 29:
// 10042 was shown as "100…", in a file too).
func TestTableWidthsStay(t *testing.T) {
	rows := make([][]event.Value, tablePage+2)
	for i := range rows {
		rows[i] = []event.Value{event.StringValue("short"), event.IntValue(7)}
	}
	rows[tablePage] = []event.Value{event.StringValue("a much longer cell"), event.IntValue(10042)}
	for _, tt := range []struct {
		opts []Option
		want string
	}{
		{[]Option{WithWidth(80)}, " a mu… | 10042"},
		{nil, " a much longer cell | 10042"},
	} {
		got := table([]string{"a", "b"}, rows, tt.opts...)
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if len(lines) != tablePage+4 {
			t.Fatalf("%d lines", len(lines))
		}
		if lines[2] != " short | 7" {
			t.Errorf("first row %q", lines[2])
		}
		if lines[2+tablePage] != tt.want {
			t.Errorf("later row %q, want %q", lines[2+tablePage], tt.want)
		}
	}
}

// TestTableNeverCutsNumbers: fitted to a narrow terminal, a column of
// numbers stays as wide as its widest number.
func TestTableNeverCutsNumbers(t *testing.T) {
	got := table([]string{"name", "events"}, [][]event.Value{{event.StringValue("a long stream name here"), event.IntValue(1000000)}}, WithWidth(16))
	if !strings.Contains(got, "1000000") {
		t.Errorf("number cut:\n%s", got)
	}
}

// TestOtherFormatsExact checks that csv and jsonl keep control characters
// as they are (quoted or JSON-escaped), unlike the table.
func TestOtherFormatsExact(t *testing.T) {
	sc := Schema{Columns: []Column{{Name: "s", Kind: Value}}}
	for f, want := range map[Format]string{CSV: "s\n\"a\nb\x1b\"\n", JSONL: `{"s":"a\nb\u001b"}` + "\n"} {
		var out strings.Builder
		w := New(f, &out, sc)
		w.Row([]sase.Cell{{Value: event.StringValue("a\nb\x1b")}})
		w.Finish()
		if out.String() != want {
			t.Errorf("%s: %q, want %q", f, out.String(), want)
		}
	}
}

func TestFitColumns(t *testing.T) {
	tests := []struct {
		widths []int
		room   int
		want   []int
	}{
		{[]int{3, 10, 4}, 20, []int{3, 10, 4}},
		{[]int{3, 30, 20}, 30, []int{3, 14, 13}},
		{[]int{2, 2, 40}, 10, []int{2, 2, 6}},      // not below minColumn
		{[]int{50, 50}, 20, []int{10, 10}},         // equal shares
		{[]int{9, 9, 9, 9}, 10, []int{6, 6, 6, 6}}, // too narrow: minColumn each
	}
	for _, tt := range tests {
		got := append([]int(nil), tt.widths...)
		fitColumns(got, tt.room)
		if !slices.Equal(got, tt.want) {
			t.Errorf("fitColumns(%v, %d) = %v, want %v", tt.widths, tt.room, got, tt.want)
		}
	}
}

func TestRuneWidth(t *testing.T) {
	for _, tt := range []struct {
		s string
		w int
	}{{"abc", 3}, {"東京", 4}, {"ｶﾀｶﾅ", 4}, {"ＡＢ", 4}, {"e\u0301", 1}, {"🙂", 2}, {"a\u200bb", 2}, {"…", 1}} {
		if got := stringWidth(tt.s); got != tt.w {
			t.Errorf("width of %q = %d, want %d", tt.s, got, tt.w)
		}
	}
}
