package query

import (
	"strings"

	"github.com/sase-cep/sase/ast"
)

// Syntax is what the session and the shell need of a statement's text:
// cut a script into statements, parse them, say what completes the one
// being typed, and where its tokens are.
type Syntax interface {
	// Split cuts text into its statements and backslash command lines,
	// in order.
	Split(text string) []Piece
	// Parse parses a script: statements separated or terminated by ';'.
	// The error, if any, is an ast.ErrorList sorted by position.
	Parse(src *ast.Source) ([]ast.Stmt, error)
	// TokenSpans returns where text's tokens are, as byte offsets, in
	// order.
	TokenSpans(text string) []ast.Span
	// Complete says what fits at the end of text, a statement typed up
	// to the cursor.
	Complete(text string) Completion
}

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

// Expect is the set of kinds of name that fit at the cursor: DESCRIBE
// takes a stream or a type.
type Expect uint16

const (
	ExpectStream          Expect = 1 << iota
	ExpectType                   // an event type of Completion.Stream
	ExpectVariable               // a variable of the pattern (Completion.Vars)
	ExpectAttribute              // an attribute of variable Completion.Var's types
	ExpectStreamAttribute        // any attribute of Completion.Stream: an equivalence test
	ExpectSetting                // a setting's key
	ExpectSettingValue           // a value of setting Completion.Key
	ExpectQueryID                // a query's id
	ExpectPath                   // a file name: Completion.Word is the partial path, unquoted
)

// PatternVar is a variable of the pattern typed so far.
type PatternVar struct {
	Name    string
	Types   []string
	Closure bool // a Kleene closure's variable, which has LEN
}

// Completion says what fits at the end of a statement being typed.
type Completion struct {
	// Word is the partial word the cursor ends: every candidate begins
	// with it.
	Word string
	// Keywords are the keywords the parser accepts in the word's place
	// that begin with it (case-insensitively), spelled in the case typed.
	Keywords []string
	// Opens are those of Keywords that a '(' must follow: SEQ, AND, OR
	// and ANY in a pattern.
	Opens  []string
	Expect Expect
	// Stream is the stream the query reads: its FROM clause's if typed
	// already, else "" (the current one).
	Stream string
	Var    string       // for ExpectAttribute
	Key    string       // for ExpectSettingValue
	Vars   []PatternVar // for ExpectVariable and ExpectAttribute; nil while the pattern is incomplete
	// Values are the fixed words that fit and begin with Word: the
	// formats after LOAD's or EXPLAIN's FORMAT.
	Values []string
	// Lower says keywords are spelled in lower case, as the statement
	// typed so far spells them.
	Lower bool
}

// Keyword returns keyword kw (upper case) spelled as Keywords are, if it
// begins with the word.
func (c *Completion) Keyword(kw string) (string, bool) {
	if len(c.Word) > len(kw) || !strings.EqualFold(c.Word, kw[:len(c.Word)]) {
		return "", false
	}
	if c.Lower {
		return c.Word + strings.ToLower(kw[len(c.Word):]), true
	}
	return c.Word + kw[len(c.Word):], true
}
