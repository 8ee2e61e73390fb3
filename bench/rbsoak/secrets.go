package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/secretfile"
	"github.com/rboinc/rboinc/internal/setup"
)

// The work directory holds the users' tokens (the journal's site record)
// and the URL of BOINC's database, and the server roots below it their
// own secrets: the driver keeps it closed to other users of the host, and
// the end checks say so of every such file.

// privateDir makes dir, closed to every other user of the host also when
// it was there already (bench/soak.sh's mkdir, a umask of 022).
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// secretPaths are the run's files that hold a token or a password.
func (s *soak) secretPaths() []string {
	ps := []string{filepath.Join(s.o.work, journalFile), s.boincDBFile}
	roots := []string{s.root}
	if s.hostB != nil {
		roots = append(roots, s.hostB.root)
	}
	for _, r := range roots {
		if r == "" {
			continue
		}
		ps = append(ps, filepath.Join(r, engine.ConfigFile), filepath.Join(r, setup.DAVPasswdFile))
		for _, suffix := range []string{"", "-wal", "-shm"} {
			ps = append(ps, filepath.Join(r, engine.StateFile+suffix))
		}
	}
	return ps
}

// checkSecrets is a problem for every file of secretPaths open to other
// users, and for a work directory they may enter.
func (s *soak) checkSecrets() {
	if fi, err := os.Stat(s.o.work); err == nil && fi.Mode().Perm()&0o007 != 0 {
		s.problem("the work directory %s holds the users' tokens and is open to every user of the host (mode %04o)", s.o.work, fi.Mode().Perm())
	}
	n := 0
	for _, p := range s.secretPaths() {
		if p == "" {
			continue
		}
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			s.problem("secrets: %v", err)
			continue
		}
		n++
		if why := secretfile.Exposed(fi.Mode()); why != "" {
			s.problem("%s holds a token or a password and is %s", p, why)
		}
	}
	fmt.Printf("secrets: %d files holding tokens or passwords checked private, the work directory closed to others\n", n)
}
