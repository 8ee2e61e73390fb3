package longtest

// Rounds is how many rounds a test that repeats a proof (kills at random
// moments, requests of a leak check) makes: full, or short under the race
// detector unless the long matrix runs. The race detector slows the test
// process several times over, not the programs it runs as processes (the
// shared build is not instrumented), so a short run still reaches every
// path; the full count runs without -race and under -race with
// RBOINC_TEST_LONG=1. .ci/run runs every test that shortens so without
// -race in a later stage (docs/testing.md says which).
func Rounds(full, short int) int {
	if raceEnabled && !On() {
		return short
	}
	return full
}
