package store

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// turnFile is one writer's open of the turn file: open file description
// locks belong to it, not to the process, so writers of one process take
// turns too.
type turnFile struct{ f *os.File }

func openTurns(path string) (*turnFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return &turnFile{f: f}, nil
}

// tryLock takes write lock byte b if it is free.
func (t *turnFile) tryLock(b int64) (bool, error) {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: b, Len: 1}
	err := unix.FcntlFlock(t.f.Fd(), unix.F_OFD_SETLK, &lk)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return false, nil
	}
	return err == nil, err
}

func (t *turnFile) unlock(b int64) {
	lk := unix.Flock_t{Type: unix.F_UNLCK, Whence: 0, Start: b, Len: 1}
	unix.FcntlFlock(t.f.Fd(), unix.F_OFD_SETLK, &lk)
}

func (t *turnFile) close() { t.f.Close() }
