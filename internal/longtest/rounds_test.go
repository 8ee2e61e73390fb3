package longtest

import "testing"

// TestRounds: short only under -race, and full there too in the long
// matrix.
func TestRounds(t *testing.T) {
	t.Setenv(Env, "")
	want := 50
	if raceEnabled {
		want = 15
	}
	if got := Rounds(50, 15); got != want {
		t.Errorf("Rounds(50, 15) = %d (race %v), want %d", got, raceEnabled, want)
	}
	t.Setenv(Env, "1")
	if got := Rounds(50, 15); got != 50 {
		t.Errorf("Rounds(50, 15) with %s=1 = %d, want 50", Env, got)
	}
}
