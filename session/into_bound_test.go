package session

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/derive"
	"github.com/sase-cep/sase/source"
)

// TestIntoLoadedBound checks that a loaded INTO keeps at most the events
// that fit in memoryLimit: it kept every match, and a query with many
// (SEQ(stock1 a, stock2 b, stock3 c): 146M) took all the memory, a fatal
// error. Past the bound the statement fails at INTO's name, makes no
// stream, and the script goes on.
func TestIntoLoadedBound(t *testing.T) {
	real := memoryLimit
	defer func() { memoryLimit = real }()
	limit := 1000 * derive.EventBytes(1) // 1,000 events of one column
	memoryLimit = func() (int64, string, bool) { return limit, "half of what a test has", true }
	tests := []struct {
		name, stmt string
		wantErr    string // contained; "" for none
	}{
		{"fits", "PATTERN SEQ(stock1 a, stock2 b) WITHIN 3 RETURN a.price AS p INTO x;", ""},
		{"pattern", "PATTERN SEQ(stock1 a, stock2 b) RETURN a.price AS p INTO x;",
			"<test>:1:58: INTO x: a loaded derived stream is kept in memory, and 1001 events of this one would take about"},
		{"rule", "RULE r: PATTERN SEQ(stock1 a, stock2 b) RETURN a.price AS p INTO x;",
			"rule r: <test>:1:66: INTO x: a loaded derived stream is kept in memory, and 1001 events of this one would take about"},
		{"match_recognize", "SELECT * FROM stocks MATCH_RECOGNIZE (MEASURES A.price AS p ONE ROW PER MATCH PATTERN (A) DEFINE A AS true) AS m INTO x;",
			"<test>:1:119: INTO x: a loaded derived stream is kept in memory, and 1001 events of this one would take about"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			s := New(&out, &errw, WithBuiltinStream(source.GenerateStocks("stocks", source.DefaultStockConfig())))
			if err := s.Set("timing", "off"); err != nil {
				t.Fatal(err)
			}
			text := tt.stmt + " SHOW STREAMS;"
			err := s.Exec(context.Background(), &ast.Source{Name: "<test>", Text: text})
			if tt.wantErr == "" {
				if err != nil || !strings.Contains(out.String(), "x ") {
					t.Fatalf("%v\n%s\n%s", err, out.String(), errw.String())
				}
				return
			}
			if err == nil || !strings.Contains(errw.String(), tt.wantErr) {
				t.Fatalf("error %v, messages %q; want %q", err, errw.String(), tt.wantErr)
			}
			if !strings.Contains(out.String(), "stocks") || strings.Contains(out.String(), "x ") {
				t.Errorf("SHOW STREAMS after it: %q; want stocks and no x", out.String())
			}
		})
	}
}
