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
	// Its work unit failed: made again, pending; then the chain is
	// stopped. (A step made again while its chain is stopped is held at
	// once: no creator makes it.)
	newWU := c.WU(0) + "x"
	if ok, err := db.RemakeStep(ctx, c, 0, c.WU(0), newWU, ReasonInputDownload, 0); err != nil || !ok {
		t.Fatalf("remake: %v %v", ok, err)
	}
	if n, err := db.Stop(ctx, u.ID, "g", "z", ""); err != nil || n != 1 {
		t.Fatalf("stop: %d %v", n, err)
	}
	afterPendingRead = func() {
		afterPendingRead = nil
		resumeZ(t, db, u)
	}
	t.Cleanup(func() { afterPendingRead = nil })
	if ps, err := db.PendingSteps(ctx, 10); err != nil || len(ps) != 0 {
		t.Fatalf("the creator's look while the chain was stopped: %+v %v, want nothing to create", ps, err)
	}
	wantToCreate(t, db, c, newWU, "after a resume during the creator's look")
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
		resumeZ(t, db, u)
	}
	t.Cleanup(func() { afterAbortState = nil })
	if _, wus, err := db.Abort(ctx, u.ID, "g", "z", "test"); err != nil || len(wus) != 0 {
		t.Fatalf("abort: %v %v, want no work unit to cancel", wus, err)
	}
	wantToCreate(t, db, c, newWU, "after a resume between the abort's transactions")
}

// TestAbortSentAgainCancelsWhatTheFirstLeft: an -abort whose answer was
// lost (or answered 503 outcome_unknown after its state was committed) is
// sent again by the clients, as safe to repeat; the chains are aborted
// already, and the second abort must still name their work units in BOINC
// to cancel: before, it named none, and they ran to the end on the
// volunteers for nothing.
func TestAbortSentAgainCancelsWhatTheFirstLeft(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	cs, err := db.CreateChains(ctx, u, []NewChain{batchChain("g", "z", md5n(1))})
	if err != nil {
		t.Fatal(err)
	}
	wu := cs[0].WU(0)
	if err := db.SetStepState(ctx, []string{wu}, StateQueued); err != nil {
		t.Fatal(err)
	}
	if chains, wus, err := db.Abort(ctx, u.ID, "g", "z", "test"); err != nil || len(chains) != 1 || len(wus) != 1 || wus[0] != wu {
		t.Fatalf("abort: %d chains, %v, %v; want 1 chain and %s to cancel", len(chains), wus, err, wu)
	}
	// The server went away before the work units were cancelled; the
	// client sends the abort again.
	chains, wus, err := db.Abort(ctx, u.ID, "g", "z", "test")
	if err != nil || len(chains) != 0 || len(wus) != 1 || wus[0] != wu {
		t.Fatalf("abort sent again: %d chains, %v, %v; want no chain aborted anew and %s to cancel", len(chains), wus, err, wu)
	}
}

// resumeZ resumes chain g/z of u, which must be resumed.
func resumeZ(t *testing.T, db *DB, u User) {
	t.Helper()
	done, _, err := db.Resume(context.Background(), u.ID, "g", "z", func(c Chain, step int) string { return c.WU(step) + "r" }, nil)
	if err != nil || len(done) != 1 {
		t.Errorf("resume: %v %v", done, err)
	}
}

// wantToCreate checks that step 0 of c, work unit wu, is the one step the
// creator is to make.
func wantToCreate(t *testing.T, db *DB, c Chain, wu, when string) {
	t.Helper()
	ctx := context.Background()
	ps, err := db.PendingSteps(ctx, 10)
	if err != nil || len(ps) != 1 || ps[0].Step.WU != wu {
		var state string
		db.queryRow(ctx, `SELECT state FROM steps WHERE chain_id = ? AND step = 0`, c.ID).Scan(&state)
		t.Fatalf("%s: %+v %v (step 0 %s), want step 0 (%s) to create", when, ps, err, state, wu)
	}
}
