package main

import (
	"context"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
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

// The end state a chain must reach: a stopped chain ends done exactly when
// every step is done (its last step was in BOINC at the stop and
// completed), stopped when steps were left; an aborted one as the status
// right after the abort showed it; a stopped and resumed one done.
func TestWantState(t *testing.T) {
	st := func(state string, done, num int) wire.ChainStatus {
		return wire.ChainStatus{State: state, StepsDone: done, NumSteps: num}
	}
	for _, tc := range []struct {
		c    chain
		cs   wire.ChainStatus
		want string
	}{
		{chain{kind: kindPlain, steps: 2}, st("done", 2, 2), "done"},
		{chain{kind: kindBad, steps: 2}, st("failed", 0, 2), "failed"},
		{chain{kind: kindPlain, steps: 2, control: ctlStop}, st("done", 2, 2), "done"},
		{chain{kind: kindPlain, steps: 2, control: ctlStop}, st("stopped", 2, 2), "done"}, // the old rule: stopped with every step done
		{chain{kind: kindPlain, steps: 2, control: ctlStop}, st("stopped", 1, 2), "stopped"},
		{chain{kind: kindPlain, steps: 2, control: ctlStop}, st("done", 1, 2), "stopped"},
		{chain{kind: kindPlain, steps: 1, control: ctlStop}, st("stopped", 0, 1), "stopped"},
		{chain{kind: kindPlain, steps: 2, control: ctlAbort, mustStay: "aborted"}, st("done", 2, 2), "aborted"},
		{chain{kind: kindPlain, steps: 2, control: ctlAbort, mustStay: "done"}, st("done", 2, 2), "done"},
		{chain{kind: kindPlain, steps: 2, control: ctlAbort}, st("stopped", 1, 2), "aborted"},
		{chain{kind: kindPlain, steps: 2, control: ctlResume}, st("stopped", 2, 2), "done"},
		{chain{kind: kindPlain, steps: 3, control: ctlExtend}, st("done", 3, 3), "done"},
	} {
		c := tc.c
		if got := wantState(&c, tc.cs); got != tc.want {
			t.Errorf("%s chain, control %q, ended %s with %d of %d steps: want %s, wantState says %s",
				c.kind, c.control, tc.cs.State, tc.cs.StepsDone, tc.cs.NumSteps, tc.want, got)
		}
	}
}
