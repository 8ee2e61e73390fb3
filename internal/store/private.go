package store

import (
	"errors"
	"io/fs"
	"os"

	"github.com/rboinc/rboinc/internal/secretfile"
)

// createPrivate makes a new SQLite state database file with the mode of
// a secret (it holds token hashes and webhook signing secrets) before
// SQLite opens it: SQLite would create it with the process's umask
// (0644, readable by everyone), and gives its -wal and -shm the mode of
// the database file. An existing file is left as it is (init and migrate
// tighten it; doctor reports it).
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, secretfile.Mode)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return secretfile.OwnLikeDir(path, nil)
}
