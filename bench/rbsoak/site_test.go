package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/engine"
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

// TestWebhookEvents: the first -step-events users' webhooks take every
// event, the others' the chain and group events the end check wants (no
// step events); -1 gives every user every event.
func TestWebhookEvents(t *testing.T) {
	for _, c := range []struct {
		user, stepUsers int
		want            string
	}{{0, 1, "all"}, {1, 1, chainEvents}, {2, 1, chainEvents}, {2, -1, "all"}, {0, 0, chainEvents}} {
		if got := webhookEvents(c.user, c.stepUsers); got != c.want {
			t.Errorf("webhookEvents(%d, %d) = %q, want %q", c.user, c.stepUsers, got, c.want)
		}
	}
	evs, err := engine.ParseNotifyEvents(chainEvents)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"chain_done", "chain_failed", "chain_stopped", "chain_aborted", "group_done"} {
		if !slices.Contains(evs, want) {
			t.Errorf("the chain events lack %s, which the end check wants", want)
		}
	}
	if slices.ContainsFunc(evs, func(e string) bool { return strings.HasPrefix(e, "step_") }) {
		t.Errorf("the chain events hold step events: %v", evs)
	}
}

// TestSetStandinSlots: -slots reaches the stand-in's config.xml as
// rboinc_standin_slots, which the stand-in reads.
func TestSetStandinSlots(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.xml")
	os.WriteFile(cfg, []byte("<boinc>\n    <config>\n        <download_dir>d</download_dir>\n        <upload_dir>u</upload_dir>\n    </config>\n</boinc>\n"), 0o600)
	if err := setStandinSlots(cfg, 16); err != nil {
		t.Fatal(err)
	}
	p, err := boinc.LoadProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.StandinSlots != 16 {
		t.Errorf("the stand-in reads %d slots, want 16", p.StandinSlots)
	}
	if fi, _ := os.Stat(cfg); fi.Mode().Perm() != 0o600 {
		t.Errorf("config.xml's mode became %v", fi.Mode())
	}
}
