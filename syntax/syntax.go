// Package syntax is what the shell and scripts need of a statement's
// text: cut a script into statements, parse them, say what completes the
// one being typed, and where its tokens are. It is the parser's surface
// for the layers above the facade (session, repl), so that they import
// neither package grammar nor the planner: the parser may change behind
// it.
package syntax

import (
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/grammar"
)

// A Piece is one part of a script as Split cuts it (grammar.Piece):
// text[Start:End], of a kind.
type (
	Piece     = grammar.Piece
	PieceKind = grammar.PieceKind
)

// The kinds of Piece (grammar.Statement, ...).
const (
	Statement   = grammar.Statement   // a statement up to its ';'
	Unfinished  = grammar.Unfinished  // a statement the text ends inside of
	Command     = grammar.Command     // a backslash command line
	OpenComment = grammar.OpenComment // a block comment the text ends inside of
)

// Split cuts text into its statements and backslash command lines, in
// order.
func Split(text string) []Piece { return grammar.Split(text) }

// Parse parses a script: statements separated or terminated by ';'. The
// error, if any, is an ast.ErrorList sorted by position.
func Parse(src *ast.Source) ([]ast.Stmt, error) { return grammar.Parse(src) }

// ParseQuery parses a text that must be one query (PATTERN or EVENT).
func ParseQuery(src *ast.Source) (*ast.Query, error) { return grammar.ParseQuery(src) }

// TokenSpans returns where text's tokens are, as byte offsets, in order.
func TokenSpans(text string) []ast.Span { return grammar.TokenSpans(text) }

// Completion says what fits at the end of a statement being typed;
// Expect is the set of kinds of name that fit there.
type (
	Completion = grammar.Completion
	Expect     = grammar.Expect
)

// The kinds of name a Completion may expect.
const (
	ExpectStream          = grammar.ExpectStream
	ExpectType            = grammar.ExpectType
	ExpectVariable        = grammar.ExpectVariable
	ExpectAttribute       = grammar.ExpectAttribute
	ExpectStreamAttribute = grammar.ExpectStreamAttribute
	ExpectSetting         = grammar.ExpectSetting
	ExpectSettingValue    = grammar.ExpectSettingValue
	ExpectQueryID         = grammar.ExpectQueryID
	ExpectPath            = grammar.ExpectPath
)

// CompletionContext says what fits at the end of text, a statement typed
// up to the cursor.
func CompletionContext(text string) Completion { return grammar.CompletionContext(text) }
