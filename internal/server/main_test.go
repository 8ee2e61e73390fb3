package server_test

import (
	"testing"

	"github.com/rboinc/rboinc/internal/testbin"
)

// testExe is the program installed as the server binary of test roots:
// the real rboinc-server of the run's shared build, whose `standin
// create_work` each submission runs (not this test binary, which under
// -race starts and runs several times slower).
func testExe(t testing.TB) string {
	return testbin.Path(t, testbin.Server)
}

// realServer is the real rboinc-server of the run's shared build, for
// tests that run its other entry points (the hook).
func realServer(t testing.TB) string {
	return testbin.Path(t, testbin.Server)
}
