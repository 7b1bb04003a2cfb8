package grammar

import (
	"slices"
	"strings"

	"github.com/antlr4-go/antlr/v4"

	"github.com/sase-cep/sase/grammar/gen"
)

// The shell and scripts cut their input into statements before parsing, so
// that one bad statement does not stop the others (as psql does). Split
// cuts with the parser's own lexer: a ';' ends a statement exactly when it
// is a SEMI token outside parentheses, never inside a string, a quoted name
// or a comment.

// PieceKind says what a Piece of a script is.
type PieceKind uint8

const (
	// Statement is a statement up to and including the ';' that ends it.
	Statement PieceKind = iota
	// Unfinished is a statement the text ends inside of (no ';' yet, or an
	// open string, quoted name or comment); it runs to the end of the text.
	Unfinished
	// Command is a backslash command line such as `\i file.sase`: a '\'
	// where a statement could begin starts one, and it runs to the end of
	// its line (the line break is not part of it). It is not lexed, so a
	// quote in a file name opens nothing.
	Command
	// OpenComment is a block comment the text ends inside of where a
	// statement could begin: the text goes on but holds no statement yet.
	OpenComment
)

// A Piece is one part of a script as Split cuts it, text[Start:End] (byte
// offsets). The blank text between pieces, white space and complete
// comments, belongs to none.
type Piece struct {
	Kind       PieceKind
	Start, End int
}

// Split cuts text into its statements and backslash command lines, in
// order. A character the lexer cannot read (other than a command's '\')
// belongs to the statement it is in, or begins one; the parser reports it.
func Split(text string) []Piece {
	offs := runeOffsets(text)
	input := antlr.NewInputStream(text)
	lx := gen.NewSaseLexer(input)
	bad := &badChars{lx: lx}
	lx.RemoveErrorListeners()
	lx.AddErrorListener(bad)

	var pieces []Piece
	start, depth := -1, 0 // the current statement's first rune; -1 between statements
	for {
		t := lx.NextToken()
		// A character the lexer skipped before t may begin a statement, or
		// a command line.
		if start < 0 && len(bad.runes) > 0 {
			if off := offs[bad.runes[0]]; text[off] == '\\' {
				end := len(text)
				if nl := strings.IndexByte(text[off:], '\n'); nl >= 0 {
					end = off + nl
				}
				pieces = append(pieces, Piece{Command, off, end})
				if end == len(text) {
					return pieces
				}
				// The lexer has read on into the command line (maybe to the
				// end, in a quote): lex again from the line break.
				resume, _ := slices.BinarySearch(offs, end)
				lx.SetInputStream(input)
				input.Seek(resume)
				bad.runes = bad.runes[:0]
				continue
			}
			start = bad.runes[0]
		}
		bad.runes = bad.runes[:0]

		switch t.GetTokenType() {
		case antlr.TokenEOF:
			if start >= 0 {
				pieces = append(pieces, Piece{Unfinished, offs[start], len(text)})
			}
			return pieces
		case gen.SaseLexerUNTERMINATED_COMMENT:
			if start < 0 {
				return append(pieces, Piece{OpenComment, offs[t.GetStart()], len(text)})
			}
		case gen.SaseLexerLPAREN:
			depth++
		case gen.SaseLexerRPAREN:
			depth = max(depth-1, 0) // a stray ')' does not hide later ends
		case gen.SaseLexerSEMI:
			if depth == 0 {
				if start < 0 {
					start = t.GetStart()
				}
				pieces = append(pieces, Piece{Statement, offs[start], offs[t.GetStop()+1]})
				start = -1
				continue
			}
		}
		if start < 0 {
			start = t.GetStart()
		}
	}
}

// runeOffsets is the byte offset of each rune index of text (ANTLR's
// positions), and of its end. Invalid UTF-8 decodes to one rune per byte,
// as in the []rune conversion of antlr.NewInputStream.
func runeOffsets(text string) []int {
	offs := make([]int, 0, len(text)+1)
	for i := range text {
		offs = append(offs, i)
	}
	return append(offs, len(text))
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
