//go:build !linux

package spool

import "os"

// flushData makes a file's data durable (see flush_linux.go).
func flushData(f *os.File) error { return f.Sync() }
