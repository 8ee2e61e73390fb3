package client

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// RetrieveStateDir is where rboinc-retrieve keeps what it remembers of its
// download directories (their locks, the events already reported), so that
// nothing but fetched files lands in them: rboinc/retrieve under
// $XDG_STATE_HOME, else ~/.local/state (on Windows the user's local
// application data). It is "" when there is none (no home directory).
func RetrieveStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "rboinc", "retrieve")
	}
	if runtime.GOOS != "windows" {
		if h, err := os.UserHomeDir(); err == nil && h != "" {
			return filepath.Join(h, ".local", "state", "rboinc", "retrieve")
		}
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "rboinc", "retrieve")
	}
	return ""
}

// CanonicalDir is dir as a lock and a cursor are keyed on: absolute, its
// symbolic links resolved as far as it exists, so that two names of one
// directory share them.
func CanonicalDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	// Resolve the longest part that exists; the rest is not made yet.
	rest := ""
	for p := abs; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest), nil
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// stateKey names what is kept for the parts given (a directory; a server,
// a user and a directory) by a hash: any path or address fits a file name.
func stateKey(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\n")))
	return hex.EncodeToString(sum[:16])
}

// RetrieveLockPath is the lock of the download directory dir (canonical)
// in state, the state directory: one per directory, whatever the server
// or user, as the lock kept in the directory was.
func RetrieveLockPath(state, dir string) string {
	return filepath.Join(state, "locks", stateKey(dir)+".lock")
}

// EventsCursorPath is where the last event reported for a group's
// retrievals into dir (canonical) from server as user is kept in state.
func EventsCursorPath(state, server, user, dir, group string) string {
	return filepath.Join(state, "events", stateKey(server, user, dir)+"-"+group)
}

// LegacyEventsCursor is where rboinc-retrieve kept that cursor before:
// in the download directory.
func LegacyEventsCursor(dir, group string) string {
	return filepath.Join(dir, ".rboinc-events-"+group)
}
