package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWritersFileTakesTheDatabasesOwner: the turn file made by root (a
// command run with sudo) gets the state database's owner and mode, as
// SQLite's -wal and -shm files do; root-owned, it would leave the server
// (the database's owner) without turns.
func TestWritersFileTakesTheDatabasesOwner(t *testing.T) {
	if onMariaDB() {
		t.Skip("SQLite's turn file")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a file another user owns")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	const owner, group = 65534, 65533
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := os.Chown(path, owner, group); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	os.Remove(path + "-writers")
	if err := db.Tx(ctx, func(tx *sql.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path + "-writers")
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != owner || st.Gid != group || fi.Mode().Perm() != 0o640 {
		t.Fatalf("turn file made by root: uid %d gid %d mode %v, want the database's %d %d 0640", st.Uid, st.Gid, fi.Mode().Perm(), owner, group)
	}
}
