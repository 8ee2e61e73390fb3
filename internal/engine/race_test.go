//go:build race

package engine_test

// raceEnabled: the tests run under the race detector (-race).
const raceEnabled = true
