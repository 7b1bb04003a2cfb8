package session_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sase-cep/sase/session"
)

// TestLiveOrder: several queries on one live stream piped in write their
// lines in one order, by the position in the stream that released each
// match (here its last event's seq), then by query; the same bytes from
// run to run however the pipe and the queries' goroutines are timed.
func TestLiveOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 29))
	var in strings.Builder
	in.WriteString("type,ts,x\n")
	for i := range 20000 {
		fmt.Fprintf(&in, "%c,%d,%d\n", "ABC"[r.IntN(3)], i, r.IntN(100))
	}
	const script = "SET format = csv; LOAD '-' AS s;" +
		"PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 6 RETURN 1 AS q, b.seq AS pos, a.seq AS first;" +
		"PATTERN SEQ(B b, C c) WITHIN 4 RETURN 2 AS q, c.seq AS pos, b.seq AS first;" +
		"PATTERN SEQ(A a, !B n, C c) WITHIN 5 RETURN 3 AS q, c.seq AS pos, a.seq AS first;"
	var first string
	for run := range 4 {
		out := runPiped(t, script, in.String(), 512<<run)
		if run == 0 {
			first = out
			checkLiveOrder(t, out)
		} else if out != first {
			t.Fatalf("run %d wrote other bytes than run 0 (%d and %d bytes)", run, len(out), len(first))
		}
	}
}

// runPiped runs a script whose stream is piped in, written in pieces of
// the given size, and returns its standard output.
func runPiped(t *testing.T, script, input string, piece int) string {
	t.Helper()
	stdout, _ := runPipedNotes(t, script, input, piece)
	return stdout
}

// runPipedNotes is runPiped, which returns the standard error too.
func runPipedNotes(t *testing.T, script, input string, piece int) (string, string) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	go func() {
		defer pw.Close()
		for s := input; len(s) > 0; {
			n := min(piece, len(s))
			if _, err := pw.WriteString(s[:n]); err != nil {
				return
			}
			s = s[n:]
		}
	}()
	s, stdout, stderr := newSession(t, session.WithStdin(pr))
	if err := exec(t, s, script); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if err := s.Wait(context.Background()); err != nil {
		t.Fatalf("Wait = %v\n%s", err, stderr)
	}
	return stdout.String(), stderr.String()
}

// checkLiveOrder checks that out is the queries' headers, then their rows
// ordered by pos, then q, each query's rows of one pos as it wrote them.
func checkLiveOrder(t *testing.T, out string) {
	t.Helper()
	lines := strings.SplitAfter(out, "\n")
	lines = lines[:len(lines)-1]
	const header = "q,pos,first\n"
	if len(lines) < 3 || strings.Join(lines[:3], "") != header+header+header {
		t.Fatalf("output does not start with 3 headers: %q", lines[:min(3, len(lines))])
	}
	rows := lines[3:]
	key := func(line string) (q, pos int64) {
		f := strings.Split(line, ",")
		q, _ = strconv.ParseInt(f[0], 10, 64)
		pos, _ = strconv.ParseInt(f[1], 10, 64)
		return q, pos
	}
	perQuery := map[int64]int{}
	for _, line := range rows {
		q, _ := key(line)
		perQuery[q]++
	}
	if len(perQuery) != 3 || perQuery[1] < 100 || perQuery[2] < 100 || perQuery[3] < 100 {
		t.Fatalf("rows per query: %v", perQuery)
	}
	want := slices.Clone(rows)
	slices.SortStableFunc(want, func(a, b string) int {
		qa, pa := key(a)
		qb, pb := key(b)
		return cmp.Or(cmp.Compare(pa, pb), cmp.Compare(qa, qb))
	})
	for i := range rows {
		if rows[i] != want[i] {
			t.Fatalf("row %d is %q, want %q (by position, then query)", i, rows[i], want[i])
		}
	}
}
