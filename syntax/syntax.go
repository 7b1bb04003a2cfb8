// Package syntax is what the shell and scripts need of a statement's
// text: cut a script into statements, parse them, say what completes the
// one being typed, and where its tokens are, in package query's types
// (query.Piece, query.Completion). Package compiler offers it to the
// session and the shell as query.Syntax; it is the parser's surface, so
// that the parser may change behind it.
package syntax

import (
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/grammar"
	"github.com/sase-cep/sase/query"
)

// Split cuts text into its statements and backslash command lines, in
// order.
func Split(text string) []query.Piece { return grammar.Split(text) }

// Parse parses a script: statements separated or terminated by ';'. The
// error, if any, is an ast.ErrorList sorted by position.
func Parse(src *ast.Source) ([]ast.Stmt, error) { return grammar.Parse(src) }

// ParseQuery parses a text that must be one query (PATTERN or EVENT).
func ParseQuery(src *ast.Source) (*ast.Query, error) { return grammar.ParseQuery(src) }

// TokenSpans returns where text's tokens are, as byte offsets, in order.
func TokenSpans(text string) []ast.Span { return grammar.TokenSpans(text) }

// CompletionContext says what fits at the end of text, a statement typed
// up to the cursor.
func CompletionContext(text string) query.Completion { return grammar.CompletionContext(text) }
