package repl

import (
	"testing"
	"time"
)

// TestSecondInterrupt checks the escape: a second Ctrl-C within a second
// of the first abandons the statement; a later one only cancels again.
func TestSecondInterrupt(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var i interrupts
	for _, tt := range []struct {
		at      time.Duration
		abandon bool
	}{{0, false}, {1500 * time.Millisecond, false}, {2400 * time.Millisecond, true}} {
		if got := i.interrupt(t0.Add(tt.at)); got != tt.abandon {
			t.Errorf("Ctrl-C at %v: abandon = %v, want %v", tt.at, got, tt.abandon)
		}
	}
}
