//go:build !unix

package bench

import "time"

// CPUTime is not measured here.
func CPUTime() time.Duration { return 0 }

// PageFaults is not measured here.
func PageFaults() int64 { return 0 }
