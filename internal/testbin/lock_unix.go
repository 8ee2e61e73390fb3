//go:build unix

package testbin

import (
	"os"
	"syscall"
)

// lock holds an exclusive lock on the file path (created if need be)
// until unlock: the test processes of one run build one at a time.
func lock(path string) (unlock func(), err error) { return flock(path, syscall.LOCK_EX) }

// tryLock is lock without waiting: an error if another process holds it.
func tryLock(path string) (unlock func(), err error) {
	return flock(path, syscall.LOCK_EX|syscall.LOCK_NB)
}

func flock(path string, how int) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
