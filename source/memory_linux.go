package source

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// addressSpaceLeft is what the address-space limit (ulimit -v) leaves the
// process: the limit less its virtual size. ok is false without a limit.
// Go reserves more address space than it uses, so this is on the safe
// side of what it may still allocate.
func addressSpaceLeft() (n int64, ok bool) {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) != nil || rl.Cur == ^uint64(0) { // RLIM_INFINITY
		return 0, false
	}
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	size, _, _ := strings.Cut(string(statm), " ")
	pages, err := strconv.ParseInt(size, 10, 64)
	if err != nil {
		return 0, false
	}
	return int64(min(rl.Cur, 1<<62)) - pages*int64(os.Getpagesize()), true
}
