package store

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// turnFile is one writer's open of the turn file: open file description
// locks belong to it, not to the process, so writers of one process take
// turns too.
type turnFile struct{ f *os.File }

// openTurns opens the turn file of the database at db. A file this
// process may not write (another user's) means no turns: SQLite's busy
// handler then orders this writer alone, as before there were turns.
func openTurns(db string) (*turnFile, error) {
	path := db + "-writers"
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = createTurns(path, db)
	}
	if errors.Is(err, fs.ErrPermission) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &turnFile{f: f}, nil
}

// createTurns makes the turn file with the database's mode and owner, as
// SQLite makes its -wal and -shm files: made by root (a command run with
// sudo), it must stay usable by the database's owner.
func createTurns(path, db string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(db); err == nil {
		f.Chmod(fi.Mode().Perm())
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
			f.Chown(int(st.Uid), int(st.Gid))
		}
	}
	return f, nil
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
