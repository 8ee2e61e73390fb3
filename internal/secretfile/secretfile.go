// Package secretfile keeps the server root's files that hold secrets
// private to the project's owner: rboinc.json (a state_db or smtp
// password), the state database (token hashes, webhook signing secrets)
// with its -wal and -shm, dav.htpasswd.
//
// BOINC's daemons (script_assimilator running rboinc's hook, the
// creator), Apache running the CGI program and the administration
// commands all run as the project's owner (see docs/admin.md, "Deploy on a
// BOINC project"), so 0600 is enough. An administrator whose daemons read
// them as another user of the project's group may give them 0640: rboinc
// keeps that group read when it rewrites a file, and nothing more.
package secretfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Mode is the mode of a new file holding secrets.
const Mode fs.FileMode = 0o600

// RootMode is the most a server root holding secret files may allow:
// nothing for other users.
const RootMode fs.FileMode = 0o750

// ModeFrom is the mode to give a secret file that had old: owner read and
// write, plus the group read an administrator gave it (0640), never more.
// A file readable by everyone had its mode from a umask, not from a
// choice: it gets Mode.
func ModeFrom(old fs.FileMode) fs.FileMode {
	if old.Perm()&0o004 != 0 {
		return Mode
	}
	return Mode | old.Perm()&0o040
}

// Tighten takes from path every permission ModeFrom does not keep (a file
// that does not exist is left alone). It changes nothing on a file that
// is private already.
func Tighten(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if want := ModeFrom(fi.Mode()); fi.Mode().Perm() != want {
		if err := os.Chmod(path, want); err != nil {
			return fmt.Errorf("making %s private (mode %04o): %w", path, want, err)
		}
	}
	return nil
}

// TightenDir takes the permissions of other users from a directory.
func TightenDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if p := fi.Mode().Perm(); p&0o007 != 0 {
		if err := os.Chmod(dir, p&^0o007); err != nil {
			return fmt.Errorf("closing %s to other users (mode %04o): %w", dir, p&^0o007, err)
		}
	}
	return nil
}

// Exposed says what is wrong with a secret file's mode ("" nothing): any
// permission for other users, or a group that may write it.
func Exposed(mode fs.FileMode) string {
	p := mode.Perm()
	switch {
	case p&0o004 != 0:
		return fmt.Sprintf("readable by every user of the host (mode %04o)", p)
	case p&0o007 != 0:
		return fmt.Sprintf("open to every user of the host (mode %04o)", p)
	case p&0o020 != 0:
		return fmt.Sprintf("writable by its group (mode %04o)", p)
	}
	return ""
}

// OwnLikeDir gives path, just made, to the owner of its directory when
// this process runs as root, or to the owner of old, the file it replaced
// (nil: none): an administrator who runs a command with sudo must not
// leave a private file the server's user cannot read. (The -wal and -shm
// of an SQLite database follow its owner by themselves.)
func OwnLikeDir(path string, old fs.FileInfo) error {
	if os.Geteuid() != 0 {
		return nil
	}
	st, ok := ownerOf(old)
	if !ok {
		fi, err := os.Stat(filepath.Dir(path))
		if err != nil {
			return err
		}
		if st, ok = ownerOf(fi); !ok {
			return nil
		}
	}
	if err := os.Lchown(path, int(st.Uid), int(st.Gid)); err != nil {
		return fmt.Errorf("giving %s to the owner of its directory: %w", path, err)
	}
	return nil
}

func ownerOf(fi fs.FileInfo) (*syscall.Stat_t, bool) {
	if fi == nil {
		return nil, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return st, ok
}
