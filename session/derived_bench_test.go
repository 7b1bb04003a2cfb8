//go:build unix

package session

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sase-cep/sase/ast"
)

// BenchmarkLiveDerived pipes events into a live stream whose INTO query
// makes a derived event of each, read by one consumer; "direct" runs the
// consumer's query on the input instead: the difference in CPU per event
// is what a live derived stream costs (go test -bench LiveDerived
// -benchtime 2x ./session).
func BenchmarkLiveDerived(b *testing.B) {
	const n = 200_000
	var in bytes.Buffer
	in.WriteString("type,ts,x\n")
	matches := 0
	for i := range n {
		in.WriteString("A," + strconv.Itoa(i) + "," + strconv.Itoa(i%97) + "\n")
		if i%97*2 > 100 {
			matches++
		}
	}
	for _, bb := range []struct{ name, script, summary string }{
		{"derived", "PATTERN A a WITHIN 0 RETURN a.x AS x, a.x * 2 AS y INTO d; PATTERN d e FROM d WHERE e.y > 100 WITHIN 0 RETURN e.x;",
			"(query 2 ended: " + strconv.Itoa(matches) + " matches, 200000 events on d)"},
		{"direct", "PATTERN A a WHERE a.x * 2 > 100 WITHIN 0 RETURN a.x;",
			"(query 1 ended: " + strconv.Itoa(matches) + " matches, 200000 events on s)"},
	} {
		b.Run(bb.name, func(b *testing.B) {
			benchScript(b, in.Bytes(), n, "SET format = count; LOAD '-' AS s;"+bb.script, bb.summary)
		})
	}
}

// benchScript runs script with input on standard input, and reports the
// CPU per input event; its messages must hold summary.
func benchScript(b *testing.B, input []byte, n int, script, summary string) {
	var cpu time.Duration
	var msgs bytes.Buffer
	for b.Loop() {
		msgs.Reset()
		s := New(io.Discard, &msgs, WithStdin(bytes.NewReader(input)))
		s.Set("timing", "off")
		start := cpuTime()
		if err := s.Exec(context.Background(), &ast.Source{Name: "<bench>", Text: script}); err != nil {
			b.Fatal(err)
		}
		if err := s.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - start
	}
	if !bytes.Contains(msgs.Bytes(), []byte(summary)) {
		b.Fatalf("no %q in:\n%s", summary, &msgs)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*n), "cpu-ns/event")
	b.ReportMetric(0, "ns/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
