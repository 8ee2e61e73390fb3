// Package testbin builds rboinc's programs once for all the tests of a
// run. Tests that run the real programs as separate processes (the
// stand-in's create_work, the hook, the e2e scripts' commands) used to
// build them each in their own TestMain: `go test ./...` linked
// rboinc-server five times or more. Build puts them in a directory under
// os.TempDir named for a hash of the module's source, under a file lock,
// so every test package of a run (and every later run of the same source)
// takes the same build, and a change to the source gets a new one.
package testbin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The programs tests ask for, as paths of their packages in the module.
const (
	Server   = "cmd/rboinc-server"
	Hook     = "cmd/rboinc-hook"
	Submit   = "cmd/rboinc-submit"
	Retrieve = "cmd/rboinc-retrieve"
	GAHP     = "cmd/rboinc-gahp"

	// EngineSubmitter is the engine tests' submitting process (not a
	// command of rboinc's).
	EngineSubmitter = "internal/testbin/submitter"
)

// prefix names the build directories (and their locks) under os.TempDir.
const prefix = "rboinc-testbin-"

// keep is how long a build directory nobody used stays: older ones are
// removed when a new build is made, so that edits do not fill /tmp.
const keep = 6 * time.Hour

var (
	mu    sync.Mutex
	dirs  = map[string]string{}   // module root -> build directory, per process
	files = map[string][]string{} // module root -> the files hashed
)

// Build returns the directory holding the programs of pkgs (paths of
// packages in the module, such as Server; each binary is named for the
// last element of its path), built from the module's current source on
// first use by any test process.
func Build(pkgs ...string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	dir, ok := dirs[root]
	if !ok {
		sum, hashed, err := sourceHash(root)
		if err != nil {
			return "", fmt.Errorf("hashing the module's source for the test build: %w", err)
		}
		dir = filepath.Join(os.TempDir(), prefix+sum)
		dirs[root], files[root] = dir, hashed
	} else {
		// Looked at again: go test's cache watches what a test looks at
		// once m.Run has begun, and the first call may have come from
		// TestMain, before it.
		for _, p := range files[root] {
			os.Stat(p)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lock(dir + ".lock")
	if err != nil {
		return "", fmt.Errorf("locking the test build %s: %w", dir, err)
	}
	defer unlock()
	var missing []string
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, exeName(p))); err != nil {
			missing = append(missing, p)
		}
	}
	now := time.Now()
	os.Chtimes(dir, now, now) // in use: not pruned
	if len(missing) == 0 {
		return dir, nil
	}
	// Built beside the directory and renamed into it one by one: a
	// program in dir is always whole, also after a build that failed.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".build")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	args := []string{"build", "-o", tmp + string(filepath.Separator)}
	for _, p := range missing {
		args = append(args, "./"+filepath.ToSlash(p))
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", strings.Join(missing, " "), err, out)
	}
	for _, p := range missing {
		if err := os.Rename(filepath.Join(tmp, exeName(p)), filepath.Join(dir, exeName(p))); err != nil {
			return "", err
		}
	}
	prune(dir)
	return dir, nil
}

// Dir is Build for a test: a failed build fails it.
func Dir(t testing.TB, pkgs ...string) string {
	t.Helper()
	dir, err := Build(pkgs...)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Path is the built program of pkg, building it if need be.
func Path(t testing.TB, pkg string) string {
	t.Helper()
	return filepath.Join(Dir(t, pkg), exeName(pkg))
}

func exeName(pkg string) string {
	name := filepath.Base(filepath.FromSlash(pkg))
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return name
}

// sourceHash is a hash of everything a build of the module's programs
// reads: go.mod, go.sum, the Go files and embedded files of the module
// (not its tests and testdata), and what chooses the toolchain and its
// flags; and the files it read. Reading them in a test (not in TestMain,
// before go test's log of what the test looks at begins) also keeps a
// cached result of the test from outliving a change to the programs.
func sourceHash(root string) (string, []string, error) {
	h := sha256.New()
	for _, k := range []string{"GOFLAGS", "GOOS", "GOARCH", "CGO_ENABLED", "GOEXPERIMENT", "GOTOOLCHAIN"} {
		fmt.Fprintf(h, "%s=%s\n", k, os.Getenv(k))
	}
	if goExe, err := exec.LookPath("go"); err == nil {
		if fi, err := os.Stat(goExe); err == nil {
			fmt.Fprintf(h, "go %s %d %d\n", goExe, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, "_test.go") || !d.Type().IsRegular() {
			return nil
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	slices.Sort(files)
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return "", nil, err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", nil, err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:20], files, nil
}

// prune removes the build directories besides current that nobody used
// for keep (each under its own lock, skipped while another process holds
// it).
func prune(current string) {
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(current), prefix+"*"))
	for _, d := range old {
		if d == current || strings.Contains(filepath.Base(d), ".") {
			continue
		}
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < keep {
			continue
		}
		unlock, err := tryLock(d + ".lock")
		if err != nil {
			continue
		}
		os.RemoveAll(d)
		os.Remove(d + ".lock")
		unlock()
	}
}

// moduleRoot is the directory of go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
