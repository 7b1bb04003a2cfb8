package sase_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/internal/randquery"
	"github.com/sase-cep/sase/planner"
	"github.com/sase-cep/sase/source"
)

// fuzzSeeds are issue 16's reproducers: timestamps near the ends of int64
// and windows that reach past them or do not fit.
var fuzzSeeds = []struct{ query, csv string }{
	{"PATTERN SEQ(A a) WITHIN 1000000", "type,ts\nA,-9223372036854775802\nA,-9223372036854775802\n"},
	{"PATTERN SEQ(A a, B b, !C c) WITHIN 9223372036854775807", "type,ts,x\nA,1,5\nB,2,6\nC,3,7\nA,4,1\nB,5,2\n"},
	{"PATTERN SEQ(A a, B+ b[]) WITHIN 1e30", "type,ts,x\nA,1,5\nB,2,6\nB,3,7\n"},
	{"PATTERN SEQ(A a, B b) WITHIN 9223372036854775807 hours", "type,ts\nA,1\nB,2\n"},
	{"PATTERN SEQ(A a, B b, !C c) WITHIN 10", "type,ts\nA,9223372036854775800\nB,9223372036854775803\nC,9223372036854775807\n"},
	{"PATTERN SEQ(!C c, A a, B b)", "type,ts\nC,-9223372036854775808\nA,-9223372036854775808\nB,5\nC,10\n"},
	{"PATTERN SEQ(A a, B+ b[]) WHERE skip-till-any-match WITHIN 10", "type,ts\nA,9223372036854775800\nB,9223372036854775806\nB,9223372036854775807\n"},
	// The pattern algebra (LANGUAGE.md §9): nesting, OR, AND, optional, {n,m}.
	{"PATTERN SEQ(A a, OR(B b, AND(C c, D d)), !C n, A e) WHERE [x] WITHIN 9", "type,ts,x\nA,1,5\nC,2,5\nD,2,5\nB,3,5\nC,4,5\nA,5,5\n"},
	{"PATTERN SEQ(A? a, !C n, B{1,2} b[], D? d, A e) WITHIN 9223372036854775807", "type,ts\nA,-9223372036854775808\nB,-9223372036854775808\nB,9223372036854775806\nA,9223372036854775807\n"},
	{"PATTERN SEQ(A a, SEQ(B b, C* c[], D d)?, A e) WHERE count(c[]) < 2 WITHIN 10", "type,ts\nA,9223372036854775800\nB,9223372036854775801\nC,9223372036854775802\nD,9223372036854775807\nA,9223372036854775807\n"},
}

// FuzzEngines runs a query on a small stream on every engine and compares
// the matches with basic's, as multisets: no engine may panic, find other
// matches, or reject a query another compiles. The case is made from
// choices by the differential test's generator, with extreme timestamps,
// huge windows and strategies (with an odd number of choices: a v3
// pattern, LANGUAGE.md §9; with an odd last choice: int64's ends and
// arithmetic that may overflow, which stops a run, so that a wrapped
// value shows as other matches); a non-empty query is run on csv as written
// instead (the reproducers, and what the fuzzer makes of them).
//
//	go test -run x -fuzz FuzzEngines -fuzztime 1m .
func FuzzEngines(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte{}, s.query, s.csv)
	}
	r := rand.New(rand.NewPCG(16, 9))
	for i := range 64 {
		choices := make([]byte, 128+i%2)
		for i := range choices {
			choices[i] = byte(r.IntN(256))
		}
		f.Add(choices, "", "")
	}
	f.Fuzz(func(t *testing.T, choices []byte, query, csv string) {
		c := randquery.Case{Name: "fuzz", Query: query, StreamCSV: csv}
		if query == "" {
			opts := []randquery.Option{randquery.Extremes(), randquery.Strategies()}
			if len(choices)%2 == 1 {
				opts = append(opts, randquery.Nested())
			}
			if len(choices) > 0 && choices[len(choices)-1]&1 == 1 {
				opts = append(opts, randquery.Overflows())
			}
			c = randquery.Generate(randquery.Bytes(choices), opts...)
		}
		stream, err := source.LoadCSV(strings.NewReader(c.StreamCSV), "fuzz.csv", source.Options{})
		if err != nil {
			return // not a stream: the loaders' business
		}
		stream.Name = "s"
		// A text the fuzzer wrote may ask for an astronomic number of
		// sequences; a case basic cannot finish is not compared.
		run := func(engine string) ([]string, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return randquery.Matches(ctx, stream, c.Query, engine)
		}
		want, wantErr := run("basic")
		var rt *planner.RuntimeError
		if errors.As(wantErr, &rt) || errors.Is(wantErr, context.DeadlineExceeded) {
			return
		}
		for _, e := range sase.Engines {
			if e.Name == "basic" {
				continue
			}
			got, err := run(e.Name)
			switch {
			case errors.As(err, &rt):
				continue // engines evaluate predicates on different candidates
			case (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error():
				t.Fatalf("%s: error %v, basic %v\nquery: %s\nstream:\n%s", e.Name, err, wantErr, c.Query, c.StreamCSV)
			case !slices.Equal(got, want):
				t.Fatalf("%s differs from basic\nquery: %s\nstream:\n%s\n%s: %d %v\nbasic: %d %v",
					e.Name, c.Query, c.StreamCSV, e.Name, len(got), got, len(want), want)
			}
		}
	})
}
