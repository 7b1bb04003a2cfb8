package bench

import (
	"strings"
	"testing"
	"time"
)

// TestRulesTable runs the rules suite small: the rulebook's matches are
// each rule's alone.
func TestRulesTable(t *testing.T) {
	var b strings.Builder
	if _, err := runRules(&b, []int{1, 30}, 20_000, time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	if strings.Contains(b.String(), "NO (") || strings.Count(b.String(), " yes\n") != 4*len(RuleMinPs) {
		t.Errorf("a rule's matches differ through the rulebook:\n%s", b.String())
	}
}
