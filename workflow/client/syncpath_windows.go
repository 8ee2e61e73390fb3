package client

import (
	"errors"
	"io/fs"
	"os"
)

// syncFile flushes a file: Windows flushes only through a handle open for
// writing. A file the user made read-only is left to the system's own
// write-back rather than failing the retrieval.
func syncFile(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrPermission) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// syncDir does nothing: Windows cannot flush a directory, and NTFS keeps
// its names in a journal of its own.
func syncDir(string) error { return nil }
