package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
	"time"
	"unsafe"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/source"
)

// IOResult is one input or output run of the io suite.
type IOResult struct {
	Rows    int64 // matches written, or events read
	Bytes   int64 // text written or read
	Elapsed time.Duration
	CPU     time.Duration // the process's, GC included; 0 where not measured
	Faults  int64         // the process's page faults during the run; 0 where not measured
	// PerEvent is the heap a loaded event takes beyond its attribute
	// values (0 for output runs).
	PerEvent float64
}

// counter is an io.Writer that keeps only the count of bytes.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// MeasureOutput runs query on stream with the auto engine and writes
// every match in format through a 64 KB bufio.Writer (as the session's
// standard output is) to a byte counter. The time includes the engine's.
func MeasureOutput(stream *event.Stream, query string, format output.Format) (IOResult, error) {
	q, err := Compile(stream, query, "auto")
	if err != nil {
		return IOResult{}, err
	}
	runtime.GC()
	var n counter
	bw := bufio.NewWriterSize(&n, 64<<10)
	start, cpu, faults := time.Now(), CPUTime(), PageFaults()
	w := output.New(format, bw, outputSchema(q, stream))
	stats, err := q.Run(context.Background(), stream.All(), func(row []sase.Cell) bool { return w.Row(row) == nil })
	if err == nil {
		err = w.Finish()
	}
	if err == nil {
		err = bw.Flush()
	}
	return IOResult{Rows: stats.Matches, Bytes: n.n, Elapsed: time.Since(start), CPU: CPUTime() - cpu, Faults: PageFaults() - faults}, err
}

// outputSchema is the schema of q's rows on stream, for a writer.
func outputSchema(q *sase.Query, stream *event.Stream) output.Schema {
	return output.Schema{Columns: q.Columns(), Events: stream.Schema}
}

// MeasureLoad loads data with load and reports the rows/s and the heap
// each event takes beyond its attribute values (its Event, its pointer in
// the stream, and what loading leaves behind).
func MeasureLoad(data []byte, load func(io.Reader, string, source.Options) (*event.Stream, error)) (IOResult, error) {
	return measureEvents(int64(len(data)), func() (*event.Stream, error) {
		return load(bytes.NewReader(data), "bench", source.Options{})
	})
}

func measureEvents(size int64, build func() (*event.Stream, error)) (IOResult, error) {
	// An event.Arena's garbage takes a collection a level to free (event
	// blocks, then the value blocks they keep, then text): the heap the
	// build starts from must not shrink under it.
	for range 3 {
		runtime.GC()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start, cpu, faults := time.Now(), CPUTime(), PageFaults()
	s, err := build()
	elapsed, cpu, faults := time.Since(start), CPUTime()-cpu, PageFaults()-faults
	if err != nil {
		return IOResult{}, err
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	var values int64
	for _, e := range s.Events {
		values += int64(len(e.Attrs))
	}
	n := int64(len(s.Events))
	perEvent := (float64(after.HeapAlloc) - float64(before.HeapAlloc) - float64(values)*float64(unsafe.Sizeof(event.Value{}))) / float64(n)
	runtime.KeepAlive(s)
	runtime.KeepAlive(build) // and its input, which is not the events' memory
	return IOResult{Rows: n, Bytes: size, Elapsed: elapsed, CPU: cpu, Faults: faults, PerEvent: perEvent}, nil
}

func (r IOResult) took() (time.Duration, bool) { return r.Elapsed, false }

// IOCase is a named run of the io suite.
type IOCase struct {
	Name string
	IOResult
}

// runIO prints the io suite: W1's matches written in each output format,
// and 1M stock rows loaded from CSV and JSON Lines, and generated.
func runIO(w io.Writer) ([]IOCase, error) {
	var out []IOCase
	fmt.Fprintln(w, "== io (W1's matches written to a byte counter, engine time included; 1M stock rows loaded from memory;")
	fmt.Fprintf(w, "   %s; page faults are fewer than a fresh process's where memory freed by a run before is reused)\n", medianNote)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\trows\tbytes\ttime\trows/s\tbytes/s\trows/CPU-s\tfaults\tbytes/event\t")
	row := func(name string, r IOResult) {
		out = append(out, IOCase{Name: name, IOResult: r})
		secs := r.Elapsed.Seconds()
		per := ""
		if r.PerEvent > 0 {
			per = fmt.Sprintf("%.0f + attrs", r.PerEvent)
		}
		perCPU := ""
		if r.CPU > 0 {
			perCPU = si(float64(r.Rows) / r.CPU.Seconds())
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%sB/s\t%s\t%d\t%s\t\n", name, r.Rows, si(float64(r.Bytes))+"B",
			r.Elapsed.Round(time.Millisecond), si(float64(r.Rows)/secs), si(float64(r.Bytes)/secs), perCPU, r.Faults, per)
	}
	stocks := Stocks(1_000_000, 0)()
	for _, f := range []output.Format{output.Count, output.CSV, output.JSONL} {
		r, err := median(func() (IOResult, error) { return MeasureOutput(stocks, W1, f) })
		if err != nil {
			return nil, fmt.Errorf("io: W1 %s: %w", f, err)
		}
		row("W1 --format "+string(f), r)
	}
	cfg := source.DefaultStockConfig()
	cfg.Events = 1_000_000
	r, err := median(func() (IOResult, error) {
		return measureEvents(0, func() (*event.Stream, error) { return source.GenerateStocks("stocks", cfg), nil })
	})
	if err != nil {
		return nil, err
	}
	row("GENERATE STOCKS 1M", r)
	for _, in := range []struct {
		name  string
		write func(io.Writer, source.StockConfig) error
		load  func(io.Reader, string, source.Options) (*event.Stream, error)
	}{{"LOAD csv 1M", source.WriteStocksCSV, source.LoadCSV}, {"LOAD jsonl 1M", source.WriteStocksJSONL, source.LoadJSONL}} {
		var data bytes.Buffer
		if err := in.write(&data, cfg); err != nil {
			return nil, err
		}
		r, err := median(func() (IOResult, error) { return MeasureLoad(data.Bytes(), in.load) })
		if err != nil {
			return nil, fmt.Errorf("io: %s: %w", in.name, err)
		}
		row(in.name, r)
	}
	if err := tw.Flush(); err != nil {
		return nil, err
	}
	fmt.Fprintln(w)
	return out, nil
}
