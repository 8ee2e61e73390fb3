package client

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// syncContents and syncNames: one syncfs(2) of the file system holding the
// batch (a retrieval writes into one directory tree) does both at once.
func syncContents(batch []pendingFile) error { return syncFS(batch[0].dest) }
func syncNames(batch []pendingFile) error    { return syncFS(batch[0].dest) }

// syncPresent makes files already in place durable.
func syncPresent(paths []string) error { return syncFS(paths[0]) }

func syncFS(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}
