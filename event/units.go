package event

import (
	"slices"
	"strings"
	"time"
)

// TimeUnit is a unit a duration can be written in: WITHIN 5 minutes, and
// LOAD's WITH (time_unit = 'ms'). The same words are accepted everywhere.
type TimeUnit struct {
	Name     string   // the canonical spelling, used when printing: "ms"
	Aliases  []string // the other spellings, lower case
	Duration time.Duration
}

// timeUnits is the one table of time units, shortest first.
var timeUnits = []TimeUnit{
	{"ms", []string{"millisecond", "milliseconds"}, time.Millisecond},
	{"s", []string{"sec", "second", "seconds"}, time.Second},
	{"m", []string{"min", "minute", "minutes"}, time.Minute},
	{"h", []string{"hour", "hours"}, time.Hour},
	{"d", []string{"day", "days"}, 24 * time.Hour},
}

// TimeUnits returns the time units, shortest first.
func TimeUnits() []TimeUnit { return slices.Clone(timeUnits) }

// LookupTimeUnit finds the unit a word names, case-insensitively: "ms",
// "Minutes", "SEC".
func LookupTimeUnit(word string) (TimeUnit, bool) {
	for _, u := range timeUnits {
		if strings.EqualFold(word, u.Name) || slices.ContainsFunc(u.Aliases, func(a string) bool { return strings.EqualFold(word, a) }) {
			return u, true
		}
	}
	return TimeUnit{}, false
}
