//go:build !linux

package event

import "unsafe"

// hugePages is Linux's advice (arena_linux.go); elsewhere the pages are
// the system's to choose.
func hugePages(unsafe.Pointer, int) {}

// populate is Linux's (arena_linux.go); elsewhere memory is backed as it
// is first touched.
func populate([]byte) {}
