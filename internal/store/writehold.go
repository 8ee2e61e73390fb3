package store

import (
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

// A write transaction holds the state database's write lock (SQLite: the
// whole file) from its BEGIN IMMEDIATE to its commit; every other writer,
// of this process or another, waits behind it, for at most the busy
// timeout (20 s) before it fails with SQLITE_BUSY. Each transaction's
// hold is timed: one held longer than longWriteHold is logged with the
// function that opened it, and the longest is kept for the tests.
const longWriteHold = 2 * time.Second

// longestWriteHold is the longest write transaction of this process, in
// nanoseconds.
var longestWriteHold atomic.Int64

// LongestWriteHold is the longest time a write transaction of this process
// held the state database's write lock; reset sets it back to zero.
func LongestWriteHold(reset bool) time.Duration {
	if reset {
		return time.Duration(longestWriteHold.Swap(0))
	}
	return time.Duration(longestWriteHold.Load())
}

// holdWatch is called when a write transaction opens: one still open
// after stillHeldAfter is logged then, with its opener (a transaction that
// outlasts the busy timeout makes others fail before it ends and its own
// timing is logged, if ever). The returned function is called when it
// ends.
func holdWatch() func() {
	t0 := time.Now()
	opener := txCaller()
	timer := time.AfterFunc(stillHeldAfter, func() {
		slog.Warn("a write transaction still holds the state database's write lock", "ms", time.Since(t0).Milliseconds(), "opened_by", opener)
	})
	return func() {
		timer.Stop()
		writeHeld(t0, opener)
	}
}

// stillHeldAfter: see holdWatch.
const stillHeldAfter = 10 * time.Second

// writeHeld notes that a write transaction opened at t0 by opener has
// ended.
func writeHeld(t0 time.Time, opener string) {
	d := time.Since(t0)
	for {
		old := longestWriteHold.Load()
		if int64(d) <= old || longestWriteHold.CompareAndSwap(old, int64(d)) {
			break
		}
	}
	if d > longWriteHold {
		slog.Warn("a write transaction held the state database's write lock long: other writers waited behind it",
			"ms", d.Milliseconds(), "opened_by", opener)
	}
}

// txCaller names the first function outside Tx and Batch that opened the
// transaction.
func txCaller() string {
	pcs := make([]uintptr, 16)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !strings.HasSuffix(f.Function, "store.(*DB).Tx") && !strings.HasSuffix(f.Function, "store.(*DB).Batch") && !strings.HasSuffix(f.Function, "store.holdWatch") {
			return f.Function
		}
		if !more {
			return ""
		}
	}
}
