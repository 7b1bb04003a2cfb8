package bench

import (
	"strings"
	"testing"
	"time"
)

// TestRulesTable runs the rules suite small: the rulebook's matches, on
// one pass and (at 30 rules) on 2 workers, are each rule's alone.
func TestRulesTable(t *testing.T) {
	var b strings.Builder
	if _, err := runRules(&b, []int{1, 30}, []int{30}, 20_000, time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	if strings.Contains(b.String(), "NO (") || strings.Count(b.String(), " yes\n") != 5*len(RuleMinPs) || strings.Count(b.String(), "rulebook W2") != len(RuleMinPs) {
		t.Errorf("a rule's matches differ through the rulebook:\n%s", b.String())
	}
}
