package engine

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFailStreakLogsOnceAndBacksOff: a failure repeated every pass logs
// once (and again when it changes), waits longer each time up to the cap,
// and the recovery is logged once.
func TestFailStreakLogsOnceAndBacksOff(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var f failStreak
	full := fmt.Errorf("writing: %w", syscall.ENOSPC)
	var waits []time.Duration
	for range 100 {
		waits = append(waits, f.fail(log, "creating", full, 100*time.Millisecond))
	}
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Fatalf("%d log lines for 100 equal failures, want 1:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "disk is full") {
		t.Errorf("a full disk is not named as the cause: %s", buf.String())
	}
	if waits[0] != 100*time.Millisecond || waits[1] != 200*time.Millisecond || waits[99] != 30*time.Second {
		t.Errorf("waits %v ... %v, want 100ms, 200ms ... 30s", waits[:3], waits[99])
	}
	f.fail(log, "creating", errors.New("another cause"), 100*time.Millisecond)
	f.ok(log, "creating")
	f.ok(log, "creating")
	if n := strings.Count(buf.String(), "\n"); n != 3 || !strings.Contains(buf.String(), "works again") {
		t.Fatalf("want the changed failure and one recovery line:\n%s", buf.String())
	}
}
