package output

import (
	"io"
	"testing"
)

// Every format registers itself once, in listing order, and a format
// whose rows workers hand on in chunks has a writer that takes them.
func TestFormatRegistry(t *testing.T) {
	want := []Format{Table, CSV, JSONL, Count}
	if len(Formats) != len(want) {
		t.Fatalf("Formats = %v, want %v", Formats, want)
	}
	for i, f := range want {
		if Formats[i] != f {
			t.Errorf("Formats[%d] = %s, want %s", i, Formats[i], f)
		}
	}
	if got := FormatList(); got != "table, csv, jsonl or count" {
		t.Errorf("FormatList() = %q", got)
	}
	for _, tc := range []struct {
		c    Chunks
		want string
	}{{Encoded, "csv or jsonl"}, {Counted, "count"}, {OneByOne, "table"}} {
		if got := ListOf(FormatsWith(tc.c)); got != tc.want {
			t.Errorf("ListOf(FormatsWith(%d)) = %q, want %q", tc.c, got, tc.want)
		}
	}
	sc, _ := outputRow()
	for _, tc := range []struct {
		f          Format
		unlimited  bool // takes chunks without a limit
		underLimit bool // and under one
	}{
		{Table, false, false},
		{CSV, true, true},
		{JSONL, true, true},
		{Count, true, false},
	} {
		if got := tc.f.TakesChunks(0); got != tc.unlimited {
			t.Errorf("%s.TakesChunks(0) = %v, want %v", tc.f, got, tc.unlimited)
		}
		if got := tc.f.TakesChunks(5); got != tc.underLimit {
			t.Errorf("%s.TakesChunks(5) = %v, want %v", tc.f, got, tc.underLimit)
		}
		if _, chunked := New(tc.f, io.Discard, sc).(Chunked); tc.unlimited && !chunked {
			t.Errorf("%s takes chunks but its writer is not Chunked", tc.f)
		}
	}
}
