//go:build unix && !linux

package client

import "os"

func syncFile(p string) error { return syncPath(p) }

func syncDir(dir string) error { return syncPath(dir) }

func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
