package rowpattern

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/planner"
)

// Profile counts what a run did, per instruction and per variable, for
// EXPLAIN ANALYZE.
type Profile struct {
	Starts int64   // start rows tried
	Tried  []int64 // by pc: threads at a var instruction that tried a row
	Took   []int64 // by pc: ... whose row matched
	Evals  []int64 // by variable: DEFINE evaluations (a general one without history: one per row, or per row and start row when it reads the start row)
	Trues  []int64 // by variable: ... that were true
}

// RunProfiled is Run on one worker, counting its work.
func (q *Query) RunProfiled(ctx context.Context, events []*event.Event, emit Emit) (Stats, *Profile, error) {
	p := &Profile{Tried: make([]int64, len(q.prog)), Took: make([]int64, len(q.prog)),
		Evals: make([]int64, len(q.names)), Trues: make([]int64, len(q.names))}
	st := Stats{Rows: int64(len(events))}
	parts := q.partitions(events)
	st.Partitions = int64(len(parts))
	r := q.loadedRunner(ctx, emit)
	r.m.profile = p
	for i := range parts {
		if err := r.partition(&parts[i], &st); err != nil || r.stopped {
			return st, p, err
		}
	}
	return st, p, nil
}

// Plan is the query's plan as EXPLAIN shows it; the counts are set by
// EXPLAIN ANALYZE.
type Plan struct {
	Stream      string        `json:"stream"`
	PartitionBy []string      `json:"partition_by"`
	OrderBy     []string      `json:"order_by"`
	Rows        string        `json:"rows_per_match"`
	Skip        string        `json:"after_match"`
	Within      *int64        `json:"within_ticks,omitempty"`
	Pattern     string        `json:"pattern"`
	Variables   []PlanVar     `json:"variables"`
	Program     []Instruction `json:"program"`
	Stats       *PlanStats    `json:"stats,omitempty"`
}

// PlanVar is a pattern variable and, analyzed, its DEFINE's counts (none
// for a variable without DEFINE).
type PlanVar struct {
	Name  string `json:"name"`
	Evals *int64 `json:"define_evaluations,omitempty"`
	Trues *int64 `json:"define_true,omitempty"`
}

// Instruction is one of the matcher's program's; analyzed, a var
// instruction has the rows its threads tried and took.
type Instruction struct {
	PC    int    `json:"pc"`
	Op    string `json:"op"`
	Var   string `json:"var,omitempty"`
	To    []int  `json:"to,omitempty"` // split, jump: where it goes on, preferred first
	Excl  bool   `json:"excluded,omitempty"`
	Tried *int64 `json:"tried,omitempty"`
	Took  *int64 `json:"took,omitempty"`
}

// PlanStats are an analyzed run's totals.
type PlanStats struct {
	Rows       int64 `json:"rows"`
	Partitions int64 `json:"partitions"`
	Starts     int64 `json:"start_rows"`
	Matches    int64 `json:"matches"`
	Output     int64 `json:"output_rows"`
}

var opNames = [...]string{opVar: "var", opSplit: "split", opJump: "jump", opStart: "start", opEnd: "end", opDone: "done"}

// Plan describes the query; st and p (both nil for EXPLAIN) add a run's
// counts.
func (q *Query) Plan(st *Stats, p *Profile) *Plan {
	s := q.st
	pl := &Plan{Stream: q.stream, Rows: s.Rows.String(), Skip: skipText(s), Pattern: s.Pattern.String()}
	for _, n := range s.PartitionBy {
		pl.PartitionBy = append(pl.PartitionBy, n.String())
	}
	for _, o := range s.OrderBy {
		pl.OrderBy = append(pl.OrderBy, o.String())
	}
	if q.within >= 0 {
		pl.Within = &q.within
	}
	for v, name := range q.names {
		pv := PlanVar{Name: name}
		if p != nil && q.defines[v] != nil { // no DEFINE: every row, untested
			pv.Evals, pv.Trues = &p.Evals[v], &p.Trues[v]
		}
		pl.Variables = append(pl.Variables, pv)
	}
	for pc, in := range q.prog {
		ins := Instruction{PC: pc, Op: opNames[in.op]}
		switch in.op {
		case opVar:
			ins.Var, ins.Excl = q.names[in.v], in.excl
			if p != nil {
				ins.Tried, ins.Took = &p.Tried[pc], &p.Took[pc]
			}
		case opSplit:
			ins.To = []int{in.x, in.y}
		case opJump:
			ins.To = []int{in.x}
		}
		pl.Program = append(pl.Program, ins)
	}
	if st != nil && p != nil {
		pl.Stats = &PlanStats{Rows: st.Rows, Partitions: st.Partitions, Starts: p.Starts, Matches: st.Matches, Output: st.Output}
	}
	return pl
}

// Explain is the plan as text.
func (q *Query) Explain() string { return q.Plan(nil, nil).Text() }

// Text is the plan as EXPLAIN prints it.
func (pl *Plan) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MATCH_RECOGNIZE on %s\n", pl.Stream)
	if len(pl.PartitionBy) > 0 {
		fmt.Fprintf(&b, "  partition by %s\n", strings.Join(pl.PartitionBy, ", "))
	}
	if len(pl.OrderBy) > 0 {
		fmt.Fprintf(&b, "  sorted by %s\n", strings.Join(pl.OrderBy, ", "))
	}
	fmt.Fprintf(&b, "  %s, %s\n", pl.Rows, pl.Skip)
	if pl.Within != nil {
		fmt.Fprintf(&b, "  within %d ticks\n", *pl.Within)
	}
	names := make([]string, len(pl.Variables))
	for i, v := range pl.Variables {
		names[i] = v.Name
	}
	fmt.Fprintf(&b, "  pattern (%s): %d instructions, variables %s\n", pl.Pattern, len(pl.Program), strings.Join(names, ", "))
	for _, in := range pl.Program {
		fmt.Fprintf(&b, "    %3d %s", in.PC, in.Op)
		switch in.Op {
		case "var":
			fmt.Fprintf(&b, " %s", in.Var)
			if in.Excl {
				b.WriteString(" excluded")
			}
			if in.Tried != nil {
				fmt.Fprintf(&b, "  (tried=%d took=%d)", *in.Tried, *in.Took)
			}
		case "split":
			fmt.Fprintf(&b, " %d, %d", in.To[0], in.To[1])
		case "jump":
			fmt.Fprintf(&b, " %d", in.To[0])
		}
		b.WriteByte('\n')
	}
	if pl.Stats == nil {
		return b.String()
	}
	for _, v := range pl.Variables {
		if v.Evals == nil {
			fmt.Fprintf(&b, "  %s: no DEFINE (true of every row)\n", v.Name)
			continue
		}
		fmt.Fprintf(&b, "  DEFINE %s: evaluated %d, true %d\n", v.Name, *v.Evals, *v.Trues)
	}
	s := pl.Stats
	fmt.Fprintf(&b, "  rows=%d partitions=%d start rows=%d matches=%d output rows=%d\n", s.Rows, s.Partitions, s.Starts, s.Matches, s.Output)
	return b.String()
}

// JSON is the plan as EXPLAIN (FORMAT json) prints it.
func (pl *Plan) JSON() string {
	b, err := json.MarshalIndent(pl, "", "  ")
	if err != nil {
		panic(err) // a Plan has nothing json cannot encode
	}
	return string(b) + "\n"
}

// Dot is the program as a Graphviz graph, EXPLAIN (FORMAT dot): a node
// per instruction, an edge to each instruction it goes on at (a split's
// preferred one labelled 1, the other 2).
func (pl *Plan) Dot() string {
	var b strings.Builder
	b.WriteString("digraph plan {\n  labelloc=t;\n  labeljust=l;\n")
	label := fmt.Sprintf("MATCH_RECOGNIZE on %s\n%s, %s\npattern (%s)\n", pl.Stream, pl.Rows, pl.Skip, pl.Pattern)
	if s := pl.Stats; s != nil {
		label += fmt.Sprintf("rows=%d partitions=%d start rows=%d matches=%d output rows=%d\n", s.Rows, s.Partitions, s.Starts, s.Matches, s.Output)
	}
	fmt.Fprintf(&b, "  label=\"%s\";\n  node [shape=box, fontname=\"monospace\"];\n", planner.DotEscape(label))
	for _, in := range pl.Program {
		text := fmt.Sprintf("%d %s", in.PC, in.Op)
		shape := ""
		switch in.Op {
		case "var":
			text += " " + in.Var
			if in.Excl {
				text += " excluded"
			}
			if in.Tried != nil {
				text += fmt.Sprintf("\ntried=%d took=%d", *in.Tried, *in.Took)
			}
		case "done":
			shape = ", shape=doublecircle"
		}
		fmt.Fprintf(&b, "  i%d [label=\"%s\"%s];\n", in.PC, planner.DotEscape(text), shape)
	}
	for _, in := range pl.Program {
		switch in.Op {
		case "split":
			fmt.Fprintf(&b, "  i%d -> i%d [label=\"1\"];\n  i%d -> i%d [label=\"2\"];\n", in.PC, in.To[0], in.PC, in.To[1])
		case "jump":
			fmt.Fprintf(&b, "  i%d -> i%d;\n", in.PC, in.To[0])
		case "done":
		default:
			fmt.Fprintf(&b, "  i%d -> i%d;\n", in.PC, in.PC+1)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func skipText(st *ast.MatchRecognize) string {
	if st.Skip == nil {
		return "AFTER MATCH SKIP PAST LAST ROW"
	}
	return st.Skip.String()
}
