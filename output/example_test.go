package output_test

import (
	"context"
	"os"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/source"
)

// A front end writes a query's matches as JSON Lines: the schema is the
// query's columns and the stream's names.
func Example() {
	cfg := source.DefaultStockConfig()
	cfg.Events = 100
	stream := source.GenerateStocks("stocks", cfg)
	q, err := sase.Compile("PATTERN SEQ(stock1 a, stock2 b) WHERE a.price > b.price WITHIN 5 RETURN a, b.price", stream)
	if err != nil {
		panic(err)
	}
	var cols []output.Column
	for _, c := range q.Columns() {
		kind := output.Value
		if c.Kind == sase.EventColumn {
			kind = output.Event
		}
		cols = append(cols, output.Column{Name: c.Name, Kind: kind})
	}
	w := output.New(output.JSONL, os.Stdout, output.Schema{Columns: cols, Events: stream.Schema})
	q.Run(context.Background(), stream.All(), func(row []sase.Cell) bool { return w.Row(row) == nil })
	w.Finish()
	// Output:
	// {"a":{"type":"stock1","ts":68,"seq":68,"id":68,"symbol":1,"price":71,"volume":421},"b.price":39}
	// {"a":{"type":"stock1","ts":89,"seq":89,"id":89,"symbol":1,"price":97,"volume":394},"b.price":76}
	// {"a":{"type":"stock1","ts":89,"seq":89,"id":89,"symbol":1,"price":97,"volume":394},"b.price":84}
}
