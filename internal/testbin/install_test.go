package testbin

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rboinc/rboinc/internal/secretfile"
	"github.com/rboinc/rboinc/internal/setup"
)

// TestPreinstallSparesInitsCopy: after Preinstall, setup.Init leaves the
// shared build's files in root/bin (the same files, not copies), the root
// has Init's mode, and the build's files are unchanged.
func TestPreinstallSparesInitsCopy(t *testing.T) {
	build := t.TempDir()
	exe := filepath.Join(build, "rboinc-server")
	hook := filepath.Join(build, "rboinc-hook")
	for _, p := range []string{exe, hook} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n# "+filepath.Base(p)+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(t.TempDir(), "root")
	Preinstall(root, exe)
	if _, err := setup.Init(context.Background(), setup.Options{Root: root, Exe: exe, URLBase: "http://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{exe, hook} {
		a, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.Stat(filepath.Join(root, "bin", filepath.Base(p)))
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(a, b) {
			t.Errorf("root/bin/%s is a copy, not the build's file", filepath.Base(p))
		}
		if got, _ := os.ReadFile(p); string(got) != "#!/bin/sh\n# "+filepath.Base(p)+"\n" {
			t.Errorf("the build's %s changed: %q", filepath.Base(p), got)
		}
	}
	if fi, err := os.Stat(root); err != nil || fi.Mode().Perm()&^secretfile.RootMode != 0 {
		t.Errorf("root's mode: %v, %v (at most %v)", fi.Mode(), err, secretfile.RootMode)
	}
}
