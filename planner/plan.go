// Package planner turns a query's syntax tree into SASE's basic plan: it
// binds variables and attributes to schema slots, runs the checks that need
// the stream's schema, compiles expressions to small evaluators, and builds
// the six operators (sequence scan and construction, selection, window,
// negation, transformation) plus closure collection.
package planner

import (
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

// HasType reports whether the event type id is one of the component's.
func (c *Component) HasType(t int) bool {
	for _, x := range c.Types {
		if x == t {
			return true
		}
	}
	return false
}

// Pred is one compiled WHERE conjunct.
type Pred struct {
	Text string // as printed by EXPLAIN
	Vars []int  // components it mentions, ascending
	Eval Cond
	Node ast.Expr
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

// Value reads the equivalence attribute of an event.
func (q *Equiv) Value(e *event.Event) event.Value {
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
	Eval Eval // ColValue
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
	Columns    []Column
	// Strategy is the event selection strategy the query names; with one,
	// Ops[0] is a RunScan instead of SSC (docs/STRATEGIES.md).
	Strategy Strategy
	// Ops is the operator pipeline in execution order: Ops[0] is SSC and
	// the last is Transformation; EXPLAIN prints it root first.
	Ops []Op
	// Rules lists the optimizer rules that rewrote the plan, in order;
	// Notes say what a forced engine could not do.
	Rules  []string
	Notes  []string
	Engine string
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

// Postponed reports whether a match may complete only after time passes:
// the pattern ends with a negated component or a closure.
func (p *Plan) Postponed() bool {
	return p.Components[len(p.Components)-1].Kind != Single
}

// Op is a plan operator.
type Op interface {
	Name() string
	op()
}

// SSC is sequence scan and construction over the positive singles: an NFA
// whose runtime stack records active state instances, and construction of
// the sequences by depth-first search from each accepting instance.
type SSC struct {
	Comps []int // the positive singles, the NFA's states 1..n
	// Window bounds the stack and the search when pushed down (WindowPushed).
	WindowPushed bool
	Window       int64
	// AIS replaces the runtime stack by Active Instance Stacks: a stack per
	// state whose instances point to the most recent instance of the
	// previous stack (RIP), so construction walks RIP ranges.
	AIS bool
	// Filters[j] are the simple predicates of state j+1 (one variable and
	// constants), checked before an event enters the state.
	Filters [][]*Pred
	// Partition is the equivalence test pushed into SS (PAIS): one set of
	// stacks per value of the attribute. PartitionWhy says why it was chosen.
	Partition    *Equiv
	PartitionWhy string
	// Multi are further equivalence tests checked in SS by cross-attribute
	// transition filtering (Multi-PAIS); Dynamic are those checked during
	// SC's search (dynamic filtering).
	Multi   []*Equiv
	Dynamic []*Equiv
	// Checks[j] are predicates over several positive singles, checked
	// during construction as soon as state j+1, the earliest state they
	// read, is bound (construction binds the states from last to first).
	Checks [][]*Pred
}

// ClosureOp collects each closure's list between its neighbours.
type ClosureOp struct{ Comps []int }

// Selection keeps the sequences that satisfy every predicate.
type Selection struct {
	Preds  []*Pred
	Equivs []*Equiv // over the positive singles
}

// Window keeps the sequences whose first and last events are within W.
type Window struct{ W int64 }

// Negation rejects the sequences with a qualifying negated event in its
// interval.
type Negation struct{ Comps []int }

// Transformation turns each sequence into an output row.
type Transformation struct{ Columns []Column }

func (*SSC) op()            {}
func (*ClosureOp) op()      {}
func (*Selection) op()      {}
func (*Window) op()         {}
func (*Negation) op()       {}
func (*Transformation) op() {}

func (*SSC) Name() string            { return "SSC" }
func (*ClosureOp) Name() string      { return "Closure" }
func (*Selection) Name() string      { return "Selection" }
func (*Window) Name() string         { return "Window" }
func (*Negation) Name() string       { return "Negation" }
func (*Transformation) Name() string { return "Transformation" }

// Bounded reports whether the plan keeps its state bounded by the window,
// which a live stream needs: SSC only once the window is pushed into it.
func (p *Plan) Bounded() bool {
	if ssc, ok := p.Ops[0].(*SSC); ok {
		return ssc.WindowPushed
	}
	return true
}
