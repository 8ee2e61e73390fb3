package main

import (
	"context"
	"testing"
	"time"
)

// A soak stopped by a signal (SIGINT, SIGTERM) checked nothing at the end:
// it must not pass.
func TestInterruptedRunFails(t *testing.T) {
	whole, stop := context.WithCancel(context.Background())
	run, cancel := context.WithTimeout(whole, time.Hour)
	defer cancel()
	if why := unfinished(whole, run, time.Hour); why != "" {
		t.Fatalf("a run still going: %q", why)
	}
	stop()
	if why := unfinished(whole, run, time.Hour); why == "" {
		t.Error("an interrupted run judged finished")
	}
	expired, cancel2 := context.WithTimeout(context.Background(), -time.Second)
	defer cancel2()
	if why := unfinished(context.Background(), expired, time.Minute); why == "" {
		t.Error("a run past its -duration judged finished")
	}
}

// A chain stopped while its last step was in BOINC ends stopped with every
// step done, and the server refuses to resume it (store.restartOne): the
// soak then wants it stopped (seen in a SQLite run, 2026-12-06 02:22).
func TestResumeRefusedAllDone(t *testing.T) {
	refused := "resumed 0 chains; not: c17: it has done all its steps: give -extend\n"
	if !resumeRefusedAllDone(refused) {
		t.Errorf("%q not taken for a refusal", refused)
	}
	for _, out := range []string{"resumed 1 chain\n", "resumed 0 chains; not: c17: step 0's inputs are not recorded\n"} {
		if resumeRefusedAllDone(out) {
			t.Errorf("%q taken for a chain that did all its steps", out)
		}
	}
}
