// Package compiler implements package query's Compiler over the facade
// (package sase) and the packages beside it (derive, rowpattern,
// rulebook, syntax), and registers it as its init runs: a program that
// runs sessions (cmd/sase, serve) imports it for that effect, as a
// database/sql driver is imported.
package compiler

import (
	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/syntax"
)

func init() { query.Register(Compiler{}) }

// Compiler is query.Compiler over the facade.
type Compiler struct{}

func (Compiler) Compile(q *ast.Query, src *ast.Source, stream *event.Stream, engine string) (query.Query, error) {
	e, err := sase.LookupEngine(engine)
	if err != nil {
		return nil, err
	}
	cq, err := sase.CompileAST(q, src, stream, sase.WithEngine(e))
	if err != nil {
		return nil, err
	}
	return Of(cq), nil
}

func (Compiler) Engines() []string { return sase.EngineNames() }

func (Compiler) LookupEngine(name string) (string, error) {
	e, err := sase.LookupEngine(name)
	if err != nil {
		return "", err
	}
	return e.Name, nil
}

func (Compiler) AutoWorkers(events int, sink query.SinkKind) (int, string) {
	return sase.AutoWorkers(events, sink)
}

func (Compiler) Names(q *ast.Query) query.Names {
	n := sase.Names(q)
	out := query.Names{Types: n.Types, Attrs: make([]query.AttrUse, len(n.Attrs))}
	for i, a := range n.Attrs {
		out.Attrs[i] = query.AttrUse{Attr: a.Attr, Types: a.Types}
	}
	return out
}

func (Compiler) Split(text string) []query.Piece { return syntax.Split(text) }

func (Compiler) Parse(src *ast.Source) ([]ast.Stmt, error) { return syntax.Parse(src) }

func (Compiler) TokenSpans(text string) []ast.Span { return syntax.TokenSpans(text) }

func (Compiler) Complete(text string) query.Completion { return syntax.CompletionContext(text) }
