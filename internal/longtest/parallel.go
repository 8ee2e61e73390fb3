package longtest

import (
	"flag"
	"strconv"
	"testing"
)

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

// AtLeastAtOnce raises go test's -parallel to n unless it was given, for
// a package whose parallel tests mostly wait on their processes and
// servers: the default, one test per CPU, left a 2-core machine half
// idle. TestMain calls it after flag.Parse.
func AtLeastAtOnce(n int) {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if p := flag.Lookup("test.parallel"); !given && p != nil {
		if cur, err := strconv.Atoi(p.Value.String()); err == nil && cur < n {
			p.Value.Set(strconv.Itoa(n))
		}
	}
}
