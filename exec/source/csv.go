package source

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sase-cep/sase/exec/event"
)

// LoadCSV reads a CSV stream with a header row (spec §1, §4b). Every header
// column but the type and timestamp columns is an attribute of every type,
// in header order; cells are typed by event.ParseCell and an empty cell is
// an absent attribute. Columns named seq, ts or timestamp are ordinary
// attributes: the planner resolves those names to the built-ins first.
//
// name (the file's name) prefixes errors, which also give the line. On any
// error the stream is nil: nothing is partially loaded.
func LoadCSV(r io.Reader, name string, opts Options) (*event.Stream, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true // fields are substrings of a fresh per-record string, so keeping them is safe
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file (want a header row such as type,ts,...)", name)
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	header = append([]string(nil), header...) // ReuseRecord would overwrite it
	header[0] = strings.TrimPrefix(header[0], "\ufeff")
	cr.FieldsPerRecord = len(header)

	b := newBuilder(name, opts)
	typeCol, tsCol := -1, -1
	var attrCols, attrSlots []int
	seen := map[string]bool{}
	for i, h := range header {
		switch {
		case h == "":
			return nil, fmt.Errorf("%s:1: column %d has no name", name, i+1)
		case seen[h]:
			return nil, fmt.Errorf("%s:1: duplicate column %q", name, h)
		case h == opts.typeColumn():
			typeCol = i
		case h == opts.tsColumn():
			tsCol = i
		default:
			attrCols = append(attrCols, i)
			attrSlots = append(attrSlots, b.schema.AddAttr(h))
		}
		seen[h] = true
	}
	if typeCol < 0 {
		return nil, fmt.Errorf("%s:1: no type column %q in the header", name, opts.typeColumn())
	}
	if tsCol < 0 {
		return nil, fmt.Errorf("%s:1: no timestamp column %q in the header", name, opts.tsColumn())
	}
	b.newType = func(id int) {
		for _, slot := range attrSlots {
			b.schema.Declare(id, slot)
		}
	}

	nattrs := len(attrCols)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if errors.Is(err, csv.ErrFieldCount) {
			// Read returns the record with this error, so we can count.
			line, _ := cr.FieldPos(0)
			return nil, fmt.Errorf("%s:%d: %d fields, header has %d", name, line, len(rec), len(header))
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		typ, err := b.typeID(rec[typeCol], line)
		if err != nil {
			return nil, err
		}
		ts, err := b.timestamp(rec[tsCol], line)
		if err != nil {
			return nil, err
		}
		e := b.alloc.event(nattrs)
		e.Type, e.TS = typ, ts
		// A fresh schema numbers the attribute columns 0..nattrs-1 in
		// order, so column attrCols[j] fills slot j.
		for j, c := range attrCols {
			e.Attrs[j] = event.ParseCell(rec[c])
		}
		b.add(e)
	}
	return b.stream(name), nil
}

// csvError turns encoding/csv's errors into "file:line: message".
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", name, err)
	}
	return fmt.Errorf("%s:%d:%d: %w", name, pe.Line, pe.Column, pe.Err)
}
