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
