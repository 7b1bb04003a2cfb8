package planner

import (
	"errors"
	"fmt"
)

// Validate checks the plan's invariants, which every rule must keep: a
// source and an output are present; the output's columns are the query's
// and each reads a component of its kind; the query's window is applied
// exactly once, with its bound (by the source or by a Window stage); what
// the source does not do itself (closure collection, negation) a stage
// does, for every such component; each stage appears once, closure
// collection before the stages that read its lists; every predicate is
// compiled; each operator's own fields agree with the plan (its states,
// buffers, equivalence tests). The optimizer checks it after every rule
// that fires.
func (p *Plan) Validate() error {
	if p.Source == nil {
		return errors.New("plan: no source")
	}
	if p.Output == nil {
		return errors.New("plan: no output (Transformation)")
	}
	if p.HasWindow && p.Window < 0 {
		return fmt.Errorf("plan: negative window %d", p.Window)
	}
	var errs []error
	seen := map[string]bool{}
	for _, s := range p.Stages {
		switch s.(type) {
		case *Transformation:
			errs = append(errs, errors.New("a Transformation before the output"))
		case *Selection, *Negation:
			if _, ok := StageOf[*ClosureOp](p); ok && !seen["Closure"] {
				errs = append(errs, fmt.Errorf("%s comes before Closure, whose lists it may read", s.Name()))
			}
		}
		if seen[s.Name()] {
			errs = append(errs, fmt.Errorf("two %s stages", s.Name()))
		}
		seen[s.Name()] = true
		errs = append(errs, s.validate(p))
	}
	errs = append(errs, p.Source.validate(p), p.Output.validate(p))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	return nil
}
