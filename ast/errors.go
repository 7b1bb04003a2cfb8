package ast

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Source is the text that statements were parsed from: a REPL input, a -c
// argument or a script file. Offsets in spans are byte offsets into Text.
type Source struct {
	Name string // shown in errors: "<input>", "<stdin>" or a file path
	Text string
}

// Position resolves a byte offset to a 1-based line and column (columns
// count characters, not bytes). It is computed on demand, as go/token does.
func (s *Source) Position(offset int) (line, col int) {
	if offset > len(s.Text) {
		offset = len(s.Text)
	}
	if offset < 0 {
		offset = 0
	}
	start := strings.LastIndexByte(s.Text[:offset], '\n') + 1
	line = strings.Count(s.Text[:start], "\n") + 1
	col = utf8.RuneCountInString(s.Text[start:offset]) + 1
	return line, col
}

// lineAt returns the text of the line containing offset.
func (s *Source) lineAt(offset int) string {
	if offset > len(s.Text) {
		offset = len(s.Text)
	}
	start := strings.LastIndexByte(s.Text[:offset], '\n') + 1
	end := strings.IndexByte(s.Text[offset:], '\n')
	if end < 0 {
		end = len(s.Text)
	} else {
		end += offset
	}
	return strings.TrimSuffix(s.Text[start:end], "\r")
}

// Error is a message about a place in a source.
type Error struct {
	Src    *Source
	Offset int
	Msg    string
}

// Error formats the error as "name:LINE:COL: message", then the source line
// and a caret under the column.
func (e *Error) Error() string {
	if e.Src == nil {
		return e.Msg
	}
	line, col := e.Src.Position(e.Offset)
	text, at := clip(e.Src.lineAt(e.Offset), col-1)
	var caret strings.Builder
	i := 0
	for _, r := range text {
		if i >= at {
			break
		}
		if r == '\t' {
			caret.WriteByte('\t')
		} else {
			caret.WriteByte(' ')
		}
		i++
	}
	caret.WriteByte('^')
	return fmt.Sprintf("%s:%d:%d: %s\n    %s\n    %s", e.Src.Name, line, col, e.Msg, text, caret.String())
}

// maxShown bounds the runes of a source line an error shows: a statement
// may be one line of a quarter megabyte.
const maxShown = 160

// clip cuts a long line to maxShown runes around rune index col, marking
// the cuts with "…", and returns col's index in the cut line.
func clip(line string, col int) (string, int) {
	runes := []rune(line)
	if len(runes) <= maxShown {
		return line, col
	}
	from := max(0, min(col-maxShown/2, len(runes)-maxShown))
	to := from + maxShown
	out := string(runes[from:to])
	if to < len(runes) {
		out += "…"
	}
	if from > 0 {
		return "…" + out, col - from + 1
	}
	return out, col
}

// ErrorList is a list of errors, sorted by position when reported.
type ErrorList []*Error

// Add appends an error at offset.
func (l *ErrorList) Add(src *Source, offset int, format string, args ...any) {
	*l = append(*l, &Error{Src: src, Offset: offset, Msg: fmt.Sprintf(format, args...)})
}

// Sort orders the list by position, then message; duplicates at the same
// position are kept once.
func (l *ErrorList) Sort() {
	sort.SliceStable(*l, func(i, j int) bool {
		a, b := (*l)[i], (*l)[j]
		if a.Offset != b.Offset {
			return a.Offset < b.Offset
		}
		return a.Msg < b.Msg
	})
	out := (*l)[:0]
	for i, e := range *l {
		if i > 0 && e.Offset == out[len(out)-1].Offset && e.Msg == out[len(out)-1].Msg {
			continue
		}
		out = append(out, e)
	}
	*l = out
}

// Error joins the messages, one per paragraph.
func (l ErrorList) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Err returns nil for an empty list, else the sorted list as an error.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	l.Sort()
	return l
}
