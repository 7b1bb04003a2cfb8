package source

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"io"
	"math/bits"
	"unicode/utf8"
	"unsafe"

	"github.com/sase-cep/sase/event"
)

// csvReadSize is how much of a CSV file is read at once.
const csvReadSize = 1 << 20

// csvRecords reads a CSV file's records as encoding/csv does (a blank
// line is skipped, \r\n ends a line as \n does), numbered by the line they
// start on. A line without a quote is split at its separators in place, in a
// large read buffer; from the first line with a quote on, encoding/csv
// reads the rest, since a quoted field may span lines.
type csvRecords struct {
	lineReader
	comma  rune // the field separator (delimiter)
	fields [][]byte

	cr       *csv.Reader // from the first quote on
	crOffset int         // lines before cr's first
}

func newCSVRecords(r io.Reader, name string, max int, comma rune) *csvRecords {
	return &csvRecords{lineReader: *newLineReader(r, name, max, csvReadSize), comma: comma}
}

// next returns the next record, its fields valid until the next call, and
// the line it starts on; io.EOF after the last one.
func (c *csvRecords) next() ([][]byte, int, error) {
	if c.cr != nil {
		return c.slow()
	}
	text, line, err := c.text()
	if err != nil {
		return nil, 0, err
	}
	return c.record(text, line)
}

// text returns the next line that is not blank, without its line ending,
// in place in the read buffer (valid until the next call, its capacity
// reaching the buffer's end), and its number; io.EOF after the last one.
// Only while the reader reads in place (c.cr is nil).
func (c *csvRecords) text() ([]byte, int, error) {
	for {
		text, ok := c.bufferedLine()
		if !ok {
			var err error
			if text, ok, err = c.nextLine(); err != nil {
				return nil, 0, err
			}
			if !ok {
				return nil, 0, io.EOF
			}
		}
		if len(text) > 0 && text[len(text)-1] == '\n' {
			text = text[:len(text)-1]
		}
		if len(text) > 0 && text[len(text)-1] == '\r' {
			text = text[:len(text)-1] // \r\n, or a last \r before the end, as encoding/csv
		}
		if len(text) > 0 {
			return text, c.line, nil
		}
	}
}

// fastRun appends the events of up to max lines that layout's fast path
// reads whole, each found in the read buffer and read in place: text's
// and the batch loop's common case, in one loop. It stops at the first
// line it does not read (a blank line, a \r\n, a line not buffered
// whole...), which text then frames.
func (c *csvRecords) fastRun(b *builder, layout *csvLayout, batch []*event.Event, max int) []*event.Event {
	comma := byte(c.comma)
	for ; max > 0; max-- {
		rest := c.buf[c.pos:]
		i := bytes.IndexByte(rest, '\n')
		if i <= 0 || i > c.max || rest[i-1] == '\r' {
			break
		}
		e, ok, err := layout.fastEvent(b, rest[:i], comma, c.line+1)
		if !ok || err != nil { // text's line, whose error batch reports
			break
		}
		c.line++
		c.start, c.pos = c.pos, c.pos+i+1
		b.number(e)
		batch = append(batch, e)
	}
	return batch
}

// record splits text, the line text just returned, into its fields, or
// hands it and the rest of the input to encoding/csv when it holds a
// quote (or the separator is not one byte).
func (c *csvRecords) record(text []byte, line int) ([][]byte, int, error) {
	if c.comma >= utf8.RuneSelf { // a multi-byte separator: encoding/csv splits
		c.startSlow()
		return c.slow()
	}
	fields, quoted := split(c.fields[:0], text, byte(c.comma))
	if quoted {
		c.startSlow()
		return c.slow()
	}
	c.fields = fields
	return fields, line, nil
}

// split appends the fields of a line to dst, each capped at its end, or
// reports that the line holds a quote. One pass for separators and quotes,
// eight bytes at a time.
func split(dst [][]byte, text []byte, comma byte) (_ [][]byte, quoted bool) {
	commas, quotes := uint64(comma)*swarOnes, uint64('"')*swarOnes
	start, i := 0, 0
	for ; i+8 <= len(text); i += 8 {
		w := binary.LittleEndian.Uint64(text[i:])
		if zeroBytes(w^quotes) != 0 {
			return dst, true
		}
		for m := zeroBytes(w ^ commas); m != 0; m &= m - 1 {
			j := i + bits.TrailingZeros64(m)/8
			dst = append(dst, text[start:j:j])
			start = j + 1
		}
	}
	for ; i < len(text); i++ {
		switch text[i] {
		case comma:
			dst = append(dst, text[start:i:i])
			start = i + 1
		case '"':
			return dst, true
		}
	}
	return append(dst, text[start:len(text):len(text)]), false
}

// startSlow hands the input from the line just returned on to
// encoding/csv.
func (c *csvRecords) startSlow() {
	c.line--
	rest := []io.Reader{bytes.NewReader(c.buf[c.start:])}
	switch {
	case c.rerr == nil:
		rest = append(rest, c.r)
	case c.rerr != io.EOF:
		rest = append(rest, errReader{c.rerr})
	}
	c.crOffset = c.line
	c.cr = csv.NewReader(&lineLimit{r: io.MultiReader(rest...), name: c.name, max: c.max, line: c.line})
	c.cr.Comma = c.comma
	c.cr.ReuseRecord = true // fields are substrings of a fresh per-record string, so keeping them is safe
	c.cr.FieldsPerRecord = -1
	c.buf = nil // the reader holds what is left of it
}

// slow reads a record with encoding/csv.
func (c *csvRecords) slow() ([][]byte, int, error) {
	rec, err := c.cr.Read()
	if err == io.EOF {
		return nil, 0, io.EOF
	}
	if err != nil {
		return nil, 0, csvError(c.name, err, c.crOffset)
	}
	line, _ := c.cr.FieldPos(0)
	c.fields = views(c.fields[:0], rec)
	return c.fields, line + c.crOffset, nil
}

// views appends rec's fields as byte slices that share their memory.
func views(dst [][]byte, rec []string) [][]byte {
	for _, f := range rec {
		dst = append(dst, unsafe.Slice(unsafe.StringData(f), len(f)))
	}
	return dst
}

// errReader is an input that has failed.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
