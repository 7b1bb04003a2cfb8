package event

import (
	"syscall"
	"unsafe"
)

const hugePage = 2 << 20

// hugePages asks the kernel to back the n bytes at p, not yet touched,
// with huge pages: one fault and one clear per 2 MB, not 512 of each
// (transparent huge pages are often madvise-only, as by default on many
// systems). The range is widened to whole huge pages, which a neighbouring
// allocation may share: the advice changes only the size of the pages
// that back memory, never what it holds, and a huge page is used only
// where none of its range was touched yet. An error (no THP) leaves the
// pages as they are.
func hugePages(p unsafe.Pointer, n int) {
	from := uintptr(p) &^ (hugePage - 1)
	to := (uintptr(p) + uintptr(n) + hugePage - 1) &^ (hugePage - 1)
	syscall.Syscall(syscall.SYS_MADVISE, from, to-from, syscall.MADV_HUGEPAGE)
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14), which package
// syscall does not name.
const madvPopulateWrite = 23

// populate has the kernel back b with memory, as writes to every page
// would, but without writing: b may be written meanwhile, and its
// contents stay as they are. An older kernel's error leaves the pages to
// be backed as they are first touched.
func populate(b []byte) {
	syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), madvPopulateWrite)
}
