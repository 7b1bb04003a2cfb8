package grammar

import (
	"fmt"

	"github.com/antlr4-go/antlr/v4"

	"github.com/sase-cep/sase/grammar/gen"
)

// Limits on a statement's text, checked by one pass of the lexer before the
// parser runs. ANTLR's prediction recurses once per level of nesting, so a
// deep enough text overflows the goroutine stack: a fatal error, not a
// panic, that would take the shell down with the statement. The parser's
// memory grows with a statement's length, by about 500 bytes a byte.
const (
	// MaxStatementBytes bounds the length of one statement.
	MaxStatementBytes = 256 << 10
	// MaxDepth bounds the nesting of parentheses, brackets and braces,
	// with the prefix operators (NOT, -, !) in a row inside them: each is
	// a level of the parser's recursion too, and ten thousand NOTs take
	// its prediction seconds.
	MaxDepth = 256
)

// checkLimits returns the byte offset and message of the first limit text
// breaks, or ok. It stops at the first, so that it reads at most
// MaxStatementBytes of a long statement.
func checkLimits(text string) (offset int, msg string, ok bool) {
	if len(text) <= MaxDepth {
		// Each level is a token of a byte or more, and MaxDepth bytes
		// are within MaxStatementBytes: the text keeps both limits.
		return 0, "", true
	}
	at := &cursor{text: text}
	lx := gen.NewSaseLexer(antlr.NewInputStream(text))
	lx.RemoveErrorListeners() // the parser's lexer reports bad characters
	start, depth := -1, 0     // start: the current statement's first byte; -1 between statements
	// run counts the prefix operators in a row at the current level, outer
	// the runs of the enclosing levels (each waits for its operand's
	// closing bracket), prefixes all of them.
	var run, prefixes int
	var outer []int
	tooDeep := func(from int) (int, string, bool) {
		return from, fmt.Sprintf("nested deeper than the limit of %d levels of parentheses, brackets, braces and prefix operators (NOT, -, !)", MaxDepth), false
	}
	for {
		t := lx.NextToken()
		tt := t.GetTokenType()
		if tt == antlr.TokenEOF {
			return 0, "", true
		}
		// The cursor only moves forward: the token's start before its end.
		from := at.byteOf(t.GetStart())
		if start < 0 {
			start = from
		}
		if at.byteOf(t.GetStop()+1)-start > MaxStatementBytes {
			return start, fmt.Sprintf("statement is longer than the limit of %d KiB; split it, or load the values as a stream", MaxStatementBytes>>10), false
		}
		switch tt {
		case gen.SaseLexerNOT, gen.SaseLexerMINUS, gen.SaseLexerBANG:
			run++
			if prefixes++; depth+prefixes > MaxDepth {
				return tooDeep(from)
			}
		case gen.SaseLexerLPAREN, gen.SaseLexerLBRACK, gen.SaseLexerLBRACE:
			outer, run = append(outer, run), 0
			if depth++; depth+prefixes > MaxDepth {
				return tooDeep(from)
			}
		case gen.SaseLexerRPAREN, gen.SaseLexerRBRACK, gen.SaseLexerRBRACE:
			// The bracket ends the operand of the run before it too.
			prefixes -= run
			if n := len(outer); n > 0 {
				prefixes -= outer[n-1]
				outer = outer[:n-1]
			}
			depth, run = max(depth-1, 0), 0
		case gen.SaseLexerSEMI:
			start, depth, run, prefixes, outer = -1, 0, 0, 0, outer[:0]
		default:
			prefixes -= run
			run = 0
		}
	}
}
