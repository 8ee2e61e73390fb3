package store

import (
	"context"
	"testing"
)

// TestResumeDuringPendingReadIsNotHeld: a -resume that lands between the
// creator's read of the pending steps (the chain stopped) and its holding
// of them leaves the step pending, to be created: held, the chain ran on
// with no work unit ever made (seen in TestStoppedChainDownloadErrorWaitsForResume
// at load: running four minutes, its step held).
func TestResumeDuringPendingReadIsNotHeld(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	cs, err := db.CreateChains(ctx, u, []NewChain{batchChain("g", "z", md5n(1))})
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0]
	if n, err := db.Stop(ctx, u.ID, "g", "z", ""); err != nil || n != 1 {
		t.Fatalf("stop: %d %v", n, err)
	}
	// Its work unit failed while it was stopped: made again, pending.
	newWU := c.WU(0) + "x"
	if ok, err := db.RemakeStep(ctx, c, 0, c.WU(0), newWU, ReasonInputDownload, 0); err != nil || !ok {
		t.Fatalf("remake: %v %v", ok, err)
	}
	afterPendingRead = func() {
		afterPendingRead = nil
		done, _, err := db.Resume(ctx, u.ID, "g", "z", func(c Chain, step int) string { return c.WU(step) + "r" }, nil)
		if err != nil || len(done) != 1 {
			t.Errorf("resume: %v %v", done, err)
		}
	}
	t.Cleanup(func() { afterPendingRead = nil })
	if ps, err := db.PendingSteps(ctx, 10); err != nil || len(ps) != 0 {
		t.Fatalf("the creator's look while the chain was stopped: %+v %v, want nothing to create", ps, err)
	}
	ps, err := db.PendingSteps(ctx, 10)
	if err != nil || len(ps) != 1 || ps[0].Step.WU != newWU {
		var state string
		db.queryRow(ctx, `SELECT state FROM steps WHERE chain_id = ? AND step = 0`, c.ID).Scan(&state)
		t.Fatalf("after a resume during the creator's look: %+v %v (step 0 %s), want step 0 (%s) to create", ps, err, state, newWU)
	}
}

// TestResumeBetweenAbortsTransactionsIsNotHeld: a -resume between the
// abort's change of state and its holding of the pending steps runs the
// chain again with its step to be made, neither held nor cancelled.
func TestResumeBetweenAbortsTransactionsIsNotHeld(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	cs, err := db.CreateChains(ctx, u, []NewChain{batchChain("g", "z", md5n(1))})
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0]
	newWU := c.WU(0) + "x"
	if ok, err := db.RetryStep(ctx, c, 0, c.WU(0), newWU, "failed", 0); err != nil || !ok {
		t.Fatalf("retry: %v %v", ok, err)
	}
	afterAbortState = func() {
		afterAbortState = nil
		done, _, err := db.Resume(ctx, u.ID, "g", "z", func(c Chain, step int) string { return c.WU(step) + "r" }, nil)
		if err != nil || len(done) != 1 {
			t.Errorf("resume: %v %v", done, err)
		}
	}
	t.Cleanup(func() { afterAbortState = nil })
	if _, wus, err := db.Abort(ctx, u.ID, "g", "z", "test"); err != nil || len(wus) != 0 {
		t.Fatalf("abort: %v %v, want no work unit to cancel", wus, err)
	}
	ps, err := db.PendingSteps(ctx, 10)
	if err != nil || len(ps) != 1 || ps[0].Step.WU != newWU {
		var state string
		db.queryRow(ctx, `SELECT state FROM steps WHERE chain_id = ? AND step = 0`, c.ID).Scan(&state)
		t.Fatalf("after a resume between the abort's transactions: %+v %v (step 0 %s), want step 0 (%s) to create", ps, err, state, newWU)
	}
}
