package repl

import "strings"

// The REPL and scripts cut their input into statements before parsing, so
// that one bad statement does not stop the others (as psql does). The cut
// follows the lexical rules of docs/LANGUAGE.md (Lexical rules): a ';' ends a statement unless
// it is inside parentheses, a quoted name or string, or a comment.

// statementEnd returns the index just past the first ';' of text that ends a
// statement, or -1 if text holds no complete statement.
func statementEnd(text string) int {
	depth := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ';':
			if depth == 0 {
				return i + 1
			}
		case '\'', '`', '"':
			i = quoteEnd(text, i)
		case '-', '/':
			i = commentEnd(text, i)
		}
	}
	return -1
}

// quoteEnd returns the index of the quote closing the one at text[i]
// (a doubled quote inside is an escaped one), or len(text) if it is open.
func quoteEnd(text string, i int) int {
	q := text[i]
	for j := i + 1; j < len(text); j++ {
		if text[j] != q {
			continue
		}
		if j+1 < len(text) && text[j+1] == q {
			j++
			continue
		}
		return j
	}
	return len(text)
}

// commentEnd returns the last index of a comment starting at text[i], or i
// itself when no comment starts there. An open block comment runs to the
// end of the text.
func commentEnd(text string, i int) int {
	if i+1 >= len(text) {
		return i
	}
	switch text[i : i+2] {
	case "--":
		if nl := strings.IndexByte(text[i:], '\n'); nl >= 0 {
			return i + nl
		}
		return len(text)
	case "/*":
		if end := strings.Index(text[i+2:], "*/"); end >= 0 {
			return i + 2 + end + 1
		}
		return len(text)
	}
	return i
}

// skipBlank returns the index of the first byte of text at or after i that
// is neither white space nor inside a comment, and whether text ends inside
// an unterminated block comment.
func skipBlank(text string, i int) (next int, open bool) {
	for i < len(text) {
		switch text[i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			i++
			continue
		case '-', '/':
			if end := commentEnd(text, i); end != i {
				if end == len(text) && text[i] == '/' {
					return end, true
				}
				i = end + 1
				continue
			}
		}
		return i, false
	}
	return len(text), false
}

// isBlank reports whether text holds only white space and complete comments
// (an open block comment is not blank: the statement continues).
func isBlank(text string) bool {
	i, open := skipBlank(text, 0)
	return i == len(text) && !open
}
