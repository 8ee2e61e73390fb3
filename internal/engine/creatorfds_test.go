package engine_test

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/longtest"
	"github.com/rboinc/rboinc/internal/spool"
	"github.com/rboinc/rboinc/internal/store"
)

// TestCreatorDescriptorsFlat: a long-running creator keeps no descriptor
// or goroutine per step it creates. Chains advance step by step through
// the spool (as the hook leaves their outputs) while RunCreator runs; the
// process's descriptors and goroutines after many steps are those after a
// few.
func TestCreatorDescriptorsFlat(t *testing.T) {
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	f := newFixture(t)
	const chains = 4
	// 60 rounds; 30 under -race (see longtest.Rounds): a descriptor or
	// goroutine kept per step still shows as 80 more after the first 10 rounds.
	rounds := longtest.Rounds(60, 30)
	wus := f.submitMany("g", chains, rounds+20)
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- f.e.RunCreator(ctx, 20*time.Millisecond, nil) }()
	defer func() { cancel(); <-done }()
	step := 0
	advance := func() {
		t.Helper()
		for _, w0 := range wus {
			c, _, err := f.e.State().StepByWU(f.ctx, w0)
			if err != nil {
				t.Fatal(err)
			}
			wu := c.WU(step)
			if _, err := spool.Accept(f.e.Root, boinc.HookCall{WUName: wu, Files: f.outputs(wu)}); err != nil {
				t.Fatal(err)
			}
		}
		spool.AskPass(f.e.Root)
		step++
		deadline := time.Now().Add(30 * time.Second)
		for _, w0 := range wus {
			for f.stepState(w0, step) != store.StateQueued {
				if time.Now().After(deadline) {
					t.Fatalf("step %d of %s is %s after 30 s", step, w0, f.stepState(w0, step))
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	settle := func() (int, int) {
		time.Sleep(200 * time.Millisecond)
		runtime.GC()
		ents, _ := os.ReadDir("/proc/self/fd")
		return len(ents), runtime.NumGoroutine()
	}
	for range 10 {
		advance()
	}
	fd0, g0 := settle()
	for range rounds - 10 {
		advance()
	}
	fd1, g1 := settle()
	t.Logf("after 10 rounds (%d steps): %d descriptors, %d goroutines; after %d (%d steps): %d, %d", 10*chains, fd0, g0, rounds, rounds*chains, fd1, g1)
	if fd1 > fd0+5 {
		t.Errorf("open descriptors grew from %d to %d", fd0, fd1)
	}
	if g1 > g0+5 {
		t.Errorf("goroutines grew from %d to %d", g0, g1)
	}
}
