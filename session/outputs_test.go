package session

import (
	"slices"
	"strings"
	"testing"
)

// TestLineSink checks that a background query's output reaches stdout in
// whole lines, each prefixed, however its writes are cut.
func TestLineSink(t *testing.T) {
	for _, prefix := range []string{"", "[2] "} {
		var out strings.Builder
		s := &lineSink{o: &outputs{}, dst: &out, prefix: []byte(prefix)}
		var seen []string
		for _, w := range []string{"ab", "c\nde", "f\ng\nh", "", "\n", "tail"} {
			s.Write([]byte(w))
			seen = append(seen, out.String())
		}
		s.close()
		p := prefix
		want := []string{"", p + "abc\n", p + "abc\n" + p + "def\n" + p + "g\n", p + "abc\n" + p + "def\n" + p + "g\n",
			p + "abc\n" + p + "def\n" + p + "g\n" + p + "h\n", p + "abc\n" + p + "def\n" + p + "g\n" + p + "h\n"}
		if !slices.Equal(seen, want) {
			t.Errorf("prefix %q: after each write\n%q\nwant\n%q", prefix, seen, want)
		}
		if got := out.String(); got != want[len(want)-1]+p+"tail\n" {
			t.Errorf("prefix %q: after close %q", prefix, got)
		}
	}
}
