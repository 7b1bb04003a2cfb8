package query

import (
	"errors"
	"sync"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
)

// Compiler compiles the statements of a script: what the session needs
// of the parser, the planner and the engines.
type Compiler interface {
	Syntax
	// Compile compiles q, parsed from src, against stream's schema, for
	// the engine of that name ("" or "auto": the default).
	Compile(q *ast.Query, src *ast.Source, stream *event.Stream, engine string) (Query, error)
	// Engines lists the engines' names, sorted; LookupEngine finds one
	// by name, case-insensitively, and returns its name as Engines
	// spells it.
	Engines() []string
	LookupEngine(name string) (string, error)
	// AutoWorkers is workers = auto for a query without a plan's
	// estimate (a MATCH_RECOGNIZE).
	AutoWorkers(events int, sink SinkKind) (n int, why string)
	// Names lists the event types and attributes q reads, before any
	// schema binds them.
	Names(q *ast.Query) Names
	// Rulebook indexes rules, compiled on a stream with schema (nil
	// rules: one that Start's pass adds to).
	Rulebook(schema *event.Schema, rules []Rule) Rulebook
	// MatchRecognize compiles st, parsed from src, against a stream's
	// schema and tick unit.
	MatchRecognize(st *ast.MatchRecognize, src *ast.Source, schema *event.Schema, unit int64) (MatchRecognize, error)
}

// Names are the event types and attributes a query reads: Types in
// order, once each; Attrs in the order the query reads them, each with
// the types it is read on.
type Names struct {
	Types []string
	Attrs []AttrUse
}

// AttrUse is an attribute read on events of some types.
type AttrUse struct {
	Attr  string
	Types []string
}

// ErrNoCompiler is Registered's error when no program's package
// registered a Compiler.
var ErrNoCompiler = errors.New(`no query compiler is linked in: import _ "github.com/sase-cep/sase/compiler"`)

var registry struct {
	sync.Mutex
	c Compiler
}

// Register makes c the Compiler that Registered returns; package
// compiler calls it from its init.
func Register(c Compiler) {
	registry.Lock()
	defer registry.Unlock()
	registry.c = c
}

// Registered is the Compiler registered, or ErrNoCompiler.
func Registered() (Compiler, error) {
	registry.Lock()
	defer registry.Unlock()
	if registry.c == nil {
		return nil, ErrNoCompiler
	}
	return registry.c, nil
}
