package client

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LockName is the lock file rboinc-retrieve kept in its download directory
// (before its lock moved to the user's state directory, RetrieveLockPath);
// one found there is locked too, so that an older rboinc-retrieve running
// into the same directory is still excluded.
const LockName = ".rboinc-retrieve.lock"

// Lock is an exclusive hold on a download directory.
type Lock struct{ files []*os.File }

// LockDir takes the lock of dir, kept in dir, without waiting. When
// another process holds it, the error matches ErrLocked. The lock file is
// left in place on release: removing it would let two processes lock
// different files.
func LockDir(dir string) (*Lock, error) {
	return LockFile(filepath.Join(dir, LockName), dir)
}

// LockFile takes the lock of the download directory dir kept in the file
// at path (made if needed), and the lock file an older rboinc-retrieve
// left in dir, if any, without waiting. When another process holds
// either, the error matches ErrLocked.
func LockFile(path, dir string) (*Lock, error) {
	l := &Lock{}
	f, err := lockOne(path, dir, true)
	if err != nil {
		return nil, err
	}
	l.files = append(l.files, f)
	if legacy := filepath.Join(dir, LockName); legacy != path {
		f, err := lockOne(legacy, dir, false)
		if err != nil {
			l.Unlock()
			return nil, err
		}
		if f != nil {
			l.files = append(l.files, f)
		}
	}
	return l, nil
}

// lockOne locks the file at path; without create, a missing file is no
// lock (nil, nil).
func lockOne(path, dir string, create bool) (*os.File, error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if !create && errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
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
	return f, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	// Closing the descriptors drops the lock.
	var first error
	for _, f := range l.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
