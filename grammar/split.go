package grammar

import (
	"strings"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/grammar/gen"
	"github.com/sase-cep/sase/query"
)

// The shell and scripts cut their input into statements before parsing, so
// that one bad statement does not stop the others (as psql does). Split
// cuts with the parser's own lexer: a ';' ends a statement exactly when it
// is a SEMI token outside parentheses, never inside a string, a quoted name
// or a comment.

// A Piece is one part of a script as Split cuts it (query.Piece), of a
// kind (query.PieceKind).
type (
	Piece     = query.Piece
	PieceKind = query.PieceKind
)

// The kinds of Piece.
const (
	Statement   = query.Statement
	Unfinished  = query.Unfinished
	Command     = query.Command
	OpenComment = query.OpenComment
)

// Split cuts text into its statements and backslash command lines, in
// order. A character the lexer cannot read (other than a command's '\')
// belongs to the statement it is in, or begins one; the parser reports it.
func Split(text string) []Piece {
	at := &cursor{text: text}
	input := antlr.NewInputStream(text)
	lx := gen.NewSaseLexer(input)
	bad := &badChars{lx: lx}
	lx.RemoveErrorListeners()
	lx.AddErrorListener(bad)

	var pieces []Piece
	start, depth := -1, 0 // the byte offset of the current statement; -1 between statements
	for {
		t := lx.NextToken()
		// A character the lexer skipped before t may begin a statement, or
		// a command line.
		if start < 0 && len(bad.runes) > 0 {
			start = at.byteOf(bad.runes[0])
			bad.runes = bad.runes[:0]
			if text[start] == '\\' {
				end := len(text)
				if nl := strings.IndexByte(text[start:], '\n'); nl >= 0 {
					end = start + nl
				}
				pieces = append(pieces, Piece{Kind: Command, Start: start, End: end})
				if end == len(text) {
					return pieces
				}
				// The lexer has read on into the command line (maybe to the
				// end, in a quote): lex again from the line break.
				lx.SetInputStream(input)
				input.Seek(at.runeOf(end))
				start = -1
				continue
			}
		}
		bad.runes = bad.runes[:0]

		switch t.GetTokenType() {
		case antlr.TokenEOF:
			if start >= 0 {
				pieces = append(pieces, Piece{Kind: Unfinished, Start: start, End: len(text)})
			}
			return pieces
		case gen.SaseLexerUNTERMINATED_COMMENT:
			if start < 0 {
				return append(pieces, Piece{Kind: OpenComment, Start: at.byteOf(t.GetStart()), End: len(text)})
			}
		case gen.SaseLexerLPAREN:
			depth++
		case gen.SaseLexerRPAREN:
			depth = max(depth-1, 0) // a stray ')' does not hide later ends
		case gen.SaseLexerSEMI:
			if depth == 0 {
				if start < 0 {
					start = at.byteOf(t.GetStart())
				}
				pieces = append(pieces, Piece{Kind: Statement, Start: start, End: at.byteOf(t.GetStop() + 1)})
				start = -1
				continue
			}
		}
		if start < 0 {
			start = at.byteOf(t.GetStart())
		}
	}
}

// cursor maps ANTLR's positions, rune indexes, to byte offsets of text and
// back, for positions that only grow. Invalid UTF-8 decodes to one rune
// per byte, as in the []rune conversion of antlr.NewInputStream.
type cursor struct {
	text          string
	runes, offset int
}

func (c *cursor) step() {
	_, n := utf8.DecodeRuneInString(c.text[c.offset:])
	c.offset += n
	c.runes++
}

func (c *cursor) byteOf(r int) int {
	for c.runes < r {
		c.step()
	}
	return c.offset
}

func (c *cursor) runeOf(offset int) int {
	for c.offset < offset {
		c.step()
	}
	return c.runes
}

// badChars collects where the lexer met characters it cannot read.
type badChars struct {
	antlr.DefaultErrorListener
	lx    *gen.SaseLexer
	runes []int
}

func (b *badChars) SyntaxError(antlr.Recognizer, any, int, int, string, antlr.RecognitionException) {
	b.runes = append(b.runes, b.lx.TokenStartCharIndex)
}

// TokenSpans returns where text's tokens are, as byte offsets, in order;
// what lies between them the lexer skipped (blanks, comments) or could not
// read.
func TokenSpans(text string) []ast.Span {
	at := &cursor{text: text}
	toks := lex(text)
	spans := make([]ast.Span, len(toks))
	for i, t := range toks {
		spans[i] = ast.Span{Start: at.byteOf(t.GetStart()), End: at.byteOf(t.GetStop() + 1)}
	}
	return spans
}
