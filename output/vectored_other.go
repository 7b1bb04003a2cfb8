//go:build !linux

package output

import "os"

// fileBuffers is nil where writev is not used: a file takes one Write per
// buffer.
func fileBuffers(*os.File) BuffersWriter { return nil }
