package ast

import (
	"slices"
	"testing"
)

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"within", "within", 0},
		{"withn", "within", 1},
		{"sqe", "seq", 1}, // a transposition is one edit
		{"retrun", "return", 1},
		{"ab", "ba", 1},
		{"abc", "ca", 3}, // optimal string alignment: no edit of a transposed pair
		{"kitten", "sitting", 3},
		{"größe", "grösse", 2},
	} {
		if got := editDistance(tt.a, tt.b); got != tt.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
		if got := editDistance(tt.b, tt.a); got != tt.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.b, tt.a, got, tt.d)
		}
	}
}

func TestClosest(t *testing.T) {
	keywords := []string{"WITH", "WITHIN", "WHERE", "SEQ", "SET", "AND", "ANY", "AS", "RETURN"}
	for _, tt := range []struct {
		word string
		want []string
	}{
		{"WITHN", []string{"WITH", "WITHIN"}},
		{"within", []string{"WITHIN", "WITH"}},
		{"withinn", []string{"WITHIN"}},
		{"SQE", []string{"SEQ"}}, // SET is two edits away
		{"an", []string{"AND", "ANY", "AS"}},
		{"a", nil}, // one letter is never a typo of a longer word
		{"RETRUN", []string{"RETURN"}},
		{"SELECT", nil},
		{"", nil},
	} {
		if got := Closest(tt.word, keywords); !slices.Equal(got, tt.want) {
			t.Errorf("Closest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
	if got := Closest("Stock1", []string{"stock2", "stock1", "stock1"}); !slices.Equal(got, []string{"stock1", "stock2"}) {
		t.Errorf("case-insensitive: %q", got)
	}
}
