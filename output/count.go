package output

import (
	"strconv"

	"github.com/sase-cep/sase/query"
)

// Count is only the number of matches, one line.
const Count Format = "count"

func init() {
	register(Count, formatSpec{rank: 3, chunks: Counted, new: func(out sink, _ Schema, _ *eventFormat, _ config) Writer {
		return &countWriter{out: out}
	}})
}

// countWriter counts the rows and writes only their number, at Finish:
// the cheapest sink there is, so a query runs at the engine's speed.
type countWriter struct {
	out sink
	n   int64
}

func (c *countWriter) Row([]query.Cell) error {
	c.n++
	return c.out.err
}

// Sync writes nothing: the count is one line, written when it is final.
func (c *countWriter) Sync() error { return c.out.err }

func (c *countWriter) Finish() error {
	return c.out.write(append(strconv.AppendInt(nil, c.n, 10), '\n'))
}

// NewEncoder is nil: a count needs no encoding.
func (c *countWriter) NewEncoder() query.Encode { return nil }

func (c *countWriter) Put(_ [][]byte, rows int) error {
	c.n += int64(rows)
	return c.out.err
}
