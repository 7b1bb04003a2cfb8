package session

import (
	"strings"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
)

// Name checks the planner cannot make. A pattern may name a type that a
// stream does not carry: the spec's conformance cases run such queries and
// expect no match rather than an error, so the session only warns, with
// the stream's types and the one the name is likely a typo of.

// stmtBase maps positions in the statement running, parsed on its own,
// back into its script, as rebase does for its errors.
type stmtBase struct {
	sub, src *ast.Source
	start    int
}

// warnAt writes a warning at a position of src, with a caret.
func (s *Session) warnAt(src *ast.Source, offset int, format string, args ...any) {
	w := errAt(src, offset, format, args...)
	rebase(w, s.stmt.sub, s.stmt.src, s.stmt.start)
	s.note("warning: %v", w)
}

// absentTypes warns about each event type the query's pattern names that
// loaded stream name, of schema sc, has no events of.
func (s *Session) absentTypes(src *ast.Source, q *ast.Query, name string, sc *event.Schema) {
	for _, comp := range q.Pattern.Components {
		for _, t := range comp.Types {
			if _, ok := sc.TypeID(t.Name); ok {
				continue
			}
			types := typeNames(sc)
			s.warnAt(src, t.Span.Start, "stream %s has no events of type %s, which never matches (its types: %s)%s",
				name, t.Name, listOf(types, 12), ast.DidYouMean(t.Name, types))
		}
	}
}

func typeNames(sc *event.Schema) []string {
	names := make([]string, len(sc.Types))
	for i, t := range sc.Types {
		names[i] = t.Name
	}
	return names
}

// listOf joins names, the first max of them and a count of the rest.
func listOf(names []string, max int) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + ", ... (" + plural(int64(len(names)-max), "more", "more") + ")"
}
