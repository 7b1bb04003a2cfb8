package source

import (
	"strings"
	"testing"
)

// Each input format registers its names and extensions once; LOAD's
// FORMAT and a file's extension resolve through them.
func TestInputFormats(t *testing.T) {
	if got := strings.Join(InputFormats(), ","); got != "csv,jsonl" {
		t.Errorf("InputFormats() = %s, want csv,jsonl", got)
	}
	for _, tc := range []struct {
		path, format, want, err string
	}{
		{"a.csv", "", "csv", ""},
		{"a.jsonl", "", "jsonl", ""},
		{"a.ndjson", "", "jsonl", ""},
		{"a.json", "", "jsonl", ""},
		{"-", "", "csv", ""},
		{"-", "NDJSON", "jsonl", ""},
		{"a.txt", "CSV", "csv", ""},
		{"a.txt", "", "", "a.txt: cannot tell the format from the extension: write FORMAT csv or FORMAT jsonl"},
		{"a.csv", "xml", "", `unknown format "xml" (valid: csv, jsonl)`},
	} {
		got, err := formatOf(tc.path, tc.format)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
			t.Errorf("formatOf(%q, %q) = %q, %v; want %q, %s", tc.path, tc.format, got, err, tc.want, tc.err)
		}
		if err == nil {
			if f := inputOf(got); f.file == nil || f.lines == nil {
				t.Errorf("%s: registered without a reader", got)
			}
		}
	}
}
