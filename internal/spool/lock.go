package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// LockName is the creator's lock file in the server root: one process at
// a time takes the spool in and creates next steps.
const LockName = "creator.lock"

// ErrBusy means another process holds the creator lock.
var ErrBusy = errors.New("another process is creating work units")

// Lock takes the creator lock of a server root, without waiting unless
// wait is set. Closing the file drops it.
func Lock(root string, wait bool) (*os.File, error) {
	path := filepath.Join(root, LockName)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o664)
	if err != nil {
		return nil, fmt.Errorf("opening the creator lock: %w", err)
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, nil
}
