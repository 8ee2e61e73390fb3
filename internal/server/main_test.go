package server_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rboinc/rboinc/internal/standin"
)

// TestMain lets this test binary serve as the stand-in's create_work (its
// bin/create_work runs `<server exe> standin create_work ...` in a separate
// process, as BOINC runs its own), so that no build is needed, also not in
// each fuzzing worker.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "standin" && os.Args[2] == "create_work" {
		os.Exit(standin.CreateWorkMain(os.Args[3:], os.Stdin, os.Stdout, os.Stderr))
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// testExe is the program installed as the server binary of test roots.
func testExe(t testing.TB) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// realServer builds the real rboinc-server, for tests that run its other
// entry points (the hook).
func realServer(t testing.TB) string {
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "rboinc-server-test")
		if buildErr == nil {
			out, err := exec.Command("go", "build", "-o", filepath.Join(buildDir, "rboinc-server"), "../../cmd/rboinc-server").CombinedOutput()
			if err != nil {
				buildErr = &buildError{err, out}
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "rboinc-server")
}

type buildError struct {
	err error
	out []byte
}

func (b *buildError) Error() string {
	return "building rboinc-server: " + b.err.Error() + "\n" + string(b.out)
}
