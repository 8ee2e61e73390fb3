package engine

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFS writes out everything dirty on the file system holding dir
// (syncfs(2)).
func syncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}
