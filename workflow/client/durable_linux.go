package client

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// syncContents and syncNames: one syncfs(2) of the file system holding the
// batch (a retrieval writes into one directory tree) does both at once.
func syncContents(batch []pendingFile) error { return syncFS(batch) }
func syncNames(batch []pendingFile) error    { return syncFS(batch) }

func syncFS(batch []pendingFile) error {
	d, err := os.Open(filepath.Dir(batch[0].dest))
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}
