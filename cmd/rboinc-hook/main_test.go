package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rboinc/rboinc/internal/spool"
)

// Only the paths that return are tested here: the others replace the
// process with rboinc-server (the e2e scripts run them).

func TestSpoolsWhileTheCreatorRuns(t *testing.T) {
	root, up := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "rboinc.json"), []byte("{}"), 0o644)
	lock, err := spool.Lock(root, false) // the creator
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	os.MkdirAll(spool.Dir(root), 0o755)
	spool.MarkCall(root) // a call just returned: this one is in a stream
	out := filepath.Join(up, "w-A_g-0-2-RND0001_0_r1_0")
	os.WriteFile(out, []byte("x"), 0o644)
	if code := run([]string{"--root", root, "5", out}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	names, err := spool.Entries(root)
	if err != nil || len(names) != 1 {
		t.Fatalf("entries %v, %v", names, err)
	}
	call, err := spool.Read(root, names[0])
	if err != nil || call.WUName != "w-A_g-0-2-RND0001" || call.WUID != 5 || len(call.Files) != 1 {
		t.Fatalf("spooled %+v, %v", call, err)
	}
	if data, err := os.ReadFile(call.Files[0]); err != nil || string(data) != "x" {
		t.Fatalf("output %q, %v", data, err)
	}
}

func TestRefusesWithoutARoot(t *testing.T) {
	t.Setenv("RBOINC_ROOT", "")
	out := filepath.Join(t.TempDir(), "w-A_g-0-2-RND0001_0_r1_0")
	if code := run([]string{"5", out}); code != 2 {
		t.Fatalf("no root: exit %d, want 2", code)
	}
	notRoot := t.TempDir()
	if code := run([]string{"--root", notRoot, "5", out}); code != 1 {
		t.Fatalf("not a server root: exit %d, want 1 (BOINC retries)", code)
	}
	if names, _ := spool.Entries(notRoot); len(names) != 0 {
		t.Fatalf("spooled into a directory that is not a server root: %v", names)
	}
}

// TestVersionAndHelp: --version and --help need no server root and exit 0
// (BOINC never calls the hook with one word alone).
func TestVersionAndHelp(t *testing.T) {
	t.Setenv("RBOINC_ROOT", "")
	for _, a := range []string{"--version", "-version", "--help", "-h"} {
		if code := run([]string{a}); code != 0 {
			t.Errorf("%s: exit %d", a, code)
		}
	}
}
