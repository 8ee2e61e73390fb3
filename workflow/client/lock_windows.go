package client

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockExclusive locks f's first byte exclusively without waiting; busy
// tells that another process holds it.
func lockExclusive(f *os.File) (busy bool, err error) {
	var ol windows.Overlapped
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	return errors.Is(err, windows.ERROR_LOCK_VIOLATION), err
}
