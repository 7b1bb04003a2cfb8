// Package planner turns a query's syntax tree into SASE's basic plan: a
// checking pass binds variables and attributes to schema slots and reports
// what the stream's schema rules out, producing a resolved form of every
// expression (resolved.go); the plan is a typed tree, a Source (the
// sequence scan and construction) followed by Stages (closure collection,
// selection, window, negation) and the Output (transformation); the
// expressions are compiled to small evaluators last.
package planner

import (
	"slices"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
)

// CompKind is the role of a pattern component.
type CompKind int

const (
	Single  CompKind = iota // a positive single event
	Closure                 // a closure: a list of at least K events
	Negated                 // a negated event
)

// Component is one pattern component, bound to the schema.
type Component struct {
	Index     int // position in the pattern
	Var       string
	Kind      CompKind
	TypeNames []string
	Types     []int // type ids in the stream's schema (absent types omitted)
	K         int   // closure minimum length
	// Prev and Next are the neighbouring positive singles (component
	// indices), -1 at the start or end of the pattern.
	Prev, Next int
	// ElemPreds are a closure's per-element predicates (they mention i);
	// NegPreds are a negated component's predicates (they mention it).
	ElemPreds []*Pred
	NegPreds  []*Pred
	Node      *ast.Component
}

// Pred is one WHERE conjunct: its resolved form, which rules match on, and
// the evaluator compiled from it. Rules move predicates between operators,
// never rewrite them.
type Pred struct {
	Text string // as printed by EXPLAIN
	Vars []int  // components it mentions, ascending
	Expr Expr
	Eval Cond
	pos  int // the conjunct's offset, for errors found while placing it
}

// Equiv is one attribute of a top-level equivalence test: every component
// that has Attr has the same value of it (equal to Const when set).
type Equiv struct {
	Attr     string
	Slot     int
	Builtin  Builtin // the attribute is ts or seq
	Const    *event.Value
	Text     string
	Distinct int // distinct values seen in the stream (for the optimizer)
}

// EquivOn is the equivalence test [attr] on a resolved attribute (a rule
// that recognises one written by hand makes it so).
func EquivOn(f Field) *Equiv {
	return &Equiv{Attr: f.Name, Slot: f.Slot, Builtin: f.Builtin, Text: "[" + ast.QuoteName(f.Name) + "]"}
}

// Value reads the equivalence attribute of an event; an unbound
// variable of the algebra (nil) has none.
func (q *Equiv) Value(e *event.Event) event.Value {
	if e == nil {
		return event.Value{}
	}
	return readAttr(e, q.Slot, q.Builtin)
}

// ColumnKind is what an output column holds.
type ColumnKind int

const (
	ColValue ColumnKind = iota // a computed value
	ColEvent                   // a positive variable's event
	ColList                    // a closure variable's list of events
)

// Column is one column of the query's output.
type Column struct {
	Name string
	Kind ColumnKind
	Comp int  // ColEvent, ColList: the component
	Expr Expr // ColValue, resolved
	Eval Eval // ColValue, compiled from Expr
}

// Plan is a compiled query: components, window, operators and output.
type Plan struct {
	Query      *ast.Query
	Src        *ast.Source
	Stream     *event.Stream
	Components []*Component
	Positives  []int // positive single components, in pattern order
	HasWindow  bool
	Window     int64 // in the stream's ticks
	Equivs     []*Equiv
	// Where are the WHERE conjuncts (but the equivalence tests and the
	// strategy), resolved, wherever the plan checks them: a rulebook's
	// filter index reads the constant ones.
	Where   []*Pred
	Columns []Column
	// Strategy is the event selection strategy the query names; with one,
	// the Source is a RunScan (docs/STRATEGIES.md).
	Strategy Strategy
	// Source reads every event; Stages process what it hands on, in
	// order; Output turns each match into a row. EXPLAIN prints them root
	// (Output) first.
	Source Source
	Stages []Stage
	Output *Transformation
	// Rules lists the optimizer rules that rewrote the plan, in order;
	// Notes say what a forced engine could not do.
	Rules  []string
	Notes  []string
	Engine string
	// Split is how a run may divide over workers, which the optimizer
	// decides (Split).
	Split Split
	// reads and guards are what the comparisons read and what has()
	// tests, for OddValues.
	reads  []read
	guards []guard
}

// Operator is a node of the plan tree: a stage, the output, a source or
// one of a source's parts. Details are its EXPLAIN lines below its name.
type Operator interface {
	Name() string
	Details(p *Plan) []string
}

// Source is the plan's first operator: it reads every event and hands what
// it completes to the stages (sequences of the positive singles, or the
// complete matches of a run scan or of ReCEP). exec has one engine per
// source type.
type Source interface {
	// Operators are the source's nodes of the plan tree, in execution
	// order: the source itself, or ReCEP's three parts.
	Operators() []Operator
	// Bounded returns the window that bounds the source's state; ok is
	// false when its state grows with the stream.
	Bounded() (window int64, ok bool)
	// validate checks the source against the plan, including what it
	// leaves to the stages (Validate).
	validate(p *Plan) error
}

// Stage is an operator between the source and the output; exec has one
// engine per stage type.
type Stage interface {
	Operator
	validate(p *Plan) error
}

// Operators lists the plan's nodes in execution order: the source's, the
// stages, the output. EXPLAIN ANALYZE's counters are indexed by position
// here.
func (p *Plan) Operators() []Operator {
	ops := slices.Clone(p.Source.Operators())
	for _, s := range p.Stages {
		ops = append(ops, s)
	}
	return append(ops, p.Output)
}

// StageOf returns the plan's stage of type T, if it has one.
func StageOf[T Stage](p *Plan) (T, bool) {
	for _, s := range p.Stages {
		if t, ok := s.(T); ok {
			return t, true
		}
	}
	var zero T
	return zero, false
}

// RemoveStage takes s out of the plan's stages.
func (p *Plan) RemoveStage(s Stage) {
	p.Stages = slices.DeleteFunc(p.Stages, func(x Stage) bool { return x == s })
}

// Bounded reports whether the plan keeps its state bounded by the window,
// which a live stream needs.
func (p *Plan) Bounded() bool {
	_, ok := p.Source.Bounded()
	return ok
}

// First and Last return the first and last positive single components.
func (p *Plan) First() int { return p.Positives[0] }
func (p *Plan) Last() int  { return p.Positives[len(p.Positives)-1] }

// Closures and Negations list components of a kind, in pattern order.
func (p *Plan) Closures() []int  { return p.ofKind(Closure) }
func (p *Plan) Negations() []int { return p.ofKind(Negated) }

func (p *Plan) ofKind(k CompKind) []int {
	var out []int
	for _, c := range p.Components {
		if c.Kind == k {
			out = append(out, c.Index)
		}
	}
	return out
}
