//go:build unix

package client

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockExclusive takes an exclusive flock of f without waiting; busy tells
// that another process holds it.
func lockExclusive(f *os.File) (busy bool, err error) {
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	return errors.Is(err, unix.EWOULDBLOCK), err
}
