package grammar

import (
	"slices"
	"testing"
)

// TestCompleteMatchRecognize checks that completion inside a
// MATCH_RECOGNIZE offers its words where its grammar takes them.
func TestCompleteMatchRecognize(t *testing.T) {
	const q = "SELECT * FROM stocks MATCH_RECOGNIZE ("
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"SELECT * FROM stocks MATCH", []string{"MATCH_RECOGNIZE"}},
		{q + "PA", []string{"PARTITION", "PATTERN"}},
		{q + "PARTITION BY symbol O", []string{"ONE", "ORDER"}},
		{"SELECT * FROM ", nil},
		{q + "ORDER BY ts ", []string{"after", "all", "asc", "desc", "measures", "one", "pattern"}},
		{q + "PATTERN (A B+) W", []string{"WITHIN"}},
		{q + "PATTERN (A B+) D", []string{"DEFINE"}},
		{q + "PATTERN (A B+) DEFINE B AS B.price > P", []string{"PREV"}},
		{q + "ALL ROWS PER MATCH AFTER MATCH SKIP ", []string{"past", "to"}},
		{"explain select * from stocks match_recognize (measures cl", []string{"classifier"}},
	} {
		got := CompletionContext(tt.text).Keywords
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q: %v, want %v", tt.text, got, tt.want)
		}
	}
}
