package sase_test

import (
	"context"
	"fmt"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/source"
)

// Compile a query against SASE's generated stock stream and count its
// matches; the rows are valid only during the sink's call.
func Example() {
	stream := source.GenerateStocks("stocks", source.DefaultStockConfig())
	q, err := sase.Compile("PATTERN SEQ(stock1 a, stock2 b) WHERE a.price > b.price + 90 WITHIN 5", stream)
	if err != nil {
		fmt.Println(err)
		return
	}
	var first string
	stats, err := q.Run(context.Background(), stream.All(), func(row []sase.Cell) bool {
		if first == "" {
			first = fmt.Sprintf("a=#%d b=#%d", row[0].Event.Seq, row[1].Event.Seq)
		}
		return true
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(stats.Matches, "matches; the first:", first)
	// Output: 2 matches; the first: a=#4930 b=#4932
}

// A query that names an attribute the stream does not have fails with its
// position and a caret.
func ExampleCompile_error() {
	stream := source.GenerateStocks("stocks", source.DefaultStockConfig())
	_, err := sase.Compile("PATTERN SEQ(stock1 a) WHERE a.prise > 1", stream)
	fmt.Println(err)
	// Output:
	// <query>:1:31: no type of a has attribute "prise" (stock1 has id, price, symbol, volume, ts, seq); did you mean price?
	//     PATTERN SEQ(stock1 a) WHERE a.prise > 1
	//                                   ^
}
