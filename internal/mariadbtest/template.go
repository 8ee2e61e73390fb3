package mariadbtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// templatePrefix names, under os.TempDir, the data directories a fresh
// install made, which every later server's install copies. One
// mariadb-install-db took 1.7 to 1.8 processor-seconds (30 to 45 s of
// wall time on a loaded machine); a run of the tests starts some twenty
// servers, each of whose data directories was the same install.
const templatePrefix = "rboinc-mariadbtest-template-"

// templateDir is where the install for these binaries and options is
// kept: named for a hash of the programs (path, size, modification time)
// and the arguments, so an upgraded MariaDB or changed options get a new
// one.
func templateDir(installDB, mariadbd string, args []string) string {
	h := sha256.New()
	for _, p := range []string{installDB, mariadbd} {
		fmt.Fprintf(h, "%s\x00", p)
		if fi, err := os.Stat(p); err == nil {
			fmt.Fprintf(h, "%d %d\x00", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	fmt.Fprintf(h, "%s\x00%d", strings.Join(args, "\x00"), os.Geteuid())
	return filepath.Join(os.TempDir(), templatePrefix+hex.EncodeToString(h.Sum(nil))[:16])
}

// IsTemplate tells whether a name under TMPDIR is such a kept install: a
// cache left there on purpose, not a temporary file a run forgot.
func IsTemplate(name string) bool { return strings.HasPrefix(name, templatePrefix) }

// fromTemplate fills datadir with a copy of the template for these
// programs and arguments, making the template first with install (into a
// directory beside it, renamed into place whole: a reader never sees a
// half-made one; two processes making it at once both succeed, one keeps
// its own). The copy of a stopped server's data directory is one the
// server starts on anywhere: nothing in it names its path.
func fromTemplate(ctx context.Context, installDB, mariadbd string, args []string, dir, datadir string,
	install func(ctx context.Context, dir, datadir string) error) error {
	tmpl := templateDir(installDB, mariadbd, args)
	if _, err := os.Stat(filepath.Join(tmpl, installedMarker)); err != nil {
		work, err := os.MkdirTemp(filepath.Dir(tmpl), filepath.Base(tmpl)+".make")
		if err != nil {
			return err
		}
		defer os.RemoveAll(work)
		if err := install(ctx, dir, filepath.Join(work, "data")); err != nil {
			return err
		}
		if err := keepTemplate(filepath.Join(work, "data"), tmpl, work); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(datadir); err != nil {
		return err
	}
	if err := copyTree(tmpl, datadir); err != nil {
		return fmt.Errorf("copying the installed data directory %s: %w", tmpl, err)
	}
	return nil
}

// keepTemplate renames the fresh install made into place as the template
// tmpl. A rename onto a template another process made meanwhile fails:
// theirs is as good. One there without its marker (a TMPDIR cleaner aged
// the marker, never read, out of it) is no template, and every later
// rename onto it would fail: it is moved into work (removed with it) and
// the rename tried again.
func keepTemplate(made, tmpl, work string) error {
	err := os.Rename(made, tmpl)
	if err == nil {
		return nil
	}
	if _, statErr := os.Stat(filepath.Join(tmpl, installedMarker)); statErr == nil {
		return nil
	}
	if os.Rename(tmpl, filepath.Join(work, "stale")) == nil {
		if err = os.Rename(made, tmpl); err == nil {
			return nil
		}
	}
	if _, statErr := os.Stat(filepath.Join(tmpl, installedMarker)); statErr == nil {
		return nil // another process's, made meanwhile
	}
	return fmt.Errorf("keeping the installed data directory as %s: %w", tmpl, err)
}

// copyTree copies the directories and regular files under src to dst (which
// must not exist), with their permissions; the marker goes last, so a copy
// cut short is made again by the next Start.
func copyTree(src, dst string) error {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(target, info.Mode().Perm())
		case !info.Mode().IsRegular(), rel == installedMarker:
			return nil
		}
		return copyFile(p, target, info.Mode().Perm())
	})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, installedMarker), nil, 0o644)
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
