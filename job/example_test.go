package job_test

import (
	"context"
	"fmt"
	"os"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/compiler"
	"github.com/sase-cep/sase/job"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/source"
)

// A job runs a compiled query over a stream's events into a writer, up to
// a limit, and says how it ended.
func Example() {
	cfg := source.DefaultStockConfig()
	cfg.Events = 100
	stream := source.GenerateStocks("stocks", cfg)
	q, err := sase.Compile("PATTERN SEQ(stock1 a, stock2 b) WHERE a.price > b.price WITHIN 5 RETURN a.seq, b.price", stream)
	if err != nil {
		panic(err)
	}
	w := output.New(output.CSV, os.Stdout, output.Schema{Columns: []output.Column{{Name: "a.seq"}, {Name: "b.price"}}})
	sum, err := job.New(job.Config{Query: compiler.Of(q), Source: job.Loaded(stream.All()), Sink: w, Limit: 2}).Run(context.Background())
	fmt.Println(sum.State, sum.Matches, err)
	// Output:
	// a.seq,b.price
	// 68,39
	// 89,76
	// ended at the limit 2 <nil>
}
