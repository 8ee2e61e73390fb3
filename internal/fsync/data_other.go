//go:build !linux

package fsync

import "os"

// Data makes a file's data durable (see data_linux.go); without
// sync_file_range(2), with an fsync.
func Data(f *os.File) error { return f.Sync() }

// StartData does nothing here: Data syncs the file whole.
func StartData(f *os.File) error { return nil }
