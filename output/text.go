package output

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// Table cells are text for a terminal: control characters from the data
// are escaped (a raw ESC would let a log line recolour or move the
// terminal, a raw line break would split a row), and widths are counted
// in terminal columns, not bytes or runes. CSV and JSON Lines stay exact.

// escapeControls rewrites b[start:] so that it holds no control
// character: \n, \r and \t as those escapes; any other C0 control, DEL, a
// C1 control (U+0080-U+009F) and a byte that is not UTF-8 as \xNN. It
// returns b unchanged when there is nothing to escape, the usual case.
func escapeControls(b []byte, start int) []byte {
	i := start
	for i < len(b) && b[i] >= 0x20 && b[i] < 0x7f {
		i++
	}
	if i == len(b) {
		return b
	}
	// Check the rest before copying anything: most non-ASCII text is
	// printable.
	if !needsEscape(b[i:]) {
		return b
	}
	// The escaped text is appended after b and then moved down to start.
	n := len(b)
	for j := start; j < n; {
		c := b[j]
		if c >= 0x20 && c < 0x7f {
			b = append(b, c)
			j++
			continue
		}
		r, size := utf8.DecodeRune(b[j:n])
		switch {
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case r == utf8.RuneError && size <= 1:
			b = appendHexEscape(b, c)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			b = appendHexEscape(b, byte(r))
		default:
			b = append(b, b[j:j+size]...)
		}
		j += size
	}
	return append(b[:start], b[n:]...)
}

func needsEscape(b []byte) bool {
	for len(b) > 0 {
		c := b[0]
		if c >= 0x20 && c < 0x7f {
			b = b[1:]
			continue
		}
		if c < 0x80 {
			return true // C0 or DEL
		}
		r, size := utf8.DecodeRune(b)
		if (r == utf8.RuneError && size <= 1) || r <= 0x9f {
			return true
		}
		b = b[size:]
	}
	return false
}

func appendHexEscape(b []byte, c byte) []byte {
	const hex = "0123456789abcdef"
	return append(b, '\\', 'x', hex[c>>4], hex[c&0xf])
}

// runeWidth is how many terminal columns r takes: 2 for East Asian wide
// and fullwidth characters (CJK, most emoji), 0 for combining marks and
// other zero-width characters, else 1. The width property comes from
// golang.org/x/text/width (Unicode's EastAsianWidth.txt).
func runeWidth(r rune) int {
	switch {
	case r < 0x300:
		return 1 // ASCII and Latin-1 (controls are escaped before this)
	case r == 0x200b || r == 0x200c || r == 0x200d || r == 0x2060 || r == 0xfeff:
		return 0 // zero-width space, (non-)joiner, word joiner, BOM
	case unicode.In(r, unicode.Mn, unicode.Me):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// textWidth is the width of escaped text in terminal columns.
func textWidth(b []byte) int {
	w := 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			w++
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		w += runeWidth(r)
		i += size
	}
	return w
}

// stringWidth is textWidth of a string.
func stringWidth(s string) int {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w
}

// ellipsis marks a cell cut to its column's width.
const ellipsis = "…"

// fit returns b, which is w0 columns wide, if it fits in room columns;
// else the longest prefix that fits in room-1, leaving a column for the
// ellipsis. w is the width of what it returns.
func fit(b []byte, w0, room int) (prefix []byte, w int, cut bool) {
	if w0 <= room {
		return b, w0, false
	}
	limit := room - 1
	i := 0
	for i < len(b) {
		r, size := rune(b[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(b[i:])
		}
		rw := runeWidth(r)
		if w+rw > limit {
			break
		}
		w += rw
		i += size
	}
	return b[:i], w, true
}
