//go:build race

package longtest

// raceEnabled: built with the race detector (-race).
const raceEnabled = true
