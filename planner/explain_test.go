package planner

import "testing"

// TestDotEscape checks that details with quotes, backslashes and line
// breaks stay inside their DOT string.
func TestDotEscape(t *testing.T) {
	for in, want := range map[string]string{
		`a.s = 'x"y'`: `a.s = 'x\"y'`,
		`a\b`:         `a\\b`,
		"two\nlines":  `two\llines`,
	} {
		if got := DotEscape(in); got != want {
			t.Errorf("DotEscape(%q) = %q, want %q", in, got, want)
		}
	}
}
