package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLatencyInBatch: observations made inside a Batch are recorded with
// its commit, summed per bucket, and not at all when it rolls back.
func TestLatencyInBatch(t *testing.T) {
	ctx := context.Background()
	db, _ := openBatchDB(t)
	if err := db.ObserveLatency(ctx, LatencyHook, 2*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	err := db.Batch(ctx, func(ctx context.Context) error {
		for _, d := range []time.Duration{time.Millisecond, 3 * time.Millisecond, 7 * time.Second} {
			if err := db.ObserveLatency(ctx, LatencyHook, d); err != nil {
				return err
			}
		}
		return db.ObserveLatency(ctx, LatencyCreateWork, 20*time.Millisecond)
	})
	if err != nil {
		t.Fatal(err)
	}
	failed := errors.New("the batch fails")
	if err := db.Batch(ctx, func(ctx context.Context) error {
		db.ObserveLatency(ctx, LatencyHook, time.Millisecond)
		return failed
	}); !errors.Is(err, failed) {
		t.Fatalf("the failing batch returned %v", err)
	}
	got, err := db.Latencies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hook := got[LatencyHook]
	if hook.Count != 4 || hook.Counts[0] != 3 || hook.Counts[10] != 1 {
		t.Errorf("hook latencies: %d observations, buckets %v; want 4: 3 in the first, 1 in the 10 s one", hook.Count, hook.Counts)
	}
	if want := 0.002 + 0.001 + 0.003 + 7; hook.Sum < want-1e-9 || hook.Sum > want+1e-9 {
		t.Errorf("hook latencies sum to %g s, want %g", hook.Sum, want)
	}
	if cw := got[LatencyCreateWork]; cw.Count != 1 || cw.Counts[2] != 1 {
		t.Errorf("create_work latencies: %d observations, buckets %v; want 1 in the 25 ms bucket", cw.Count, cw.Counts)
	}
}
