package sase_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/source"
)

// Every spelling of every time unit is accepted by LOAD's time_unit and by
// WITHIN alike, and means the same duration in both.
func TestTimeUnitsAgreeAcrossLoadAndWithin(t *testing.T) {
	const csv = "type,ts\nA,1\nB,2\n"
	for _, u := range event.TimeUnits() {
		for _, w := range append([]string{u.Name}, u.Aliases...) {
			opts, err := source.ParseOptions(map[string]string{"time_unit": w})
			if err != nil {
				t.Errorf("time_unit = %q: %v", w, err)
				continue
			}
			if opts.TimeUnit != u.Duration {
				t.Errorf("time_unit = %q is %v, want %v", w, opts.TimeUnit, u.Duration)
			}
			// A stream in milliseconds: WITHIN 3 <unit> is 3 units of ms.
			stream, err := source.LoadCSV(strings.NewReader(csv), "s", source.Options{TimeUnit: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			q, err := sase.Compile("PATTERN SEQ(A a, B b) WITHIN 3 "+w, stream)
			if err != nil {
				t.Errorf("WITHIN 3 %s: %v", w, err)
				continue
			}
			if want := int64(3 * u.Duration / time.Millisecond); q.Plan().Window != want {
				t.Errorf("WITHIN 3 %s is %d ms, want %d", w, q.Plan().Window, want)
			}
		}
	}
}
