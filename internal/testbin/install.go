package testbin

import (
	"os"
	"path/filepath"

	"github.com/rboinc/rboinc/internal/secretfile"
)

// Preinstall hard-links the server program exe (a program of the shared
// build) into root/bin as rboinc-server, and the rboinc-hook beside it when
// there is one: where setup.Init installs them. Init then finds the same
// file in place and copies nothing. A root made for a test used to get a
// copy of both, 35 MB written and synced (0.6-1.5 s of wall time on a
// loaded machine), in each of the hundreds of roots a test run makes; the
// copy itself is tested by internal/setup. Nothing writes to these files
// in place (Init replaces a different one by a rename), so the shared
// build is not changed through the links. Where a link cannot be made (root
// on another file system), Init copies as before.
func Preinstall(root, exe string) {
	// The root as Init makes it (a root not made yet would otherwise get
	// MkdirAll's mode, which Init keeps).
	if os.MkdirAll(root, secretfile.RootMode) != nil {
		return
	}
	bin := filepath.Join(root, "bin")
	if os.Mkdir(bin, 0o755) != nil && !dirExists(bin) {
		return
	}
	hook := filepath.Join(filepath.Dir(exe), "rboinc-hook")
	if _, err := os.Stat(hook); err == nil {
		// The hook first: Init copies it only when it copies the server.
		if os.Link(hook, filepath.Join(bin, "rboinc-hook")) != nil {
			return
		}
	}
	os.Link(exe, filepath.Join(bin, "rboinc-server"))
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
