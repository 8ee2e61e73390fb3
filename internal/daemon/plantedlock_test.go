package daemon

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// A symlink planted at pid_<host>/<name>.lock (by a local user who may
// write there, as the web server's group may in a BOINC project) is not
// followed: Begin refuses to start rather than create or lock the file it
// points to.
func TestBeginRefusesPlantedLockSymlink(t *testing.T) {
	project := t.TempDir()
	s := Start{Name: "rboinc_test", Project: project, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	_, lock := s.Files()
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.Symlink(victim, lock); err != nil {
		t.Fatal(err)
	}
	ctx, end, err := Begin(context.Background(), s)
	if err == nil {
		end()
		_ = ctx
		t.Fatal("Begin started with a symlink planted at its lock file")
	}
	if _, serr := os.Lstat(victim); serr == nil {
		t.Fatalf("Begin created the symlink's target %s", victim)
	}
	t.Logf("refused: %v", err)
}

// The lock file is the daemon owner's alone, also when bin/start made it
// readable by all: any user who can open it could take a read lock on it,
// and a daemon refuses to start while another process holds a lock there.
func TestBeginLockFileIsPrivate(t *testing.T) {
	project := t.TempDir()
	s := Start{Name: "rboinc_test", Project: project, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	_, lock := s.Files()
	for _, made := range []bool{false, true} {
		if made { // as bin/start (Python's open(..., 'w')) leaves it
			if err := os.WriteFile(lock, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(lock, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, end, err := Begin(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(lock)
		end()
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("lock file made by bin/start first: %v; its mode is %v, want it private (0600)", made, perm)
		}
	}
}
