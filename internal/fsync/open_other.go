//go:build !unix

package fsync

import "os"

// OpenRead opens a file for reading (see open_unix.go for why Unix
// systems take a plain descriptor).
func OpenRead(path string) (*os.File, error) { return os.Open(path) }

// CreateExcl creates a new file for writing, failing if path exists. Only
// the owner's write bit of perm means anything here: a read-only mode
// gives a read-only file once it is closed.
func CreateExcl(path string, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm.Perm())
}
