package rowpattern

import (
	"fmt"
	"strings"

	"github.com/sase-cep/sase/ast"
)

// Explain describes the query's plan: its partitioning, output mode and
// the matcher's program.
func (q *Query) Explain() string {
	var b strings.Builder
	st := q.st
	fmt.Fprintf(&b, "MATCH_RECOGNIZE on %s\n", q.stream)
	if len(st.PartitionBy) > 0 {
		parts := make([]string, len(st.PartitionBy))
		for i, p := range st.PartitionBy {
			parts[i] = p.String()
		}
		fmt.Fprintf(&b, "  partition by %s\n", strings.Join(parts, ", "))
	}
	if len(st.OrderBy) > 0 {
		parts := make([]string, len(st.OrderBy))
		for i, o := range st.OrderBy {
			parts[i] = o.String()
		}
		fmt.Fprintf(&b, "  sorted by %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, "  %s, %s\n", st.Rows, skipText(st))
	if q.within >= 0 {
		fmt.Fprintf(&b, "  within %d ticks\n", q.within)
	}
	fmt.Fprintf(&b, "  pattern (%s): %d instructions, variables %s\n", st.Pattern, len(q.prog), strings.Join(q.names, ", "))
	for _, line := range strings.Split(strings.TrimSuffix(q.prog.String(), "\n"), "\n") {
		b.WriteString("    " + line + "\n")
	}
	return b.String()
}

func skipText(st *ast.MatchRecognize) string {
	if st.Skip == nil {
		return "AFTER MATCH SKIP PAST LAST ROW"
	}
	return st.Skip.String()
}
