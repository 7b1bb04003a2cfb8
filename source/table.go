package source

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/sase-cep/sase/event"
)

// The hidden columns a table's rows get before the CSV loader reads them:
// NUL cannot start a header a user writes, so they never clash with one.
const (
	tableTypeColumn = "\x00type"
	tableTSColumn   = "\x00ts"
)

// loadTable loads a plain table as a SQL engine would (docs/LANGUAGE.md
// §10, LOAD ... WITH (type = 't', ts_column = ”)): every row is of type
// opts.Table (when set), and with RowTS its ts is its 0-based row number.
// The rows are rewritten with those columns in front and read by the CSV
// loader, so that cells mean what they mean in any CSV stream.
func loadTable(path string, opts Options) (*event.Stream, Stats, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Stats{}, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma = opts.delimiter()
	r.FieldsPerRecord = -1
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Comma = r.Comma
	rowTS := opts.RowTS
	var rows int64
	for line := 0; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, Stats{}, fmt.Errorf("%s: %w", path, err)
		}
		var front []string
		if line == 0 {
			if opts.Table != "" {
				front = append(front, tableTypeColumn)
			}
			if rowTS {
				front = append(front, tableTSColumn)
			}
		} else {
			if opts.Table != "" {
				front = append(front, opts.Table)
			}
			if rowTS {
				front = append(front, strconv.FormatInt(rows, 10))
			}
			rows++
		}
		if err := w.Write(append(front, rec...)); err != nil {
			return nil, Stats{}, err
		}
	}
	w.Flush()
	o := opts
	if opts.Table != "" {
		o.TypeColumn = tableTypeColumn
	}
	if rowTS {
		o.TSColumn = tableTSColumn
	}
	o.Table, o.RowTS = "", false
	s, err := LoadCSV(&buf, path, o)
	if err != nil {
		return nil, Stats{}, err
	}
	return s, Stats{Read: rows, Used: rows}, nil
}
