package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rboinc/rboinc/workflow/client"
)

// TestCursorWriteFollowsNoPlantedLink: without a state directory to write
// (here $XDG_STATE_HOME lies under a file), the events cursor stays in the
// download directory, which others may write to (a group's shared
// directory). A symbolic link planted at the cursor's temporary name must
// not make the retrieval write through it into a file of the user's.
func TestCursorWriteFollowsNoPlantedLink(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", filepath.Join(blocker, "state"))
	var calls int
	url := eventsServer(t, &calls)
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "bashrc")
	if err := os.WriteFile(victim, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, ".rboinc-events-g.new")); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runRetrieve("-url", url, "-authenticator", "t", "-group", "g", "-into", dir)
	if code != client.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "mine\n" {
		t.Fatalf("the retrieval wrote through a link planted in the download directory: the user's file now reads %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".rboinc-events-g")); err != nil || string(b) != "7\n" {
		t.Fatalf("cursor: %q %v", b, err)
	}
}
