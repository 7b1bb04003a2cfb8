//go:build !linux

package event

import "unsafe"

// hugePages is Linux's advice (arena_linux.go); elsewhere the pages are
// the system's to choose.
func hugePages(unsafe.Pointer, int) {}
