package source

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/sase-cep/sase/event"
)

func init() {
	registerInput(inputFormat{
		names: []string{"csv"},
		file: func(r io.Reader, name string, opts Options, release func()) Source {
			return newCSVFile(r, name, opts, release)
		},
		lines: func() lineDecoder { return newCSVLines() },
	})
}

// LoadCSV reads a CSV stream with a header row (docs/LANGUAGE.md, Events and streams). Every
// header column but the type and timestamp columns is an attribute of every
// type, in header order; cells are typed by event.ParseCell and an empty
// cell is an absent attribute. Columns named seq, ts or timestamp are
// ordinary attributes: the planner resolves those names to the built-ins
// first. A quoted field may span lines.
//
// name (the file's name) prefixes errors, which also give the line. On any
// error the stream is nil: nothing is partially loaded.
func LoadCSV(r io.Reader, name string, opts Options) (*event.Stream, error) {
	return collectTimed(newCSVFile(r, name, opts, nil), opts)
}

// csvFile is a finite CSV source. encoding/csv frames its records, so that
// a quoted field may span lines (a live CSV source frames lines itself).
type csvFile struct {
	decoding
	readOnce
	name   string
	r      io.Reader
	report reporter // on_error = 'skip'
}

func newCSVFile(r io.Reader, name string, opts Options, release func()) *csvFile {
	s := &csvFile{name: name, r: r}
	s.b = newBuilder(name, opts)
	s.release = release
	return s
}

func (s *csvFile) URL() string { return s.name }
func (s *csvFile) Live() bool  { return false }

func (s *csvFile) Read(ctx context.Context, emit func([]*event.Event) bool) error {
	ctx, ok, err := s.begin(ctx)
	if !ok {
		return err
	}
	defer s.end()
	if s.b.ord != nil {
		defer s.b.ord.close()
	}
	recs := newCSVRecords(s.r, s.name, s.b.opts.maxLine(), s.b.opts.delimiter())
	header, _, err := recs.next()
	if err == io.EOF {
		return fmt.Errorf("%s: empty file (want a header row such as type,ts,...)", s.name)
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	names := make([]string, len(header))
	for i, h := range header {
		names[i] = string(h)
	}
	layout, err := newCSVLayout(s.b, names, 1)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	for {
		batch, end, err := s.batch(recs, layout)
		if err != nil {
			return err
		}
		if len(batch) > 0 && !emit(batch) {
			return nil
		}
		if end {
			s.mu.Lock()
			s.report.finish(s.name, s.rejected)
			s.mu.Unlock()
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// batch decodes up to maxBatch records, and says when the file has ended.
func (s *csvFile) batch(recs *csvRecords, layout *csvLayout) (_ []*event.Event, end bool, _ error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	batch := s.b.newBatch(maxBatch)
	// Lines are read in place (fastEvent) unless a reorder stage needs a
	// late line's fields.
	inPlace := s.b.ord == nil && recs.comma < utf8.RuneSelf
	for n := 0; n < maxBatch; n++ {
		if inPlace && recs.cr == nil {
			k := len(batch)
			batch = recs.fastRun(s.b, layout, batch, maxBatch-n)
			s.read += int64(len(batch) - k)
			if n += len(batch) - k; n == maxBatch {
				break
			}
		}
		var e *event.Event
		var rec [][]byte
		var line int
		var rerr, err error
		if inPlace && recs.cr == nil {
			var text []byte
			if text, line, rerr = recs.text(); rerr == nil {
				var ok bool
				if e, ok, err = layout.fastEvent(s.b, text, byte(recs.comma), line); ok && err == nil {
					// The common line, as arrive would take it: no reorder
					// stage (inPlace), never a tick.
					s.read++
					s.b.number(e)
					batch = append(batch, e)
					continue
				}
				if !ok {
					rec, line, rerr = recs.record(text, line)
					if rerr == nil {
						e, err = layout.checked(s.b, rec, line)
					}
				}
			}
		} else {
			rec, line, rerr = recs.next()
			if rerr == nil {
				e, err = layout.checked(s.b, rec, line)
			}
		}
		if rerr == io.EOF {
			end = true
			break
		}
		if rerr != nil {
			return nil, false, rerr
		}
		if err != nil {
			s.read++
			if !s.b.opts.SkipBad {
				return nil, false, err
			}
			s.rejected++
			s.report.skipped(err, s.rejected)
			continue
		}
		if !e.IsTick() {
			s.read++
		}
		now, err := s.b.arrive(e, line, nil, rec)
		if err != nil {
			return nil, false, err
		}
		if now {
			batch = append(batch, e)
		}
	}
	s.b.giveBack()
	if s.b.ord != nil {
		batch = s.b.ord.release(s.b, batch)
		if end {
			batch = s.b.ord.drain(s.b, batch)
		}
	}
	return batch, end, nil
}

// checked builds the event of a record after checking its number of
// fields.
func (l *csvLayout) checked(b *builder, rec [][]byte, line int) (*event.Event, error) {
	if len(rec) != l.width {
		return nil, l.fieldCount(b, len(rec), line)
	}
	return l.event(b, rec, line)
}

// csvLayout is what a CSV header says: the columns of the type and the
// timestamp, and the attribute slot of every other column.
type csvLayout struct {
	width          int
	typeCol, tsCol int
	attrCols       []int
	attrSlots      []int
	roles          []int     // by column: roleType, roleTS or the attribute's slot
	nslots         int       // 1 + the highest slot: the length of Attrs
	dense          bool      // the columns' slots are every slot below nslots
	declared       []bool    // by type id: the header's attributes are declared
	types          typeNames // type cells as written -> type id
}

// newCSVLayout reads a header (found at line) into b's schema.
func newCSVLayout(b *builder, header []string, line int) (*csvLayout, error) {
	header = append([]string(nil), header...) // ReuseRecord would overwrite it
	header[0] = strings.TrimPrefix(header[0], "\ufeff")
	l := &csvLayout{width: len(header), typeCol: -1, tsCol: -1}
	seen := map[string]bool{}
	for i, h := range header {
		h = validUTF8(h)
		switch {
		case h == "":
			return nil, b.errorf(line, "column %d has no name", i+1)
		case seen[h]:
			return nil, b.errorf(line, "duplicate column %q", h)
		case h == b.opts.typeColumn():
			l.typeCol = i
			l.roles = append(l.roles, roleType)
		case h == b.opts.tsColumn():
			l.tsCol = i
			l.roles = append(l.roles, roleTS)
		case len(b.schema.Attrs) >= maxAttrs:
			return nil, b.errorf(line, "column %d would be the stream's attribute number %d, past the bound of %d", i+1, maxAttrs+1, maxAttrs)
		default:
			slot := b.schema.AddAttr(h)
			l.roles = append(l.roles, slot)
			l.attrCols = append(l.attrCols, i)
			l.attrSlots = append(l.attrSlots, slot)
			l.nslots = max(l.nslots, slot+1)
		}
		seen[h] = true
	}
	if l.typeCol < 0 {
		return nil, b.errorf(line, "no type column %q in the header%s", b.opts.typeColumn(), headerHint(header, b.opts, "type_column"))
	}
	if l.tsCol < 0 {
		return nil, b.errorf(line, "no timestamp column %q in the header%s", b.opts.tsColumn(), headerHint(header, b.opts, "ts_column"))
	}
	if b.ord != nil && b.ord.header == nil {
		b.ord.header = header // for the late file
	}
	l.dense = coversSlots(l.nslots, l.attrSlots)
	return l, nil
}

// headerHint says what a header without the type or timestamp column
// holds, and the option that fixes it: delimiter when the header is one
// column that holds a ';' or a tab, else the column option.
func headerHint(header []string, opts Options, option string) string {
	cols := make([]string, len(header))
	for i, h := range header {
		cols[i] = strconv.Quote(validUTF8(h))
	}
	text := " (columns: " + strings.Join(cols, ", ") + ")"
	if len(header) == 1 {
		for _, d := range []string{";", "\t", "|"} {
			if strings.Contains(header[0], d) && opts.delimiter() != []rune(d)[0] {
				name := d
				if d == "\t" {
					name = "tab"
				}
				return text + "; the fields look separated by " + strconv.Quote(d) + ": WITH (delimiter = '" + name + "')"
			}
		}
	}
	return text + "; name the column with WITH (" + option + " = '...')"
}

// event builds the event of one record, its fields views of the input.
// Every column of the header is an attribute of every type that appears
// under it.
func (l *csvLayout) event(b *builder, rec [][]byte, line int) (*event.Event, error) {
	if len(rec[l.typeCol]) == 0 && len(rec[l.tsCol]) != 0 && l.onlyTS(rec) {
		return b.punctuation(rec[l.tsCol], line)
	}
	typ, err := l.typeOf(b, rec[l.typeCol], line)
	if err != nil {
		return nil, err
	}
	// Declared before the ts is checked: a type whose every line is
	// rejected (on_error = 'skip') still has the header's attributes.
	l.declare(b, typ)
	ts, err := b.timestamp(rec[l.tsCol], line)
	if err != nil {
		return nil, err
	}
	e := b.arena.Event(l.nslots)
	e.Type, e.TS = typ, ts
	for j, c := range l.attrCols {
		b.arena.Set(e.Attrs, l.attrSlots[j], parseCell(rec[c]))
	}
	return e, nil
}

// typeOf resolves a record's type cell.
func (l *csvLayout) typeOf(b *builder, cell []byte, line int) (int, error) {
	if cap(cell) >= 8 {
		if typ, ok := l.types.cached(cell); ok {
			return typ, nil
		}
	}
	if typ, ok := l.types.lookup(cell); ok {
		return typ, nil
	}
	typ, err := b.typeID(validUTF8(string(cell)), line)
	if err != nil {
		return 0, err
	}
	l.types.add(cell, typ)
	return typ, nil
}

// declare makes the header's attributes the type's, on its first event.
func (l *csvLayout) declare(b *builder, typ int) {
	if typ >= len(l.declared) {
		l.declared = append(l.declared, make([]bool, typ+1-len(l.declared))...)
	}
	if !l.declared[typ] {
		l.declared[typ] = true
		for _, slot := range l.attrSlots {
			b.schema.Declare(typ, slot)
		}
	}
}

// parseCell is event.ParseCell(validUTF8(cell)), a string a view of cell
// unless it had invalid UTF-8 (event.Arena.Set copies it).
func parseCell(cell []byte) event.Value {
	if i, ok := smallInt(cell); ok {
		return event.IntValue(i)
	}
	if len(cell) == 0 {
		return event.Value{}
	}
	if f, ok := decimal(cell); ok {
		return event.FloatValue(f)
	}
	v := event.ParseCell(unsafe.String(unsafe.SliceData(cell), len(cell)))
	if v.IsString() {
		return event.StringValue(validUTF8(v.Str()))
	}
	return v
}

// onlyTS reports whether a record's attribute cells are all empty: with
// an empty type cell it is a punctuation.
func (l *csvLayout) onlyTS(rec [][]byte) bool {
	for _, c := range l.attrCols {
		if len(rec[c]) != 0 {
			return false
		}
	}
	return true
}

func (l *csvLayout) fieldCount(b *builder, fields, line int) error {
	return b.errorf(line, "%s, header has %d", plural(int64(fields), "field"), l.width)
}

// csvError turns encoding/csv's errors into "file:line: message". A quote
// that is not closed is reported where its record starts, not at the end
// of the file, where encoding/csv finds it.
func csvError(name string, err error, lineOffset int) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return err // the limit on lines, or a failed read: named already
	}
	pe.StartLine += lineOffset
	pe.Line += lineOffset
	if errors.Is(pe.Err, csv.ErrQuote) && pe.StartLine != pe.Line {
		return fmt.Errorf("%s:%d: a quoted field of the record that starts on this line is not closed properly (%w at line %d, column %d)", name, pe.StartLine, pe.Err, pe.Line, pe.Column)
	}
	return fmt.Errorf("%s:%d:%d: %w", name, pe.Line, pe.Column, pe.Err)
}

// headerError is a CSV header that cannot be read: a live producer's
// lines cannot be read without it, so it ends that producer.
type headerError struct{ err error }

func (e headerError) Error() string { return e.err.Error() }

// csvLines parses each line on its own with encoding/csv, fed one line at
// a time: a bad line (an unterminated quote, say) cannot swallow the
// lines after it, as it would in a file.
type csvLines struct {
	feed   lineFeed
	cr     *csv.Reader
	layout *csvLayout
	fields [][]byte
}

func newCSVLines() *csvLines {
	d := &csvLines{}
	d.cr = csv.NewReader(&d.feed)
	d.cr.ReuseRecord = true
	return d
}

func (d *csvLines) fast(b *builder, text []byte, line int) (*event.Event, bool, error) {
	comma := b.opts.delimiter()
	if d.layout == nil || comma >= utf8.RuneSelf {
		return nil, false, nil
	}
	rec := bytes.TrimSuffix(bytes.TrimSuffix(text, []byte{'\n'}), []byte{'\r'})
	if len(rec) == 0 {
		return nil, false, nil // a blank line
	}
	return d.layout.fastEvent(b, rec, byte(comma), line)
}

func (d *csvLines) decode(b *builder, text []byte, line int) (*event.Event, error) {
	comma := b.opts.delimiter()
	if e, ok, err := d.fast(b, text, line); ok {
		return e, err
	}
	if d.layout != nil && comma < utf8.RuneSelf {
		// A line without a quote is read in place, as a file's lines are:
		// by fastEvent, or split.
		rec := bytes.TrimSuffix(bytes.TrimSuffix(text, []byte{'\n'}), []byte{'\r'})
		if len(rec) == 0 {
			return nil, nil // a blank line
		}
		if fields, quoted := split(d.fields[:0], rec, byte(comma)); !quoted {
			d.fields = fields
			if len(fields) != d.layout.width {
				return nil, d.layout.fieldCount(b, len(fields), line)
			}
			return d.layout.event(b, fields, line)
		}
	}
	d.cr.Comma = comma
	d.feed.text = text
	rec, err := d.cr.Read()
	d.feed.text = nil
	if errors.Is(err, io.EOF) {
		return nil, nil // a blank line
	}
	if d.layout == nil {
		if err != nil {
			return nil, headerError{b.errorf(line, "bad CSV header: %v", csvMessage(err))}
		}
		if d.layout, err = newCSVLayout(b, rec, line); err != nil {
			return nil, headerError{err}
		}
		d.cr.FieldsPerRecord = d.layout.width
		return nil, nil
	}
	if errors.Is(err, csv.ErrFieldCount) {
		return nil, d.layout.fieldCount(b, len(rec), line)
	}
	if err != nil {
		return nil, b.errorf(line, "%v", csvMessage(err))
	}
	d.fields = views(d.fields[:0], rec)
	return d.layout.event(b, d.fields, line)
}

// csvMessage is encoding/csv's error without its own line numbers, which
// count the lines of one record here.
func csvMessage(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// lineFeed is the reader csvLines' csv.Reader reads: the current line,
// then io.EOF.
type lineFeed struct{ text []byte }

func (f *lineFeed) Read(p []byte) (int, error) {
	if len(f.text) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.text)
	f.text = f.text[n:]
	return n, nil
}
