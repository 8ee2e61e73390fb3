package engine

import (
	"context"
	"testing"
)

// A content staged before staging ended is staged, even to a feeder that
// looked at it just before and finds both its end and the content's done
// when it looks again (descheduled in between, under load): the chains
// were committed already, and the submission was undone with "context
// canceled" (seen once: TestNativeRevivedStepExists/mysql at load 8).
// Not parallel: it sets betweenStagedLooks.
func TestStagerWaitForStagedWinsOverEnd(t *testing.T) {
	defer func() { betweenStagedLooks = nil }()
	bad := 0
	for range 100 { // a select between two ready cases picks either
		s := &stager{done: map[string]chan struct{}{"x": make(chan struct{})}, failed: make(chan struct{})}
		betweenStagedLooks = func() {
			close(s.done["x"])
			s.fail(context.Canceled)
		}
		if err := s.waitFor("x"); err != nil {
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d of 100 contents staged before staging ended were reported failed", bad)
	}
}
