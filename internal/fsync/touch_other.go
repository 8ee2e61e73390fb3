//go:build !linux

package fsync

import "os"

// touchDir changes dir: a file created and removed there.
func touchDir(dir string) error {
	f, err := os.CreateTemp(dir, ".barrier-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
