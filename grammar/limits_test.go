package grammar

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
)

// deep nests a comparison in n parentheses.
func deep(n int) string {
	return "PATTERN A a WHERE " + strings.Repeat("(", n) + "a.x > 1" + strings.Repeat(")", n)
}

// conjuncts is a WHERE of n comparisons joined by AND.
func conjuncts(n int) string {
	b := []byte("PATTERN A a WHERE a.x > 0")
	for i := 1; i < n; i++ {
		b = strconv.AppendInt(append(b, " AND a.x > "...), int64(i), 10)
	}
	return string(b)
}

// TestParseLimits: texts that overflowed the stack of the parser (issue 30,
// item 5) are refused before it runs, with the place; texts within the
// limits parse, however many statements a script has.
func TestParseLimits(t *testing.T) {
	bad := []struct {
		name, src string
		offset    int
		msg       string
	}{
		{"300000 parentheses", deep(300_000), len("PATTERN A a WHERE ") + MaxDepth, "nested deeper than the limit of 256"},
		{"brackets in a second statement", "SHOW STREAMS; PATTERN A a WHERE " + strings.Repeat("[", 300_000), len("SHOW STREAMS; PATTERN A a WHERE ") + MaxDepth, "nested deeper"},
		{"550000 conjuncts", conjuncts(550_000), 0, "statement is longer than the limit of 256 KiB"},
		{"10000 NOTs", "PATTERN A a WHERE " + strings.Repeat("NOT ", 10_000) + "a.x > 1", len("PATTERN A a WHERE ") + 4*MaxDepth, "prefix operators"},
		{"minus signs inside parentheses", "PATTERN A a WHERE " + strings.Repeat("(", 200) + strings.Repeat("- ", 100) + "1", len("PATTERN A a WHERE ") + 200 + 2*(MaxDepth-200), "nested deeper"},
		{"long second statement", "SHOW STREAMS;\n" + conjuncts(550_000), len("SHOW STREAMS;\n"), "statement is longer"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(&ast.Source{Name: "<input>", Text: tt.src})
			list, ok := err.(ast.ErrorList)
			if !ok || len(list) != 1 {
				t.Fatalf("error %v (%T), want one ast.Error", err, err)
			}
			if list[0].Offset != tt.offset || !strings.Contains(list[0].Msg, tt.msg) {
				t.Errorf("error at %d: %q, want at %d: %q", list[0].Offset, list[0].Msg, tt.offset, tt.msg)
			}
			if c := CompletionContext(tt.src + " AND "); c.Keywords != nil || c.Expect != 0 {
				t.Errorf("completion past the limits: %+v", c)
			}
		})
	}

	// Just within the limits: the deepest nesting, and a chain of ANDs as
	// long as fits, which the builder nests to the left without recursion.
	n := 1
	for len(conjuncts(n*2)) <= MaxStatementBytes {
		n *= 2
	}
	good := []string{deep(MaxDepth), conjuncts(n), strings.Repeat(conjuncts(n/2)+";\n", 4),
		"PATTERN A a WHERE " + strings.Repeat("NOT ", MaxDepth) + "a.x > 1",
		"PATTERN A a WHERE " + strings.Repeat("NOT a.x > 1 AND ", 1000) + "a.x > " + strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200)}
	for _, src := range good {
		stmts, err := Parse(&ast.Source{Name: "<input>", Text: src})
		if err != nil {
			t.Fatalf("%.40q...: %v", src, err)
		}
		if len(stmts) == 0 {
			t.Fatalf("%.40q...: no statement", src)
		}
	}
	stmts, _ := Parse(&ast.Source{Name: "<input>", Text: conjuncts(3)})
	if got, want := stmts[0].(*ast.Query).Where.String(), "a.x > 0 AND a.x > 1 AND a.x > 2"; got != want {
		t.Errorf("chain built as %s, want %s", got, want)
	}
}
