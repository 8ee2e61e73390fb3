package server_test

import (
	"os"
	"testing"

	"github.com/rboinc/rboinc/internal/standin"
	"github.com/rboinc/rboinc/internal/testbin"
)

// TestMain lets this test binary serve as the stand-in's create_work (its
// bin/create_work runs `<server exe> standin create_work ...` in a separate
// process, as BOINC runs its own), so that no build is needed, also not in
// each fuzzing worker.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "standin" && os.Args[2] == "create_work" {
		os.Exit(standin.CreateWorkMain(os.Args[3:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// testExe is the program installed as the server binary of test roots.
func testExe(t testing.TB) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// realServer is the real rboinc-server of the run's shared build, for
// tests that run its other entry points (the hook).
func realServer(t testing.TB) string {
	return testbin.Path(t, testbin.Server)
}
