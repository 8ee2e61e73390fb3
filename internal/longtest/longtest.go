// Package longtest is the switch for the long test matrix: the tests that
// repeat a proof on another deployment or database (the end-to-end scripts
// under Apache and on MariaDB) or under a heavier load, which `go test
// ./...` leaves out so that the README's test command takes minutes.
// RBOINC_TEST_LONG=1 runs them; .ci/run sets it for a stage of its own.
package longtest

import (
	"os"
	"testing"
)

// Env is the variable that runs the long matrix when set to 1.
const Env = "RBOINC_TEST_LONG"

// On tells whether the long matrix runs.
func On() bool { return os.Getenv(Env) == "1" }

// Skip skips t unless the long matrix runs, saying what it is and how to
// run it.
func Skip(t testing.TB, what string) {
	t.Helper()
	if !On() {
		t.Skipf("%s: in the long matrix (%s=1 runs it; .ci/run does)", what, Env)
	}
}
