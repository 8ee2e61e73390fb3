package longtest

import (
	"flag"
	"strconv"
	"testing"
)

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

// TestParallelWithoutRace: the subtest runs beside its sibling (paused
// until the parent returns) only without -race.
func TestParallelWithoutRace(t *testing.T) {
	order := make(chan string, 2)
	t.Run("group", func(t *testing.T) {
		t.Run("marked", func(t *testing.T) {
			ParallelWithoutRace(t)
			order <- "marked"
		})
		order <- "after"
	})
	first, second := <-order, <-order
	want := []string{"marked", "after"} // run in line: under -race
	if !raceEnabled {
		want = []string{"after", "marked"} // paused until its parent's body ended
	}
	if first != want[0] || second != want[1] {
		t.Errorf("order %s, %s; want %v (race %v)", first, second, want, raceEnabled)
	}
}

func TestAtLeastAtOnce(t *testing.T) {
	p := flag.Lookup("test.parallel")
	old := p.Value.String()
	t.Cleanup(func() { p.Value.Set(old) })
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	n, _ := strconv.Atoi(old)
	AtLeastAtOnce(n + 5)
	want := strconv.Itoa(n + 5)
	if given {
		want = old // -parallel given: it stands
	}
	if got := p.Value.String(); got != want {
		t.Errorf("-parallel %s (given %v) raised to at least %d: %s, want %s", old, given, n+5, got, want)
	}
	AtLeastAtOnce(1) // never lowered
	if got := p.Value.String(); got != want {
		t.Errorf("AtLeastAtOnce(1) changed -parallel from %s to %s", want, got)
	}
}
