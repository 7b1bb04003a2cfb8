package exec_test

import (
	"context"
	"slices"
	"testing"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/internal/randquery"
)

// TestAISIntChecks runs checks between positive singles, which AIS tests
// on int keys without the evaluator, over values of every kind (ints,
// an equal float, a fraction, a string, absent cells, the int extremes):
// every engine must find basic's matches.
func TestAISIntChecks(t *testing.T) {
	stream := "type,ts,p,q,s\n" +
		"A,1,2,1,x\nA,1,5,,y\nB,2,3,2,x\nA,3,2.0,3,x\nB,3,2,x,y\nC,4,4,1,x\n" +
		"A,5,,2,y\nB,6,2.5,5,x\nC,7,3,3,y\nA,8,-9223372036854775808,1,x\nB,9,x,2,x\n" +
		"C,10,9223372036854775807,2,y\nB,11,-1,4,x\nC,12,2,,x\nA,13,3,2,y\nB,14,3,3,y\nC,15,3,4,y\n"
	queries := []string{
		"PATTERN SEQ(A a, B b, C c) WHERE b.p > a.p AND c.p > b.p",
		"PATTERN SEQ(A a, B b, C c) WHERE a.p <= b.p AND c.p != b.p WITHIN 6",
		"PATTERN SEQ(A a, B b, C c) WHERE b.p = a.p AND b.p < c.p",
		"PATTERN SEQ(A a, B b, C c) WHERE a.p >= b.p OR c.p > b.p",
		"PATTERN SEQ(A a, B b, C c) WHERE a.p < b.q AND b.p < c.p AND a.p < c.p WITHIN 8",
		"PATTERN SEQ(A a, B b, C c) WHERE [s] AND b.p > a.p AND c.p > b.p WITHIN 10",
		"PATTERN SEQ(A a, B b, C c) WHERE [s] AND a.p > 1 WITHIN 5",
		"PATTERN SEQ(A a, B b) WHERE b.ts > a.ts AND a.q < b.q",
		"PATTERN SEQ(A a, B b, C c) RETURN c, a",
	}
	for _, q := range queries {
		c := randquery.Case{Name: "intchecks", StreamCSV: stream, Query: q}
		want, err := c.Matches(context.Background(), "basic")
		if err != nil {
			t.Fatalf("%s: basic: %v", q, err)
		}
		if len(want) == 0 {
			t.Errorf("%s: no matches on basic, so nothing is compared", q)
		}
		for _, engine := range sase.EngineNames() {
			got, err := c.Matches(context.Background(), engine)
			if err != nil {
				t.Fatalf("%s: %s: %v", q, engine, err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s finds %v, basic %v", q, engine, got, want)
			}
		}
	}
}
