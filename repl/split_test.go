package repl

import "testing"

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
	}
	for _, tt := range tests {
		if got := statementEnd(tt.text); got != tt.want {
			t.Errorf("statementEnd(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

func TestIsBlank(t *testing.T) {
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
	}
	for _, tt := range tests {
		if got := isBlank(tt.text); got != tt.want {
			t.Errorf("isBlank(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
