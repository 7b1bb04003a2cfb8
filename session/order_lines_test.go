package session

import (
	"slices"
	"testing"
)

// TestAppendLines checks that a live query's output goes out in whole
// lines, each prefixed, however its writes are cut, and that its last
// line gets its line break.
func TestAppendLines(t *testing.T) {
	for _, prefix := range []string{"", "[2] "} {
		m := &orderedOut{prefix: []byte(prefix)}
		var out []byte
		var seen []string
		for _, w := range []string{"ab", "c\nde", "f\ng\nh", "", "\n", "tail"} {
			out = m.appendLines(out, []byte(w))
			seen = append(seen, string(out))
		}
		p := prefix
		want := []string{"", p + "abc\n", p + "abc\n" + p + "def\n" + p + "g\n", p + "abc\n" + p + "def\n" + p + "g\n",
			p + "abc\n" + p + "def\n" + p + "g\n" + p + "h\n", p + "abc\n" + p + "def\n" + p + "g\n" + p + "h\n"}
		if !slices.Equal(seen, want) {
			t.Errorf("prefix %q: after each write\n%q\nwant\n%q", prefix, seen, want)
		}
		if got := string(m.appendLines(out, []byte{'\n'})); got != want[len(want)-1]+p+"tail\n" {
			t.Errorf("prefix %q: at the end %q", prefix, got)
		}
	}
}
