package exec

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// TestChunkerRanges: the chunker hands Put the bytes of the runs the
// merge emits, in their order, as ranges of the results' bufs (not
// copies), one range for runs that follow each other in one result's
// bytes, at most maxRanges a call; a limit ends the last Put at the end of
// the limit-th row, inside a run; a Put that returns false stops it.
func TestChunkerRanges(t *testing.T) {
	type run struct{ res, row, n int } // n rows of result res from its row-th
	alternate := func(runs int) []run {
		var rs []run
		for i := range runs {
			rs = append(rs, run{i % 2, i / 2, 1})
		}
		return rs
	}
	cases := []struct {
		name  string
		sizes []int // rows per result
		runs  []run
		limit int64
		flush []int // flushes after these runs (the merge's, before a free)
		stop  int   // Put returns false at its stop-th call (0: never)
		// want: the ranges of each Put; rows: the rows the Puts took
		want []int
		rows int
	}{
		{name: "one result, joined", sizes: []int{6}, runs: []run{{0, 0, 2}, {0, 2, 3}, {0, 5, 1}}, want: []int{1}, rows: 6},
		{name: "two results, alternating", sizes: []int{6, 4}, runs: []run{{0, 0, 2}, {1, 0, 1}, {0, 2, 1}, {0, 3, 3}, {1, 1, 3}}, want: []int{4}, rows: 10},
		{name: "a flush between", sizes: []int{6, 4}, runs: []run{{0, 0, 2}, {1, 0, 1}, {0, 2, 1}, {0, 3, 3}, {1, 1, 3}}, flush: []int{2}, want: []int{3, 2}, rows: 10},
		{name: "limit inside a run", sizes: []int{6, 4}, runs: []run{{0, 0, 2}, {1, 0, 3}, {0, 2, 4}}, limit: 6, want: []int{3}, rows: 6},
		{name: "limit at a run's end", sizes: []int{6, 4}, runs: []run{{0, 0, 2}, {1, 0, 3}, {0, 2, 4}}, limit: 5, want: []int{2}, rows: 5},
		{name: "limit inside a run, three results", sizes: []int{3, 3, 3}, runs: []run{{2, 0, 1}, {0, 0, 3}, {1, 0, 2}, {2, 1, 2}, {1, 2, 1}}, limit: 5, flush: []int{1}, want: []int{2, 1}, rows: 5},
		{name: "more ranges than a Put takes", sizes: []int{1500, 1500}, runs: alternate(3000), want: []int{maxRanges, maxRanges, 3000 - 2*maxRanges}, rows: 3000},
		{name: "a Put that stops", sizes: []int{1500, 1500}, runs: alternate(3000), stop: 2, want: []int{maxRanges, maxRanges}, rows: 2 * maxRanges},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := make([]*result, len(c.sizes))
			for i, n := range c.sizes {
				r := &result{}
				for j := range n {
					r.buf = fmt.Appendf(r.buf, "%d.%d\n", i, j)
					r.ends = append(r.ends, len(r.buf))
				}
				res[i] = r
			}
			var got strings.Builder
			var ranges []int
			rows := 0
			k := newChunker(&Chunks{Limit: c.limit, Put: func(bufs [][]byte, n int) bool {
				for _, b := range bufs {
					// A range is the result's bytes themselves.
					if !inBuf(res, b) {
						t.Fatalf("a range %q not in a result's buf", b)
					}
					got.Write(b)
				}
				ranges = append(ranges, len(bufs))
				rows += n
				return len(ranges) != c.stop
			}}, &Stats{})
			var want strings.Builder
			left := c.limit
		runs:
			for i, r := range c.runs {
				for j := range r.n {
					if c.limit > 0 && left == 0 {
						break
					}
					left--
					fmt.Fprintf(&want, "%d.%d\n", r.res, r.row+j)
				}
				rs := res[r.res]
				b := 0
				if r.row > 0 {
					b = rs.ends[r.row-1]
				}
				if !k.run(rs, match{n: r.n, b: b, end: rs.ends[r.row+r.n-1], row: r.row}) {
					break
				}
				for _, f := range c.flush {
					if f == i && !k.flush() {
						break runs
					}
				}
			}
			k.flush()
			if c.stop == 0 && got.String() != want.String() {
				t.Errorf("got\n%s\nwant\n%s", head(got.String()), head(want.String()))
			}
			if c.stop > 0 && !strings.HasPrefix(want.String(), got.String()) {
				t.Errorf("stopped: got %q..., not the first rows", head(got.String()))
			}
			if fmt.Sprint(ranges) != fmt.Sprint(c.want) || rows != c.rows || k.stats.Matches != int64(c.rows) {
				t.Errorf("Puts of %v ranges, %d rows (stats %d); want %v, %d", ranges, rows, k.stats.Matches, c.want, c.rows)
			}
		})
	}
}

// inBuf says whether b is a part of one of the results' bufs.
func inBuf(res []*result, b []byte) bool {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	for _, r := range res {
		start := uintptr(unsafe.Pointer(unsafe.SliceData(r.buf)))
		if len(b) > 0 && p >= start && p+uintptr(len(b)) <= start+uintptr(len(r.buf)) {
			return true
		}
	}
	return false
}

func head(s string) string { return s[:min(len(s), 120)] }
