package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailedSetupUnmounts: a soak whose site cannot be set up (here: no
// rboinc-server to init it with) leaves no tmpfs mounted behind it; the
// soak runs as root in CI, where a mount left over outlives the run.
func TestFailedSetupUnmounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts a tmpfs")
	}
	t.Setenv("TMPDIR", os.Getenv("TMPDIR"))
	work := t.TempDir()
	mnt := filepath.Join(work, "rootfs")
	t.Cleanup(func() {
		if mounted(t, mnt) {
			exec.Command("umount", mnt).Run()
		}
	})
	o := options{bin: t.TempDir(), work: work, faults: "all", tmpfsSize: "16m"}
	_, err := newSoak(context.Background(), o)
	if err == nil {
		t.Fatal("a soak without rboinc-server was set up")
	}
	if mounted(t, mnt) {
		t.Fatalf("setup failed (%v) and left %s mounted", err, mnt)
	}
}

// mounted tells whether dir is a mount point of this mount namespace.
func mounted(t *testing.T, dir string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}
