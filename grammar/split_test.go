package grammar

import (
	"slices"
	"testing"
)

// TestStatementEnd checks where the first statement of a text ends: just
// past its ';', or nowhere (-1) while the text holds no complete one.
func TestStatementEnd(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"SHOW STREAMS;", 13},
		{"SHOW STREAMS", -1},
		{"a; b;", 2},
		{"PATTERN (A a; B b);", 19},
		{"PATTERN (A a; B b)", -1},
		{"x = 'a;b';", 10},
		{"x = 'it''s;';", 13},
		{"x = 'open;", -1},
		{"`a;b` \"c;d\";", 12},
		{"-- c;\n;", 7},
		{"-- c;", -1},
		{"/* ; */;", 8},
		{"/* ;", -1},
		{"a - b / c;", 10},
		{"a)) ;", 5}, // stray parentheses do not hide later ends
		{"x = 'é;'; y;", 10},
	}
	for _, tt := range tests {
		got := -1
		if p := Split(tt.text); len(p) > 0 && p[0].Kind == Statement {
			got = p[0].End
		}
		if got != tt.want {
			t.Errorf("Split(%q): first statement ends at %d, want %d", tt.text, got, tt.want)
		}
	}
}

// TestBlank checks which texts hold nothing to run: only white space and
// complete comments (an open block comment is not blank: the text goes on).
func TestBlank(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"", true},
		{" \t\n", true},
		{"-- x\n", true},
		{"-- x", true},
		{"/* x */ -- y\n/* z */", true},
		{"/* x", false},
		{"/* x */ /* y", false},
		{"-", false},
		{"a", false},
		{"/* x */ a", false},
		{`\`, false},
		{"#", false},
	}
	for _, tt := range tests {
		if got := len(Split(tt.text)) == 0; got != tt.want {
			t.Errorf("Split(%q) is blank: %v, want %v", tt.text, got, tt.want)
		}
	}
}

// TestSplit checks every kind of piece and where each one is.
func TestSplit(t *testing.T) {
	type p struct { // a Piece (query's), written unkeyed here
		Kind       PieceKind
		Start, End int
	}
	tests := []struct {
		text string
		want []p
	}{
		{"SHOW STREAMS; USE s", []p{{Statement, 0, 13}, {Unfinished, 14, 19}}},
		{" ; ;", []p{{Statement, 1, 2}, {Statement, 3, 4}}},
		{"/* a */ SHOW STREAMS; /* b", []p{{Statement, 8, 21}, {OpenComment, 22, 26}}},
		{"SHOW /* b", []p{{Unfinished, 0, 9}}},
		{"USE 'open; x;", []p{{Unfinished, 0, 13}}},
		{`\timing off` + "\nSHOW STREAMS;", []p{{Command, 0, 11}, {Statement, 12, 25}}},
		{`SHOW STREAMS; \q`, []p{{Statement, 0, 13}, {Command, 14, 16}}},
		{"-- c\n  \\i x.sase\n", []p{{Command, 7, 16}}},
		// A quote in a command line opens nothing.
		{`\i it's.sase` + "\nUSE s; \\i 'x;\nUSE t;", []p{{Command, 0, 12}, {Statement, 13, 19}, {Command, 20, 26}, {Statement, 27, 33}}},
		{`\` + "\n\\\n;", []p{{Command, 0, 1}, {Command, 2, 3}, {Statement, 4, 5}}},
		// Only where a statement could begin: inside one, '\' is a
		// character the parser rejects.
		{"PATTERN stock1 a\n\\q\n", []p{{Unfinished, 0, 20}}},
		{"PATTERN a \\ ; x", []p{{Statement, 0, 13}, {Unfinished, 14, 15}}},
		{"# x; @", []p{{Statement, 0, 4}, {Unfinished, 5, 6}}},
		{"é # é; \\q", []p{{Statement, 0, 8}, {Command, 9, 11}}},
	}
	for _, tt := range tests {
		var got []p
		for _, piece := range Split(tt.text) {
			got = append(got, p(piece))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q)\n got %v\nwant %v", tt.text, got, tt.want)
		}
	}
}

// BenchmarkSplit cuts a long script: one pass of the lexer, however many
// statements it holds.
func BenchmarkSplit(b *testing.B) {
	var script []byte
	for range 2000 {
		script = append(script, "-- a query\nPATTERN SEQ(A a, B b) WHERE a.x = 'x;y' WITHIN 10;\n\\timing off\n"...)
	}
	text := string(script)
	for b.Loop() {
		if n := len(Split(text)); n != 4000 {
			b.Fatal(n)
		}
	}
}
