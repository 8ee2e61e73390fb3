package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/engine"
)

// The work directory and the journal (the users' tokens) are private,
// also when they were made open before (bench/soak.sh's mkdir under a
// umask of 022, an older run's journal).
func TestWorkAndJournalPrivate(t *testing.T) {
	work := filepath.Join(t.TempDir(), "w")
	os.Mkdir(work, 0o755)
	os.Chmod(work, 0o755)
	if err := privateDir(work); err != nil {
		t.Fatal(err)
	}
	jp := filepath.Join(work, journalFile)
	os.WriteFile(jp, []byte("{\"t\":\"options\"}\n"), 0o644)
	os.Chmod(jp, 0o644)
	j, err := openJournal(jp, false)
	if err != nil {
		t.Fatal(err)
	}
	j.close()
	fresh := filepath.Join(t.TempDir(), journalFile)
	j, err = openJournal(fresh, false)
	if err != nil {
		t.Fatal(err)
	}
	j.close()
	for p, want := range map[string]os.FileMode{work: 0o700, jp: 0o600, fresh: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %04o", p, fi.Mode(), err, want)
		}
	}
}

// The end check finds a file holding secrets that other users may read,
// and a work directory they may enter; a private run passes.
func TestCheckSecrets(t *testing.T) {
	work := t.TempDir()
	root := filepath.Join(work, "root")
	os.Mkdir(root, 0o750)
	s := &soak{o: options{work: work}, root: root, boincDBFile: filepath.Join(work, "boinc-db.url")}
	os.Chmod(work, 0o700)
	for _, p := range []string{filepath.Join(work, journalFile), s.boincDBFile, filepath.Join(root, engine.StateFile), filepath.Join(root, engine.ConfigFile)} {
		os.WriteFile(p, []byte("secret"), 0o600)
	}
	s.checkSecrets()
	if len(s.problems) != 0 {
		t.Fatalf("a private run: %q", s.problems)
	}
	os.Chmod(filepath.Join(root, engine.StateFile), 0o644)
	os.Chmod(work, 0o755)
	s.checkSecrets()
	if len(s.problems) != 2 || !strings.Contains(strings.Join(s.problems, "\n"), engine.StateFile) {
		t.Fatalf("an open state database and work directory: %q", s.problems)
	}
}
