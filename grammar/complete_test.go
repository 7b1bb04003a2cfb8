package grammar_test

import (
	"reflect"
	"testing"

	"github.com/sase-cep/sase/grammar"
)

// TestCompletionContext checks what the parser says fits at the cursor;
// the shell's tests check the candidates it makes of it.
func TestCompletionContext(t *testing.T) {
	tests := []struct {
		text string
		want grammar.Completion
	}{
		{"SHOW T", grammar.Completion{Word: "T", Keywords: []string{"TYPES"}}},
		{"use ", grammar.Completion{Expect: grammar.ExpectStream}},
		{"DESCRIBE x", grammar.Completion{Word: "x", Expect: grammar.ExpectStream | grammar.ExpectType}},
		{"PATTERN SEQ(A a, B+ b[]) FROM s WHERE b.", grammar.Completion{
			Expect: grammar.ExpectAttribute, Stream: "s", Var: "b",
			Vars: []grammar.PatternVar{{Name: "a", Types: []string{"A"}}, {Name: "b", Types: []string{"B"}, Closure: true}},
		}},
		{"PATTERN A a WHERE a.geo.co", grammar.Completion{
			Word: "geo.co", Expect: grammar.ExpectAttribute, Var: "a",
			Vars: []grammar.PatternVar{{Name: "a", Types: []string{"A"}}},
		}},
		{"PATTERN A a WHERE [geo.", grammar.Completion{Word: "geo.", Expect: grammar.ExpectStreamAttribute}},
		{"PATTERN SEQ(A a, B+ b[]) WHERE b[i].geo.x.", grammar.Completion{
			Word: "geo.x.", Expect: grammar.ExpectAttribute, Var: "b",
			Vars: []grammar.PatternVar{{Name: "a", Types: []string{"A"}}, {Name: "b", Types: []string{"B"}, Closure: true}},
		}},
		{"PATTERN SEQ(A a, O", grammar.Completion{Word: "O", Keywords: []string{"OR"}, Opens: []string{"OR"}, Expect: grammar.ExpectType}},
		{"pattern ", grammar.Completion{Keywords: []string{"seq", "any", "and", "or"}, Opens: []string{"seq", "any", "and", "or"}, Expect: grammar.ExpectType}},
		{"PATTERN SEQ(A a) WHERE a.x > 1 O", grammar.Completion{Word: "O", Keywords: []string{"OR"}}},
		{"SET format = j", grammar.Completion{Word: "j", Expect: grammar.ExpectSettingValue, Key: "format"}},
		{"STOP QUERY ", grammar.Completion{Expect: grammar.ExpectQueryID}},
		{"LOAD 'data/x", grammar.Completion{Word: "data/x", Expect: grammar.ExpectPath}},
		{"LISTEN 'tcp", grammar.Completion{}},
		{"USE `my str", grammar.Completion{Word: "`my str", Expect: grammar.ExpectStream}},
		{"PATTERN A a WHERE a.`x``y", grammar.Completion{
			Word: "`x``y", Expect: grammar.ExpectAttribute, Var: "a",
			Vars: []grammar.PatternVar{{Name: "a", Types: []string{"A"}}},
		}},
	}
	for _, tt := range tests {
		got := grammar.CompletionContext(tt.text)
		if !reflect.DeepEqual(fields(got), fields(tt.want)) {
			t.Errorf("CompletionContext(%q) = %+v\nwant %+v", tt.text, fields(got), fields(tt.want))
		}
	}
}

// TestCompletionKeywordCase checks that keywords follow the case typed,
// or the last keyword's.
func TestCompletionKeywordCase(t *testing.T) {
	for text, want := range map[string]string{"": "LEN", "use s; pattern A a where a.": "len", "Pattern A a where a.l": "len", "PATTERN A a WHERE a.L": "LEN", "PATTERN A a WHERE a.x": ""} {
		c := grammar.CompletionContext(text)
		if got, _ := c.Keyword("LEN"); got != want {
			t.Errorf("CompletionContext(%q).Keyword(LEN) = %q, want %q", text, got, want)
		}
	}
}

// fields drops the unexported keyword case.
func fields(c grammar.Completion) []any {
	return []any{c.Word, c.Keywords, c.Opens, c.Expect, c.Stream, c.Var, c.Key, c.Vars}
}
