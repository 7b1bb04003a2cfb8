package rowpattern_test

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/rowpattern"
)

// quadratic is a query whose rows are quadratic in a partition's: each
// row starts a match to the partition's end, and every matched row is
// output.
const quadratic = "SELECT p, m, l FROM t MATCH_RECOGNIZE (PARTITION BY p ORDER BY id MEASURES MATCH_NUMBER() AS m, LAST(id) AS l " +
	"ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW PATTERN (A B*) DEFINE A AS true, B AS true)"

// partitions is a table of parts partitions of n rows each.
func partitions(parts, n int) string {
	var b strings.Builder
	b.WriteString("p,id")
	for p := range parts {
		for i := range n {
			fmt.Fprintf(&b, ";%d,%d", p, i)
		}
	}
	return b.String()
}

// TestParallelBufferBound: on several workers, a batch of partitions held
// every row it output until the batch was emitted, so partitions with
// many rows took all the memory (4 partitions of 1,500 rows: 4.5M rows,
// some 300 MB). A partition whose rows pass maxBuffered is matched again
// as the batch is emitted, its rows streamed: the rows are those of one
// worker, in order, and the heap stays far below what they would take.
func TestParallelBufferBound(t *testing.T) {
	t.Run("same rows", func(t *testing.T) {
		defer rowpattern.SetMaxBuffered(1 << 10)()
		events, schema := table(partitions(5, 30))
		for _, query := range []string{quadratic, strings.Replace(quadratic, "ALL ROWS", "ONE ROW", 1)} {
			q, err := compile(t, schema, query)
			if err != nil {
				t.Fatal(err)
			}
			for _, limit := range []int{0, 1000} {
				var want string
				for _, workers := range []int{1, 2, 3} {
					var b strings.Builder
					rows := 0
					_, err := q.Run(context.Background(), events, workers, func(row []event.Value, _ *event.Event) bool {
						for _, v := range row {
							b.Write(v.AppendJSON(nil))
							b.WriteByte(',')
						}
						b.WriteByte('\n')
						rows++
						return limit == 0 || rows < limit
					})
					if err != nil {
						t.Fatal(err)
					}
					if workers == 1 {
						want = b.String()
					} else if b.String() != want {
						t.Errorf("%s, limit %d: %d workers' rows differ from one's", query, limit, workers)
					}
				}
			}
		}
	})
	t.Run("heap", func(t *testing.T) {
		defer rowpattern.SetMaxBuffered(1 << 20)()
		events, schema := table(partitions(4, 1500))
		q, err := compile(t, schema, quadratic)
		if err != nil {
			t.Fatal(err)
		}
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		heap := func() int64 { metrics.Read(sample); return int64(sample[0].Value.Uint64()) }
		base := heap()
		var peak atomic.Int64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				peak.Store(max(peak.Load(), heap()-base))
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
		var rows int64
		st, err := q.Run(context.Background(), events, 2, func([]event.Value, *event.Event) bool { rows++; return true })
		close(stop)
		<-sampled
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(4 * 1500 * 1501 / 2); rows != want || st.Output != want {
			t.Errorf("%d rows (stats %d), want %d", rows, st.Output, want)
		}
		// The rows would take 4.5M * (a value of 16 bytes * 3 + 32) = 360 MB.
		if p := peak.Load(); p > 64<<20 {
			t.Errorf("the heap grew by %d MB, want at most 64", p>>20)
		}
	})
}

// TestRunCancel: a loaded run checked its context between partitions
// only, so Ctrl-C (or SIGTERM) left a long partition running to its end
// (the quadratic query on 10,000 rows: minutes). It ends after the match
// whose rows the cancel interrupted now.
func TestRunCancel(t *testing.T) {
	defer rowpattern.SetMaxBuffered(1 << 16)() // two workers give a partition up soon
	events, schema := table(partitions(2, 2000))
	q, err := compile(t, schema, quadratic)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		ctx, cancel := context.WithCancel(context.Background())
		rows := 0
		_, err := q.Run(ctx, events, workers, func([]event.Value, *event.Event) bool {
			if rows++; rows == 10 {
				cancel()
			}
			return true
		})
		cancel()
		// One match's rows at most after the cancel, on one worker; on two
		// the batch's workers stop at their next start row, and none is
		// emitted.
		if !errors.Is(err, context.Canceled) || rows > 10+2000 {
			t.Errorf("%d workers: error %v after %d rows; want context.Canceled within a match's rows of the cancel", workers, err, rows)
		}
	}
}
