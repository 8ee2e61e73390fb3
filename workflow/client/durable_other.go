//go:build !linux

package client

import (
	"os"
	"path/filepath"
)

// syncContents syncs each file of the batch (no syncfs here).
func syncContents(batch []pendingFile) error {
	for _, f := range batch {
		if err := syncPath(f.tmp); err != nil {
			return err
		}
	}
	return nil
}

// syncNames syncs each directory the batch was renamed into.
func syncNames(batch []pendingFile) error {
	done := map[string]bool{}
	for _, f := range batch {
		dir := filepath.Dir(f.dest)
		if done[dir] {
			continue
		}
		done[dir] = true
		if err := syncPath(dir); err != nil {
			return err
		}
	}
	return nil
}

func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
