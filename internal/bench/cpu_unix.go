//go:build unix

package bench

import (
	"syscall"
	"time"
)

// CPUTime is the process's user and system CPU time so far.
func CPUTime() time.Duration {
	ru := usage()
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PageFaults is how many page faults the process has taken so far: what
// first touching fresh memory costs (the kernel clears each page).
func PageFaults() int64 {
	ru := usage()
	return int64(ru.Minflt + ru.Majflt)
}

func usage() syscall.Rusage {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return syscall.Rusage{}
	}
	return ru
}
