package longtest

import "testing"

// ParallelWithoutRace marks t parallel unless the race detector is on.
// For the kill tests: without -race their rounds mostly wait (a daemon
// starting, MariaDB, a random moment) and run well beside each other,
// still reaching commits; under -race on 2 cores, beside each other, the
// short rounds' kills all came before any commit and proved nothing.
func ParallelWithoutRace(t *testing.T) {
	t.Helper()
	if !raceEnabled {
		t.Parallel()
	}
}
