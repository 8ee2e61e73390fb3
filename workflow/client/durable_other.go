//go:build !linux

package client

import (
	"errors"
	"os"
	"path/filepath"
)

// syncContents syncs each file of the batch (no syncfs here).
func syncContents(batch []pendingFile) error {
	for _, f := range batch {
		if err := syncFile(f.tmp); err != nil {
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
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	return nil
}

// syncPresent makes files already in place durable: each file, then each
// directory. A file found under another of its names (x_1.log for
// x_1.log.gz) is the scientist's own: only its directory is synced.
func syncPresent(paths []string) error {
	batch := make([]pendingFile, len(paths))
	for k, p := range paths {
		if err := syncFile(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		batch[k].dest = p
	}
	return syncNames(batch)
}
