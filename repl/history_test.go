package repl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/session"
)

func TestHistoryEntry(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"SHOW STREAMS;", "SHOW STREAMS;"},
		{"PATTERN SEQ(stock1 a,\n    stock2 b)\nWITHIN 3;", "PATTERN SEQ(stock1 a, stock2 b) WITHIN 3;"},
		{"PATTERN stock1 a -- the first\nWITHIN 3; -- done", "PATTERN stock1 a WITHIN 3;"},
		{"PATTERN stock1 a /* keep -- this */\nWITHIN 3;", "PATTERN stock1 a /* keep -- this */ WITHIN 3;"},
		{"PATTERN stock1 a /* a\nblock */ WITHIN 3;", "PATTERN stock1 a /* a\nblock */ WITHIN 3;"},
		{"PATTERN stock1 a WHERE a.s = '--not a comment'\n;", "PATTERN stock1 a WHERE a.s = '--not a comment' ;"},
		{"PATTERN stock1 a\r\nWITHIN 3;", "PATTERN stock1 a WITHIN 3;"},
	} {
		if got := historyEntry(tt.text); got != tt.want {
			t.Errorf("historyEntry(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestShellRecords checks that the shell records one entry per statement
// and command, whatever the lines it came in.
func TestShellRecords(t *testing.T) {
	var got []string
	s := session.New(&strings.Builder{}, &strings.Builder{})
	sh := NewShell(s, WithHistory(func(e string) { got = append(got, e) }))
	for _, line := range []string{"SET limit", "  = 3; SET timing", "= off;", "-- only a comment", `\timing`, "SET limit = 1; SET", "limit = 2;", "help", "SET limit = 4; \\timing"} {
		sh.Process(context.Background(), line)
	}
	want := []string{"SET limit = 3;", "SET timing = off;", `\timing`, "SET limit = 1;", "SET limit = 2;", "help", "SET limit = 4;"}
	if !slices.Equal(got, want) {
		t.Errorf("recorded %q\nwant %q", got, want)
	}
}

// TestHistoryFile checks that the file is private, made so if it was not,
// and keeps the entries added, cut to the limit when it grows too long.
func TestHistoryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hist")
	if err := os.WriteFile(path, []byte("SHOW STREAMS;\n\nSHOW TYPES;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, entries, err := openHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(entries, []string{"SHOW STREAMS;", "SHOW TYPES;"}) {
		t.Errorf("entries %q", entries)
	}
	h.add("SET limit = 3;")
	h.close()
	checkMode(t, path)

	fresh := filepath.Join(t.TempDir(), "new")
	h, entries, err = openHistory(fresh)
	if err != nil || len(entries) != 0 {
		t.Fatalf("new file: %v %q", err, entries)
	}
	h.close()
	checkMode(t, fresh)

	var long strings.Builder
	for i := range 2*historyLimit + 1 {
		fmt.Fprintf(&long, "SET limit = %d;\n", i)
	}
	os.WriteFile(path, []byte(long.String()), 0o644)
	h, entries, err = openHistory(path)
	if err != nil || len(entries) != historyLimit || entries[0] != fmt.Sprintf("SET limit = %d;", historyLimit+1) {
		t.Fatalf("cut: %v, %d entries from %q", err, len(entries), entries[0])
	}
	h.add("last")
	h.close()
	checkMode(t, path)
	data, _ := os.ReadFile(path)
	if lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"); len(lines) != historyLimit+1 || lines[historyLimit] != "last" {
		t.Errorf("after the cut the file has %d lines, the last %q", len(lines), lines[len(lines)-1])
	}
}

func checkMode(t *testing.T, path string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v, want 0600", path, info.Mode().Perm())
	}
}
