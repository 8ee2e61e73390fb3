package client

import (
	"fmt"
	"os"
	"path/filepath"
)

// LockName is the lock file rboinc-retrieve keeps in its download directory.
const LockName = ".rboinc-retrieve.lock"

// Lock is an exclusive hold on a download directory.
type Lock struct{ f *os.File }

// LockDir takes the lock of dir without waiting. When another process
// holds it, the error matches ErrLocked. The lock file is left in place
// on release: removing it would let two processes lock different files.
func LockDir(dir string) (*Lock, error) {
	path := filepath.Join(dir, LockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot create the lock file: %w", err)
	}
	if busy, err := lockExclusive(f); err != nil {
		f.Close()
		if busy {
			return nil, &kindError{msg: "another rboinc-retrieve is running in " + dir, kind: ErrLocked}
		}
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	// Closing the descriptor drops the lock.
	return l.f.Close()
}
