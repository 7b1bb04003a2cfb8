package source

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sase-cep/sase/event"
)

// LoadCSV reads a CSV stream with a header row (docs/LANGUAGE.md, Events and streams). Every header
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
	b := newBuilder(name, opts)
	layout, err := newCSVLayout(b, header, 1)
	if err != nil {
		return nil, err
	}
	cr.FieldsPerRecord = layout.width
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil && !errors.Is(err, csv.ErrFieldCount) {
			return nil, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			// Read returns the record with ErrFieldCount, so we can count.
			return nil, layout.fieldCount(b, rec, line)
		}
		e, err := layout.event(b, rec, line)
		if err != nil {
			return nil, err
		}
		b.add(e)
	}
	return b.stream(name), nil
}

// csvLayout is what a CSV header says: the columns of the type and the
// timestamp, and the attribute slot of every other column.
type csvLayout struct {
	width          int
	typeCol, tsCol int
	attrCols       []int
	attrSlots      []int
	nslots         int    // 1 + the highest slot: the length of Attrs
	declared       []bool // by type id: the header's attributes are declared
}

// newCSVLayout reads a header (found at line) into b's schema.
func newCSVLayout(b *builder, header []string, line int) (*csvLayout, error) {
	header = append([]string(nil), header...) // ReuseRecord would overwrite it
	header[0] = strings.TrimPrefix(header[0], "\ufeff")
	l := &csvLayout{width: len(header), typeCol: -1, tsCol: -1}
	seen := map[string]bool{}
	for i, h := range header {
		switch {
		case h == "":
			return nil, b.errorf(line, "column %d has no name", i+1)
		case seen[h]:
			return nil, b.errorf(line, "duplicate column %q", h)
		case h == b.opts.typeColumn():
			l.typeCol = i
		case h == b.opts.tsColumn():
			l.tsCol = i
		default:
			slot := b.schema.AddAttr(h)
			l.attrCols = append(l.attrCols, i)
			l.attrSlots = append(l.attrSlots, slot)
			l.nslots = max(l.nslots, slot+1)
		}
		seen[h] = true
	}
	if l.typeCol < 0 {
		return nil, b.errorf(line, "no type column %q in the header", b.opts.typeColumn())
	}
	if l.tsCol < 0 {
		return nil, b.errorf(line, "no timestamp column %q in the header", b.opts.tsColumn())
	}
	return l, nil
}

// event builds the event of one record. Every column of the header is an
// attribute of every type that appears under it.
func (l *csvLayout) event(b *builder, rec []string, line int) (*event.Event, error) {
	typ, err := b.typeID(rec[l.typeCol], line)
	if err != nil {
		return nil, err
	}
	ts, err := b.timestamp(rec[l.tsCol], line)
	if err != nil {
		return nil, err
	}
	if typ >= len(l.declared) {
		l.declared = append(l.declared, make([]bool, typ+1-len(l.declared))...)
	}
	if !l.declared[typ] {
		l.declared[typ] = true
		for _, slot := range l.attrSlots {
			b.schema.Declare(typ, slot)
		}
	}
	e := b.alloc.event(l.nslots)
	e.Type, e.TS = typ, ts
	for j, c := range l.attrCols {
		e.Attrs[l.attrSlots[j]] = event.ParseCell(rec[c])
	}
	return e, nil
}

func (l *csvLayout) fieldCount(b *builder, rec []string, line int) error {
	return b.errorf(line, "%d fields, header has %d", len(rec), l.width)
}

// csvError turns encoding/csv's errors into "file:line: message".
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", name, err)
	}
	return fmt.Errorf("%s:%d:%d: %w", name, pe.Line, pe.Column, pe.Err)
}
